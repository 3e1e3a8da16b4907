"""The turn clock in the domain (docs/tables.md, "Turn clock"), on plain aggregates: the rules
record ``TurnTimedOut`` for the seat to act only, once a turn; the fold keeps which seats'
turns timed out and how many in a row; the deadline comes from the recorded time of the
event that made the seat the one to act; nothing here reads a clock."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

import pytest

from domain.clock import (
    TURN_SECONDS_MAX,
    check_turn_seconds,
    deadline,
    missed_in_a_row,
    stand_in,
    stand_in_seat,
)
from domain.commands import TimeOut
from domain.deal import Deal
from domain.errors import RuleViolation, SetupError
from domain.legal import legal_command
from domain.state import DealState
from domain.table import Table
from tests.support.games import shuffled_deal


def _time_out(deal: Deal) -> None:
    seat = deal.state.to_act
    assert seat is not None
    deal.execute(seat, TimeOut(deal.version))


def _play_turn(deal: Deal, rng: random.Random) -> None:
    """The seat to act plays until somebody else is to act (or the deal is over)."""
    seat = deal.state.to_act
    while deal.state.to_act == seat and seat is not None:
        deal.execute(seat, legal_command(deal.state, seat, rng))


def test_only_the_seat_to_act_times_out_and_once_a_turn() -> None:
    deal = shuffled_deal()
    assert deal.state.to_act == 1  # the cutter
    with pytest.raises(RuleViolation) as other:
        deal.execute(0, TimeOut(deal.version))
    assert other.value.code == "R-TURN-1"
    with pytest.raises(RuleViolation) as stale:
        deal.execute(1, TimeOut(deal.version - 1))
    assert stale.value.code == "R-CMD-1"
    step = deal.version
    _time_out(deal)
    assert deal.version == step + 1 and deal.state.timed_out == [1]
    event: Any = deal.collect_events()[-1]
    assert (type(event).__name__, event.seat, event.on_step) == ("TurnTimedOut", 1, step)
    with pytest.raises(RuleViolation) as twice:
        _time_out(deal)
    assert twice.value.code == "R-TURN-1"


def test_the_fold_counts_turns_in_a_row_and_the_seat_playing_himself_resets_it() -> None:
    deal, rng = shuffled_deal(), random.Random(4)
    _time_out(deal)  # bob's cut
    deal.execute(1, legal_command(deal.state, 1, rng))  # the cut; then bob plays first
    assert deal.state.timed_out == [] and deal.state.to_act == 1
    assert missed_in_a_row(deal.state, 1) == 1
    _time_out(deal)  # bob's first turn too
    assert missed_in_a_row(deal.state, 1) == 2
    _play_turn(deal, rng)  # the basic bot (here: any legal move) plays it
    assert deal.state.timed_out == [] and deal.state.to_act == 0
    assert missed_in_a_row(deal.state, 1) == 2 and missed_in_a_row(deal.state, 0) == 0
    _play_turn(deal, rng)  # ann plays her turn herself
    if deal.state.to_act == 1:
        _play_turn(deal, rng)  # bob plays his own turn: his count starts again
        assert missed_in_a_row(deal.state, 1) == 0


def test_the_deadline_comes_from_the_event_that_made_the_seat_the_one_to_act() -> None:
    deal, rng = shuffled_deal(), random.Random(6)
    shuffled = deal.turn_since
    assert shuffled is not None
    assert deadline(shuffled, 30, deal.state) == datetime.fromisoformat(shuffled) + timedelta(
        seconds=30
    )
    assert deadline(shuffled, None, deal.state) is None  # no clock
    _play_turn(deal, rng)  # bob cuts: the deal is dealt, ann plays first
    assert deal.state.to_act == 0
    since = deal.turn_since
    assert since is not None and since > shuffled
    deal.execute(0, legal_command(deal.state, 0, rng))  # her draw: still her turn, same clock
    assert deal.state.to_act == 0 and deal.turn_since == since
    _time_out(deal)
    assert deadline(deal.turn_since, 30, deal.state) is None  # the bot is playing it


def test_the_options_bounds_and_the_stand_ins() -> None:
    assert check_turn_seconds(None) is None
    assert check_turn_seconds(60) == 60
    assert check_turn_seconds(1, minimum=1) == 1
    for wrong in (9, TURN_SECONDS_MAX + 1, True, 1.5, "60"):
        with pytest.raises(SetupError):
            check_turn_seconds(wrong)
    state = shuffled_deal().state
    assert stand_in(1) == "bot:basic:1"
    assert stand_in_seat("bot:basic:1", state) == 1
    assert stand_in_seat("bob", state) is None  # a person is no stand-in
    assert stand_in_seat("bot:basic:7", state) is None


def test_old_snapshots_and_old_tables_read_as_without_a_clock() -> None:
    state = shuffled_deal().state.to_dict()
    del state["timed_out"], state["missed"]
    old = DealState.from_dict(state)
    assert old.timed_out == [] and old.missed == [0, 0]
    table = Table(host="ann", entry="classic", players=2, options={}, target=5000)
    assert table.turn_seconds is None
    table.set_turn_clock("ann", 45)
    assert table.turn_seconds == 45
