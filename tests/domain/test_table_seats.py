"""Absent players on the Table and Deal aggregates (docs/tables.md): a leave before the start
frees the seat, during the game the basic bot stands in until the player takes the seat
back, the host gives a vacant seat, the missed turns hook; refusals change nothing."""

from __future__ import annotations

import pytest

from domain.audit.replay import check_rules
from domain.bot_names import stand_in_name
from domain.errors import Conflict, Forbidden, SetupError
from domain.table import (
    DEFAULT_MISSED_TURNS_LIMIT,
    MISSED_TURNS,
    NOT_SEATED,
    SEAT_AWAY,
    SEAT_NOT_VACANT,
    Table,
)
from tests.support.games import shuffled_deal

AT = "2026-12-02T01:00:00+00:00"


def seated_table(*, start: bool = True) -> Table:
    table = Table(host="ann", entry="classic", players=4, options={}, target=5000)
    for player in ("ann", "bob", "cy", "di"):
        table.join(player)
    if start:
        sides = table.check_can_start("ann")
        table.start(sides=sides, totals=Table.opening_totals(sides), rotation=0)
    return table


def test_a_leave_before_the_start_frees_the_seat() -> None:
    table = seated_table(start=False)
    assert table.leave("bob", AT) == (1, None)
    assert table.seats == ["ann", None, "cy", "di"]
    assert table.join("eve") == 1
    with pytest.raises(Forbidden) as refused:
        table.leave("bob", AT)
    assert refused.value.code == NOT_SEATED


def test_during_the_game_the_bot_stands_in_until_the_player_comes_back() -> None:
    table = seated_table()
    seat, by = table.leave("bob", AT)
    assert (seat, by) == (1, stand_in_name(1, "bob")) and by == "bot:basic:1:for:bob"
    assert table.seats[1] == "bob" and table.away(1) and table.away_seat("bob") == 1
    assert table.players_now() == ["ann", by, "cy", "di"]
    assert table.playing[1] == {"player": by, "reason": "left", "since": AT}
    with pytest.raises(Conflict) as refused:
        table.leave("bob", AT)
    assert refused.value.code == SEAT_AWAY
    assert table.take_back("bob", "later") == 1
    assert table.players_now() == ["ann", "bob", "cy", "di"] and not table.away(1)
    kinds = [type(e).__name__ for e in table.collect_events()]
    assert kinds[-3:] == ["SeatLeft", "SeatTakenOver", "SeatTakenBack"]


def test_the_host_gives_a_vacant_seat_only() -> None:
    table = seated_table()
    with pytest.raises(Conflict) as refused:
        table.give_seat("ann", 2, "eve", AT)  # cy plays it
    assert refused.value.code == SEAT_NOT_VACANT
    table.leave("bob", AT)
    with pytest.raises(Forbidden):
        table.give_seat("cy", 1, "eve", AT)  # not the host
    with pytest.raises(SetupError):
        table.give_seat("ann", 1, "cy", AT)  # seated already
    version = table.version
    assert table.give_seat("ann", 1, "eve", AT) == "bob"
    assert table.version == version + 1
    assert table.seats[1] == "eve" and table.players_now()[1] == "eve" and not table.away(1)
    assert table.seat_of("bob") is None and not table.participant("bob")
    with pytest.raises(SetupError):
        table.take_back("bob", AT)  # it is not his any more


def test_the_missed_turns_hook_and_its_limit() -> None:
    table = seated_table(start=False)
    assert table.missed_turns_limit == DEFAULT_MISSED_TURNS_LIMIT
    with pytest.raises(SetupError):
        table.set_missed_turns_limit("ann", 11)
    with pytest.raises(Forbidden):
        table.set_missed_turns_limit("bob", 3)
    table.set_missed_turns_limit("ann", 3)
    assert table.missed_turns_limit == 3
    with pytest.raises(SetupError):
        table.take_over(2, MISSED_TURNS, AT)  # not in play yet
    sides = table.check_can_start("ann")
    table.start(sides=sides, totals=Table.opening_totals(sides), rotation=0)
    with pytest.raises(SetupError):
        table.set_missed_turns_limit("ann", 1)  # before the start only
    assert table.take_over(2, MISSED_TURNS, AT) == "bot:basic:2:for:cy"
    assert table.playing[2]["reason"] == MISSED_TURNS
    assert table.take_back("cy", AT) == 2


def test_a_bots_seat_has_nobody_to_stand_in_for() -> None:
    table = Table(host="ann", entry="classic", players=2, options={}, target=5000)
    table.join("ann")
    table.seat_bot("ann", "random", 1)
    sides = table.check_can_start("ann")
    table.start(sides=sides, totals=Table.opening_totals(sides), rotation=0)
    with pytest.raises(SetupError):
        table.take_over(1, MISSED_TURNS, AT)


def test_a_deal_records_who_plays_a_seat_and_the_audit_accepts_it() -> None:
    deal = shuffled_deal()
    deal.change_player(1, "bot:basic:1:for:bob", "left")
    assert deal.state.player_ids == ["ann", "bot:basic:1:for:bob"]
    with pytest.raises(ValueError):
        deal.change_player(1, "bot:basic:1:for:bob", "left")  # no change
    deal.change_player(1, "bob", "taken_back")
    assert deal.state.player_ids == ["ann", "bob"]
    mismatch, _commands = check_rules(deal.collect_events())
    assert mismatch is None
