"""The scripted deals of ``tests/web/deals.py`` play as written, over real HTTP (the ASGI app
with stacked decks allowed): each scripted command is offered by the move menu to the seat
the script names, is accepted, records the events the script says, and the deal ends with
the script's hands and score breakdown. Not a browser test: fast."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import make_client  # noqa: F401 (the fixture, shared, not copied)
from tests.web.deals import ScriptedDeal, classic_four, play_step, start_table


@pytest.mark.parametrize("cut", [1, 54, 107])
def test_the_short_classic_deal_plays_as_scripted(
    make_client: Callable[..., TestClient],  # noqa: F811
    cut: int,
) -> None:
    deal: ScriptedDeal = classic_four(cut)
    assert len(deal.deck) == 108 and len(set(deal.deck)) == 108
    http = make_client(allow_stacked_decks=True)
    game = start_table(http, deal)
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
