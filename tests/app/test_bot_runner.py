"""The bot process's runner (``app.bot_runner``, docs/bots.md) in process, on the in-memory
store: bots seated by the host play a whole deal of every entry through the application's
command path, with sequence numbers, and the audit finds every deal clean."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest

from app.application import CanastaApp
from app.bot_runner import BotRunner
from app.routes.audit import deal_report
from app.settings import Settings, eventsourcing_env
from domain.legal import seat_to_act
from domain.table import bot_name
from tests.support.bots import bot_table, deal_over, wait_for

ENTRIES = [("classic", 4), ("extra_six", 6), ("modern_american", 4), ("ponytail", 4)]


@pytest.fixture
def canasta(tmp_path: Path) -> Iterator[tuple[CanastaApp, Settings]]:
    settings = Settings(database_url="memory", data_dir=tmp_path)
    app = CanastaApp(env=eventsourcing_env(settings))
    yield app, settings
    app.close()


@pytest.mark.parametrize(("entry", "players"), ENTRIES)
def test_four_bots_play_a_whole_deal_of_every_entry(
    canasta: tuple[CanastaApp, Settings], entry: str, players: int
) -> None:
    app, settings = canasta
    table_id = bot_table(app, entry, players)
    deal_id = UUID(app.get_table(table_id).deals[-1])
    runner = BotRunner(app, settings, poll_interval=0.02)
    runner.start()
    try:
        wait_for(lambda: deal_over(app, deal_id), 120, f"the bots did not finish the {entry} deal")
    finally:
        runner.stop()
    deal = app.get_deal(deal_id)
    assert deal.state.scores is not None  # scored, and recorded on the table
    assert app.get_table(table_id).deal_scores
    report = deal_report(app, deal_id)
    assert report.ok, report.to_dict()
    # Every bot's commands went through its own command log, one sequence number each.
    logged = sum(app.last_seq(table_id, bot_name("basic", s)) for s in range(players))
    assert logged == runner.moves
    assert runner.moves > 0


def test_a_bot_does_not_play_a_persons_seat(canasta: tuple[CanastaApp, Settings]) -> None:
    app, settings = canasta
    table_id, deal_id = app.start_practice("ann", "classic", 4, "basic")
    assert app.get_table(table_id).seats == ["ann", "bot:basic:1", "bot:basic:2", "bot:basic:3"]
    runner = BotRunner(app, settings, poll_interval=0.02)
    runner.start()
    try:
        # The bots play until it is ann's turn (she may be the first to act).
        wait_for(lambda: _to_act(app, deal_id) == "ann", 30, "the bots never let ann play")
        version, moves = app.get_deal(deal_id).version, runner.moves
        time.sleep(0.5)  # ten of the runner's rounds
        assert (app.get_deal(deal_id).version, runner.moves) == (version, moves)
    finally:
        runner.stop()


def _to_act(app: CanastaApp, deal_id: UUID) -> str:
    state = app.get_deal(deal_id).state
    seat = seat_to_act(state)
    assert seat is not None
    return state.player_ids[seat]
