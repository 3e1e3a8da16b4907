"""The bot process's runner (``app.bot_runner``, docs/bots.md) in process, on the in-memory
store: bots seated by the host play a whole deal of every entry through the application's
command path, with sequence numbers, and the audit finds every deal clean."""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from app.application import CanastaApp
from app.bot_runner import BotRunner
from app.routes.audit import deal_report
from app.settings import Settings, eventsourcing_env
from domain.bot_names import bot_name
from domain.command_log import CommandLog, command_log_id
from domain.errors import DomainError
from domain.legal import legal_command, seat_to_act
from tests.support.bots import BOT_HOST, bot_table, deal_over
from tests.support.waiting import all_at_once, wait_for

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


def test_the_bots_play_each_deal_the_host_opens(canasta: tuple[CanastaApp, Settings]) -> None:
    app, settings = canasta
    table_id = bot_table(app, "classic", 2, level="random")
    runner = BotRunner(app, settings, poll_interval=0.02)
    runner.start()
    try:
        first = UUID(app.get_table(table_id).deals[-1])
        wait_for(lambda: deal_over(app, first), 60, "deal 1 did not end")
        # The host has no seat, so he is never away: the bots wait for him (docs/tables.md).
        time.sleep(0.3)
        assert len(app.get_table(table_id).deals) == 1 and runner.deals_opened == 0
        second = app.start_next_deal(table_id, BOT_HOST)
        wait_for(lambda: deal_over(app, second), 60, "deal 2 did not end")
    finally:
        runner.stop()
    assert len(app.get_table(table_id).deal_scores) == 2


def test_with_the_host_away_and_nobody_else_the_runner_opens_the_next_deal(
    canasta: tuple[CanastaApp, Settings],
) -> None:
    app, settings = canasta
    table_id, first = app.start_practice("ann", "classic", 2, "random")
    app.leave_table(table_id, "ann")
    runner = BotRunner(app, settings, poll_interval=0.02)
    runner.start()
    try:
        wait_for(lambda: len(app.get_table(table_id).deals) >= 2, 120, "no second deal")
    finally:
        runner.stop()
    assert deal_over(app, first) and runner.deals_opened >= 1
    opened = [e for e in app.events.get(table_id) if type(e).__name__ == "DealOpened"]
    assert [getattr(e, "by", None) for e in opened[:2]] == ["ann", "bot:basic:0:for:ann"]


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


def test_tables_whose_player_walked_away_cost_the_runner_no_reads_and_bounded_memory(
    canasta: tuple[CanastaApp, Settings],
) -> None:
    """Practice tables whose person walked away (his turn, no turn clock: the game waits for
    him for ever) are not read again at every sweep of the bots' runner, and the runner
    remembers at most ``deal_memories`` deals; the player who comes back finds the bots
    playing on at once (docs/operations.md, "The bots")."""
    app, settings = canasta
    tables = [app.start_practice(f"walker{i}", "classic", 2, "random") for i in range(6)]
    runner = BotRunner(app, settings, poll_interval=0.02, sweep_seconds=0.02, deal_memories=3)
    runner.start()
    try:
        for i, (_, deal_id) in enumerate(tables):
            wait_for(partial(_walker_to_act, app, deal_id, f"walker{i}"), 30, "no turn")
        wait_for(lambda: runner.waiting_tables == len(tables), 30, "tables never waiting")
        looked, sweeps = runner.looked, runner.sweeps
        wait_for(lambda: runner.sweeps >= sweeps + 5, 30, "the runner does not sweep")
        assert runner.looked == looked  # five sweeps, and not one table read again
        assert runner.remembered_deals <= 3
        # One of them comes back: his move is seen, and the bot answers it.
        deal_id = tables[0][1]
        rng = random.Random(1)
        while (deal := app.get_deal(deal_id)).state.to_act == 0:  # his turn, to its end
            app.act(deal_id, "walker0", legal_command(deal.state, 0, rng))
        after = deal.version
        wait_for(lambda: app.get_deal(deal_id).version > after, 30, "the bot did not answer")
        assert runner.remembered_deals <= 3
    finally:
        runner.stop()


def _walker_to_act(app: CanastaApp, deal_id: UUID, name: str) -> bool:
    return _to_act(app, deal_id) == name


def _to_act(app: CanastaApp, deal_id: UUID) -> str:
    state = app.get_deal(deal_id).state
    seat = seat_to_act(state)
    assert seat is not None
    return state.player_ids[seat]


# --- two processes' runners on one PostgreSQL database -----------------------------------------


@pytest.fixture
def two_apps(migrated_postgres_url: str) -> Iterator[tuple[list[CanastaApp], Settings]]:
    """Two applications on one PostgreSQL database, as two server processes have."""
    settings = Settings(database_url=migrated_postgres_url, postgres_pool_size=2)
    apps = [CanastaApp(env=eventsourcing_env(settings)) for _ in range(2)]
    yield apps, settings
    for app in apps:
        app.close()


@pytest.mark.postgres
def test_two_runners_on_postgres_one_leads_and_the_other_takes_over(
    two_apps: tuple[list[CanastaApp], Settings],
) -> None:
    apps, settings = two_apps
    runners = [
        BotRunner(app, settings, poll_interval=0.05, lease_retry_seconds=0.1) for app in apps
    ]
    for runner in runners:
        runner.start()
    try:
        wait_for(lambda: any(r.is_leading for r in runners), 10, "nobody took the bots lease")
        leader = next(r for r in runners if r.is_leading)
        other = runners[1 - runners.index(leader)]
        table_id = bot_table(apps[0], "classic", 4)
        deal_id = UUID(apps[0].get_table(table_id).deals[-1])
        wait_for(lambda: leader.moves >= 20, 60, "the leader did not play")
        assert not other.is_leading and other.moves == 0
        leader.stop()  # its lease ends with it: the other takes over and finishes the deal
        wait_for(lambda: other.is_leading, 10, "the other runner did not take over")
        wait_for(lambda: deal_over(apps[1], deal_id), 120, "the deal did not end")
        assert other.moves > 0
    finally:
        for runner in runners:
            runner.stop()
    assert deal_report(apps[1], deal_id).ok


@pytest.mark.postgres
def test_two_runners_playing_one_table_at_once_apply_every_move_once(
    two_apps: tuple[list[CanastaApp], Settings],
) -> None:
    """What a leader that lost its lease without noticing would do: two runners decide and
    submit for the same bots at the same moments. A move decided on a deal that moved is
    refused as stale and decided again; one sent twice under a sequence number gets its first
    answer back. The deal ends as if one runner had played it."""
    apps, settings = two_apps
    table_id = bot_table(apps[0], "classic", 4)
    deal_id = UUID(apps[0].get_table(table_id).deals[-1])
    runners = [BotRunner(app, settings) for app in apps]

    def play(runner: BotRunner) -> None:
        for _ in range(5000):
            if deal_over(runner.canasta, deal_id):
                return
            with contextlib.suppress(DomainError):  # a lost race: looked at again
                runner.play(table_id)

    all_at_once(play, runners, 300)
    assert deal_over(apps[0], deal_id)
    report = deal_report(apps[0], deal_id)
    assert report.ok and report.complete
    accepted = [
        kept
        for seat in range(4)
        for kept in _answers(apps[0], table_id, bot_name("basic", seat))
        if kept["status"] == 200
    ]
    steps = [event["step"] for kept in accepted for event in kept["body"]["events"]]
    assert len(steps) == len(set(steps)) and max(steps) == report.events
    assert sum(r.moves for r in runners) >= len(accepted)  # replays count as moves too
    assert sum(r.retried for r in runners) > 0, "the two runners never raced"


def _answers(app: CanastaApp, table_id: UUID, player: str) -> list[dict[str, Any]]:
    log: CommandLog = app.repository.get(command_log_id(str(table_id), player))
    assert isinstance(log, CommandLog)
    return [kept for seq in range(1, log.last_seq + 1) if (kept := log.answer_for(seq))]
