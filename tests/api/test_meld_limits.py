"""The move menu's ``meld_limits`` (docs/api.md, "What a meld may hold") are the rules' own:
for every entry (and ``always_frozen``) the menu carries exactly what ``Variant.meld_limits``
answers for the requester's side, the limits the rules check every meld with; in
``modern_american`` they follow the table (the initial meld made, a wild-card meld open).
Real HTTP through the app (``TestClient``), an in-memory store."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from typing import Any
from uuid import UUID

import pytest
from fastapi.testclient import TestClient

from domain import commands as c
from domain.variants import get_variant
from tests.support.http import Game, open_table
from tests.web.deals import deck_for

#: Seat 0's hand in the modern_american deal below (seat 3 deals, seat 0 cuts and plays first).
HAND = [
    "7C/1",
    "7D/1",
    "7H/1",
    "7S/1",
    "KC/1",
    "KD/1",
    "KH/1",
    "AC/1",
    "AD/1",
    "AH/1",
    "2C/1",
    "2D/1",
    "BJ/1",
]
CUT = 60


def limits_of(game: Game, name: str) -> dict[str, Any]:
    menu = game.http.get(f"/deals/{game.deal_id}/moves", headers=game.headers[name])
    assert menu.status_code == 200, menu.text
    limits: dict[str, Any] = menu.json()["meld_limits"]
    return limits


def domain_limits(client: TestClient, game: Game, seat: int) -> dict[str, Any]:
    """What the rules' ``Variant.meld_limits`` answers for ``seat``'s side now, as JSON."""
    state = client.app.state.canasta.get_deal(UUID(game.deal_id)).state  # type: ignore[attr-defined]
    side = state.side_of[seat]
    limits = get_variant(state.variant).meld_limits(state, side, not state.opened[side])
    as_json: dict[str, Any] = json.loads(json.dumps(asdict(limits)))
    return as_json


@pytest.mark.parametrize(
    ("entry", "players", "options"),
    [
        ("classic", 4, {}),
        ("classic", 2, {"always_frozen": True}),
        ("extra_six", 6, {}),
        ("ponytail", 4, {}),
        ("modern_american", 4, {}),
    ],
)
def test_the_menu_carries_the_entrys_own_meld_limits(
    client: TestClient, entry: str, players: int, options: dict[str, bool]
) -> None:
    names = [f"p{entry[:3]}{i}" for i in range(players)]
    teams = [[0, 2, 4], [1, 3, 5]] if entry == "extra_six" else None  # the host chooses them
    table = {"options": options} if options else None
    game = open_table(client, names, entry=entry, teams=teams, table=table)
    for seat, name in enumerate(names):
        assert limits_of(game, name) == domain_limits(client, game, seat), (entry, seat)
    limits = limits_of(game, names[0])
    variant = get_variant(entry)
    assert limits["max_wilds"] == variant.max_wilds and limits["max_cards"] == variant.meld_cap
    assert limits["wild_melds"] is variant.wild_melds


def test_modern_american_limits_follow_the_initial_meld_and_the_wild_card_meld(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(allow_stacked_decks=True)
    names = ["mia", "ned", "ola", "pia"]
    game = open_table(client, names, entry="modern_american", start=False)
    game.start({"dealer": 3, "deck": deck_for("modern_american", 4, 3, CUT, {0: HAND}, [])})
    before = limits_of(game, "mia")
    assert [(w["rule"], w["ranks"], w["naturals"]) for w in before["wild_limits"]] == [
        ("R-MA-MELD-5", ["7"], None)
    ]
    assert (before["max_wilds"], before["max_cards"], before["wilds_outnumbered"]) == (2, 7, False)
    assert game.send("mia", c.Cut(n=CUT)).status_code == 200
    assert game.send("mia", c.Draw()).status_code == 200
    opening = c.Meld(
        melds=(
            c.MeldSpec(cards=("2C/1", "2D/1", "BJ/1"), rank="W"),
            c.MeldSpec(cards=("AC/1", "AD/1", "AH/1"), rank="A"),
        )
    )
    answer = game.send("mia", opening)
    assert answer.status_code == 200, answer.text
    for seat, name in enumerate(names):
        assert limits_of(game, name) == domain_limits(client, game, seat), seat
    after = limits_of(game, "ola")  # mia's partner: the same side
    assert [(w["rule"], w["naturals"]) for w in after["wild_limits"]] == [
        ("R-MA-MELD-5", None),  # sevens
        ("R-MA-MELD-5", None),  # aces, after the initial meld
        ("R-MA-MELD-3", 5),  # five naturals
        ("R-MA-MELD-4", None),  # the side's wild-card meld is incomplete
    ]
    assert after["wild_limits"][1]["ranks"] == ["A"]
    assert limits_of(game, "ned") == before  # the other side has not melded


def test_the_openapi_schema_documents_meld_limits(client: TestClient) -> None:
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    assert "meld_limits" in schemas["MovesOut"]["required"]
    fields = schemas["MeldLimitsOut"]["properties"]
    assert {"max_wilds", "max_cards", "wilds_outnumbered", "wild_limits"} <= set(fields)
    assert set(schemas["WildLimitOut"]["properties"]) == {
        "rule",
        "ranks",
        "naturals",
        "key",
        "message",
    }
