"""Absent players through the application service on the in-memory store (docs/tables.md):
the turn clock's hook (``take_over_seat`` with ``missed_turns``) hands a seat to the basic
bot, which the bot runner then plays; a deal opened while a player is away seats the bot
from its start; a leave and the leaver's own command on the same step: exactly one wins;
the table's stream carries every change of who plays a seat."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest

from app.application import CanastaApp, Expected
from app.autoplay import SeededRandom
from app.bot_runner import BotRunner
from app.command_io import submission
from app.routes.audit import deal_report, stored_events, table_report
from app.schemas import CommandIn, command_body
from app.services.seats import SEAT_NOT_YOURS
from app.settings import Settings, eventsourcing_env
from domain.audit import audit_table, kind_of
from domain.bot_names import stand_in_name
from domain.errors import Forbidden
from domain.legal import legal_command, seat_to_act
from domain.table import MISSED_TURNS
from tests.support.games import play_commands, play_to_end, seated_table
from tests.support.waiting import wait_for

PEOPLE = ("ann", "bob", "cy", "di")


@pytest.fixture
def canasta(tmp_path: Path) -> Iterator[tuple[CanastaApp, Settings]]:
    settings = Settings(database_url="memory", data_dir=tmp_path)
    # The server's chance is seeded: every run plays the same deals (the tests below need the
    # first deal not to end the game, and the bot's seat to have turns).
    app = CanastaApp(env=eventsourcing_env(settings), random=SeededRandom(random.Random("absent")))
    yield app, settings
    app.close()


def started(app: CanastaApp) -> tuple[UUID, UUID]:
    table_id = seated_table(app, PEOPLE)
    return table_id, app.start_game(table_id, "ann")


def test_missed_turns_hand_the_seat_to_the_bot_which_the_runner_plays(
    canasta: tuple[CanastaApp, Settings],
) -> None:
    app, settings = canasta
    table_id, deal_id = started(app)
    rng = random.Random(2)
    deal = play_commands(app, deal_id, rng, 3)
    seat = seat_to_act(deal.state)
    assert seat is not None
    stand_in = app.take_over_seat(table_id, seat, MISSED_TURNS)  # the turn clock's call
    assert stand_in == stand_in_name(seat, PEOPLE[seat])
    table = app.get_table(table_id)
    assert table.away(seat) and table.playing[seat]["reason"] == MISSED_TURNS
    step = app.get_deal(deal_id).version
    runner = BotRunner(app, settings, poll_interval=0.02)
    runner.start()
    try:  # the runner finds the table (no bot was seated there) and plays the seat
        wait_for(lambda: app.get_deal(deal_id).version > step, 10, "the bot did not move")
    finally:
        runner.stop()
    assert app.last_seq(table_id, stand_in) >= 1  # its own command log
    assert app.last_seq(table_id, PEOPLE[seat]) == 0
    assert deal_report(app, deal_id).ok
    assert table_report(app, table_id).ok


def test_a_deal_opened_while_a_player_is_away_seats_the_bot(
    canasta: tuple[CanastaApp, Settings],
) -> None:
    app, _settings = canasta
    table_id, deal_id = started(app)
    app.leave_table(table_id, "bob")
    rng = random.Random(4)
    deal = play_to_end(app, deal_id, rng)  # the bot's seat too, under its name
    assert deal.state.player_ids[1] == stand_in_name(1, "bob")
    assert deal_report(app, deal_id).ok
    assert app.get_table(table_id).status == "playing"
    second = app.start_next_deal(table_id, "ann")
    assert app.get_deal(second).state.player_ids == ["ann", stand_in_name(1, "bob"), "cy", "di"]
    assert app.take_seat_back(table_id, "bob") == 1
    assert app.get_deal(second).state.player_ids[1] == "bob"
    # The table's audit finds each deal seated as the table says, and each deal's changes of
    # player the table's own; a deal's history without its change is a problem.
    assert table_report(app, table_id).ok, table_report(app, table_id).to_dict()
    table_events, _ = stored_events(app, table_id)
    deals = {
        str(e.deal_id): stored_events(app, UUID(str(e.deal_id)))[0]
        for e in table_events
        if kind_of(e) == "DealOpened"
    }
    deals[str(second)] = [e for e in deals[str(second)] if kind_of(e) != "SeatPlayerChanged"]
    forged = audit_table(str(table_id), table_events, deals)
    assert any("who plays a seat" in problem for problem in forged.problems)


def test_a_leave_and_the_leavers_command_whichever_is_recorded_first_decides(
    canasta: tuple[CanastaApp, Settings],
) -> None:
    app, _settings = canasta
    for leave_first in (True, False):
        table_id, deal_id = started(app)
        deal = play_commands(app, deal_id, random.Random(6), 4)
        seat = seat_to_act(deal.state)
        assert seat is not None
        player = deal.state.player_ids[seat]
        command = legal_command(deal.state, seat, random.Random(1))
        body = CommandIn.model_validate(
            {
                "seq": 1,
                "expect": {
                    k: str(v) if k == "game" else v for k, v in Expected.now(deal).__dict__.items()
                },
                "command": command_body(command),
            }
        )
        if leave_first:
            app.leave_table(table_id, player)
            with pytest.raises(Forbidden) as refused:
                app.submit(*submission(deal_id, player, body))
            assert refused.value.code == SEAT_NOT_YOURS
            assert app.last_seq(table_id, player) == 0  # nothing recorded
        else:
            assert app.submit(*submission(deal_id, player, body)).status == 200
            app.leave_table(table_id, player)  # decided on the deal as it is now
            assert app.last_seq(table_id, player) == 1
        assert app.get_table(table_id).away(seat)
        assert deal_report(app, deal_id).ok
