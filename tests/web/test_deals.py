"""The scripted deals of ``tests/web/deals.py`` play as written, over real HTTP (the ASGI app
with stacked decks allowed): each scripted command is offered by the move menu to the seat
the script names, is accepted, records the events the script says, and the deal ends with
the script's hands and score breakdown. Not a browser test: fast."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from domain.cards import CARDS
from tests.api.conftest import make_client  # noqa: F401 (the fixture, shared, not copied)
from tests.support.http import Game, open_table
from tests.web.deals import ScriptedDeal, Step, classic_four


def shape(body: dict[str, Any]) -> Any:
    """A command body with every card replaced by its rank (the menu lists one per shape)."""
    out: dict[str, Any] = {}
    for key, value in body.items():
        if key == "melds":
            out[key] = [
                (m["rank"], sorted(c if c == "TOP" else CARDS[c].rank for c in m["cards"]))
                for m in value
            ]
        elif key in ("discard", "card") and value is not None:
            out[key] = CARDS[value].rank
        else:
            out[key] = value
    return out


def play_step(http: TestClient, game: Game, step: Step) -> dict[str, Any]:
    """Checks the menu offers the step's command to its seat, then sends it (with the
    menu's ``expect`` and ``next_seq``); returns the events it recorded (spectator's view)."""
    name = game.names[step.seat]
    headers = game.headers[name]
    menu = http.get(f"/deals/{game.deal_id}/moves", headers=headers).json()
    assert menu["moves"], f"{step.move}: the menu offers seat {step.seat} nothing"
    assert step.command in menu["moves"], (
        f"{step.move}: {step.command} is not in the menu {menu['moves']}"
    )
    assert shape(step.command) in [shape(m) for m in menu["moves"]]
    for seat, other in enumerate(game.names):  # nobody else may move now
        if seat != step.seat:
            others = http.get(f"/deals/{game.deal_id}/moves", headers=game.headers[other])
            assert others.json()["moves"] == [], f"{step.move}: seat {seat} may move too"
    before = menu["step"]
    body = {"seq": menu["next_seq"], "expect": menu["expect"], "command": step.command}
    answer = http.post(f"/deals/{game.deal_id}/commands", json=body, headers=headers)
    assert answer.status_code == 200, f"{step.move}: {answer.text}"
    events: list[dict[str, Any]] = http.get(
        f"/deals/{game.deal_id}/events", params={"after": before}
    ).json()
    assert tuple(e["kind"] for e in events) == step.events, step.move
    return {"events": events}


@pytest.mark.parametrize("cut", [1, 54, 107])
def test_the_short_classic_deal_plays_as_scripted(
    make_client: Callable[..., TestClient],  # noqa: F811
    cut: int,
) -> None:
    deal: ScriptedDeal = classic_four(cut)
    assert len(deal.deck) == 108 and len(set(deal.deck)) == 108
    http = make_client(allow_stacked_decks=True)
    game = open_table(http, ["ann", "bob", "cyd", "dee"], start=False)
    game.start(deal.start_body)
    view = http.get(f"/deals/{game.deal_id}").json()
    assert (view["phase"], view["dealer"], view["cutter"]) == ("cut", deal.dealer, deal.cutter)
    assert view["sides"] == {"0": "A", "1": "B", "2": "A", "3": "B"}

    for index, step in enumerate(deal.steps):
        play_step(http, game, step)
        if index == 0:  # dealt as scripted: the red three laid, 5♥ turned up
            public = http.get(f"/deals/{game.deal_id}").json()
            assert public["red_threes"] == {"A": ["3H/1"], "B": []}
            assert public["pile"]["top"] == deal.stock[1]
            for seat, name in enumerate(game.names):
                mine = http.get(f"/deals/{game.deal_id}", headers=game.headers[name]).json()
                dealt = [c for c in deal.hands[seat] if c != "3H/1"]
                assert set(dealt) <= set(mine["hand"]) and len(mine["hand"]) == 11

    end = http.get(f"/deals/{game.deal_id}").json()
    assert end["phase"] == "over" and end["went_out"] == 3 and end["concealed"] is True
    for side, expected in deal.scores.items():
        shown = end["scores"][side]
        assert {part: shown[part] for part in expected} == expected, side
    hands = deal.final_hands()
    for seat, name in enumerate(game.names):
        mine = http.get(f"/deals/{game.deal_id}", headers=game.headers[name]).json()
        assert mine["hand"] == hands[seat], f"seat {seat}"
    table = http.get(f"/tables/{game.table}").json()
    assert table["totals"] == {"A": 25, "B": 735}
