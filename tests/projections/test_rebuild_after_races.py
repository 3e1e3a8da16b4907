"""PostgreSQL: after several games played at once, each with two clients racing for every
step (R-CMD-1), while two servers' read models follow the log (one elected to run the
projections, the other catching up in its callers' threads), the read models equal what the
events say and a rebuild from scratch gives them back row for row."""

from __future__ import annotations

import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any
from uuid import UUID

import pytest

from app.application import CanastaApp
from app.autoplay import HOST, SeededRandom, new_table
from app.infra.projection_runner import ReadModels
from app.routes.audit import table_report
from app.settings import Settings, eventsourcing_env
from domain.errors import Conflict
from domain.legal import legal_command, seat_to_act
from domain.table import PLAYING
from tests.projections.helpers import (
    assert_read_models_match,
    row_counts,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.postgres

#: (entry, players) of the games played at once; two deals each unless one ends the game.
GAMES = [
    ("classic", 4),
    ("classic", 2),
    ("classic", 5),
    ("extra_six", 6),
    ("modern_american", 4),
    ("ponytail", 4),
]
DEALS = 2
RACERS = 2


def race_deal(app: CanastaApp, deal_id: UUID, seed: int) -> tuple[int, int]:
    """One racer: at every step, send a random legal command for the seat to act, based on
    the deal as read just before; a racer that lost the step gets a conflict (R-CMD-1) and
    tries again. Returns how many of its commands were applied and refused."""
    rng = random.Random(seed)
    applied = refused = 0
    while True:
        deal = app.get_deal(deal_id)
        seat = seat_to_act(deal.state)
        if seat is None:
            return applied, refused
        command = legal_command(deal.state, seat, rng)
        try:
            app.act(deal_id, deal.state.player_ids[seat], command, expected_step=deal.version)
        except Conflict:
            refused += 1
            continue
        applied += 1


def play_raced_game(app: CanastaApp, index: int) -> tuple[UUID, int, int]:
    """A game whose every deal is raced by ``RACERS`` clients; stopped after ``DEALS``
    deals unless it ended before. Returns the table id and the commands applied and
    refused as stale."""
    entry, players = GAMES[index]
    applied = refused = 0
    table_id = new_table(app, entry, players, always_frozen=index % 2 == 1)
    deal_id = app.start_game(table_id, HOST)
    for number in range(1, DEALS + 1):
        with ThreadPoolExecutor(RACERS) as pool:
            racers = [
                pool.submit(race_deal, app, deal_id, 1000 * index + 10 * number + racer)
                for racer in range(RACERS)
            ]
            for racer in racers:
                won, lost = racer.result()
                applied, refused = applied + won, refused + lost
        if app.get_table(table_id).status != PLAYING:
            break
        if number == DEALS:
            app.stop_game(table_id, HOST)
        else:
            deal_id = app.start_next_deal(table_id, HOST)
    return table_id, applied, refused


def in_threads(tasks: list[Callable[[], Any]]) -> list[Any]:
    with ThreadPoolExecutor(len(tasks)) as pool:
        return [future.result() for future in [pool.submit(task) for task in tasks]]


def test_projections_equal_a_rebuild_from_scratch_after_concurrent_games_r_cmd_1(
    migrated_postgres_url: str,
) -> None:
    settings = Settings(database_url=migrated_postgres_url, postgres_pool_size=2)
    # One application plays every game (as one server would), with few connections: the
    # racing threads wait for one in turn. The shared test cluster has 100 in all.
    players = CanastaApp(
        {
            **eventsourcing_env(settings.model_copy(update={"postgres_pool_size": 6})),
            "CANASTA_POSTGRES_MAX_OVERFLOW": "2",
        }
    )
    players.random = SeededRandom(random.Random(100))
    reader = CanastaApp(eventsourcing_env(settings))
    try:
        with (
            ReadModels(settings, lease_retry_seconds=0.1) as one,
            ReadModels(settings, lease_retry_seconds=0.1) as two,
        ):
            one.start()
            two.start()  # two servers on the same tables: one leads
            played = in_threads([partial(play_raced_game, players, i) for i in range(len(GAMES))])
            table_ids = [table_id for table_id, _, _ in played]
            assert sum(refused for _, _, refused in played) > 0  # the clients did race
            # The races left consistent histories: the audit re-decides the stored commands
            # through the rules and finds the hash chains intact (one command per step).
            for table_id, applied, _ in played:
                assert applied > 0
                assert reader.get_table(table_id).status in ("stopped", "finished")
                report = table_report(reader, table_id)
                assert report.ok, report.problems
            one.wait_until(timeout=30)
            two.wait_until(timeout=30)
            assert [one.is_leading, two.is_leading].count(True) == 1
            assert_read_models_match(reader, one, table_ids)
            live = one.dump()
            assert two.dump() == live
            positions = one.positions()
            assert all(row_counts(live).values())

            # A rebuild is maintenance: the other server stops first.
            two.stop()
            one.rebuild()
            assert one.is_running
            wait_for(lambda: one.is_leading, what="for the lease after the rebuild")
            assert one.dump() == live
            assert one.positions() == positions
            assert_read_models_match(reader, one, table_ids)
    finally:
        players.close()
        reader.close()
