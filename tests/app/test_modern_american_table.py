"""`modern_american` table settings (docs/rules/modern_american.md: R-MA-GAME-1, R-SEAT-1, R-SEAT-3).

What a one-deal scenario file cannot express: the target chosen when the table is created
(8500 by default; 2500, 5000, 7500 or 10000 selectable; nothing else), the absent
`always_frozen` option, the player count, and the game ending once a side reaches *its
table's* target. Everything goes through ``CanastaApp`` on an in-memory store.

The finishing deal is the stacked deal of
tests/scenarios/modern_american/r-ma-game-1_target_8500_reached_ends_the_game.json, rebuilt
with ``app.scenario.build_setup`` and played step by step: side A scores +1070 (a natural
canasta of kings laid straight from the hand, a mixed canasta of queens, going out), side B -185.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from app.application import CanastaApp
from app.scenario import build_command, build_setup
from domain.commands import Cut
from domain.errors import SetupError
from tests.support.games import seated_table

POPO = {"PERSISTENCE_MODULE": "eventsourcing.popo"}
HOST = "host"
PLAYERS = [HOST, "p1", "p2", "p3"]
ENTRY = "modern_american"
SELECTABLE = (2500, 5000, 7500, 10000)
SCENARIO = (
    Path(__file__).parents[1]
    / "scenarios"
    / "modern_american"
    / "r-ma-game-1_target_8500_reached_ends_the_game.json"
)
DEAL_A, DEAL_B = 1070, -185  # that deal's scores (worked through in the folder's README.md)


def new_app(*, stacked: bool = False) -> CanastaApp:
    return CanastaApp(env=POPO, allow_stacked_decks=stacked)


def play_scripted_deal(app: CanastaApp, table_id: UUID, before: dict[str, int]) -> UUID:
    """Start the game with the scenario's stacked deck and ``before`` as the cumulative
    totals, then play the scenario's steps (each must be accepted)."""
    data: dict[str, Any] = json.loads(SCENARIO.read_text(encoding="utf-8"))
    setup = build_setup(data, SCENARIO.name)
    deal_id = app.start_game(
        table_id, HOST, dealer=setup.dealer, scores_before=before, deck=setup.deck
    )
    cutter = app.get_deal(deal_id).state.cutter
    app.act(deal_id, PLAYERS[cutter], Cut(setup.cut))
    for number, step in enumerate(data["steps"], start=1):
        assert step["expect"] == "ok"
        hand = app.get_deal(deal_id).state.hands[step["seat"]]
        command = build_command(step, hand, f"step {number}")
        app.act(deal_id, PLAYERS[step["seat"]], command)
    st = app.get_deal(deal_id).state
    assert st.phase == "over"
    assert {side: b["total"] for side, b in (st.scores or {}).items()} == {
        "A": DEAL_A,
        "B": DEAL_B,
    }
    return deal_id


# --- R-MA-GAME-1, R-SEAT-3: the target ----------------------------------------------------


def test_the_default_target_is_8500_r_ma_game_1() -> None:
    app = new_app()
    assert app.get_table(app.create_table(HOST, ENTRY, 4)).target == 8500
    assert app.get_table(app.create_table(HOST, ENTRY, 4, target=8500)).target == 8500


@pytest.mark.parametrize("target", SELECTABLE)
def test_each_selectable_target_is_accepted_and_kept_r_ma_game_1_r_seat_3(target: int) -> None:
    app = new_app()
    table_id = seated_table(app, PLAYERS, ENTRY, target=target)
    assert app.get_table(table_id).target == target
    app.start_game(table_id, HOST)
    table = app.get_table(table_id)
    assert table.status == "playing" and table.target == target


@pytest.mark.parametrize(
    "target", [0, 1000, 2000, 3000, 5001, 6000, 8000, 9000, 12000, 50000, -2500]
)
def test_any_other_target_is_refused_r_seat_3(target: int) -> None:
    app = new_app()
    with pytest.raises(SetupError) as err:
        app.create_table(HOST, ENTRY, 4, target=target)
    assert err.value.code == "R-SEAT-3"
    # The refusal names the targets the host may choose, not "no other target".
    assert err.value.message == (
        f"modern_american plays to 8500 or 2500, 5000, 7500, 10000, not {target}"
    )


def test_the_target_is_recorded_in_the_tables_first_event_r_seat_3() -> None:
    app = new_app()
    table_id = app.create_table(HOST, ENTRY, 4, target=2500)
    first: Any = next(iter(app.events.get(table_id)))
    assert type(first).__name__ == "Created"
    assert first.target == 2500 and first.entry == ENTRY


# --- the entries: no always_frozen option -----------------------------------------------------------


def test_always_frozen_on_is_refused_r_seat_3() -> None:
    app = new_app()
    with pytest.raises(SetupError) as err:
        app.create_table(HOST, ENTRY, 4, {"always_frozen": True})
    assert err.value.code == "R-SEAT-3"


def test_always_frozen_off_is_accepted_as_no_option_r_seat_3() -> None:
    app = new_app()
    table_id = app.create_table(HOST, ENTRY, 4, {"always_frozen": False})
    assert not app.get_table(table_id).options.get("always_frozen", False)


# --- R-SEAT-1: exactly four players ----------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 5, 6])
def test_only_four_players_r_seat_1(players: int) -> None:
    app = new_app()
    with pytest.raises(SetupError) as err:
        app.create_table(HOST, ENTRY, players)
    assert err.value.code == "R-SEAT-1"


def test_four_players_sit_in_two_fixed_partnerships_r_seat_1() -> None:
    app = new_app()
    table_id = seated_table(app, PLAYERS, ENTRY)
    deal_id = app.start_game(table_id, HOST)
    st = app.get_deal(deal_id).state
    assert st.side_of == ["A", "B", "A", "B"]
    assert st.partners(0) == [2] and st.partners(1) == [3]


# --- R-MA-GAME-1: the game ends when a side reaches its table's target ----------------------


@pytest.mark.parametrize(
    ("target", "before_a", "finished"),
    [
        (None, 7500, True),  # 7500 + 1070 = 8570 >= 8500
        (None, 7400, False),  # 8470 < 8500
        (2500, 1430, True),  # exactly 2500
        (2500, 1400, False),  # 2470
        (5000, 4000, True),  # 5070
        (5000, 3900, False),  # 4970
        (7500, 6500, True),  # 7570
        (7500, 6400, False),  # 7470
        (10000, 9000, True),  # 10070: 8500 would have ended it long before
        (10000, 8900, False),  # 9970, above the default 8500: the game goes on
    ],
)
def test_the_game_ends_when_a_side_reaches_its_tables_target_r_ma_game_1(
    target: int | None, before_a: int, finished: bool
) -> None:
    app = new_app(stacked=True)
    table_id = seated_table(app, PLAYERS, ENTRY, target=target)
    play_scripted_deal(app, table_id, {"A": before_a, "B": 0})
    table = app.get_table(table_id)
    assert table.totals == {"A": before_a + DEAL_A, "B": DEAL_B}
    if finished:
        assert table.status == "finished" and table.winners == ["A"]
        with pytest.raises(SetupError):
            app.start_next_deal(table_id, HOST)
    else:
        assert table.status == "playing" and table.winners is None
        app.start_next_deal(table_id, HOST)  # the game goes on
        assert len(app.get_table(table_id).deals) == 2
