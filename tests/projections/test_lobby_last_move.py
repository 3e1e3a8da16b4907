"""The lobby's last move of each table (docs/api.md, "The lobby"), on SQLite and PostgreSQL:
given the events of two games, each at a time the test chooses, the lobby's rows.

A table's ``last_move_at`` is its last table event or public event of its current deal; a
deal's event is stored only when it is at least 60 s past the stored time, so a table in play
costs the lobby about one row write a minute, not one a move, and the time shown is at most
a minute behind. The tables in play are listed by it, the latest first. What the process
remembers of the stored times is an optimisation only: a restart or a rebuild gives the same
rows."""

from __future__ import annotations

import dataclasses
import random
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import psycopg
from eventsourcing.persistence import Tracking

from app.application import CanastaApp
from app.autoplay import play_deal
from app.infra.event_log import stored_time
from app.infra.projection_runner import ReadModels
from app.migrations import downgrade, upgrade
from app.settings import Settings
from projections.read_models import DEAL_MOVES, LobbyProjection, topics_of
from projections.view import LOBBY
from tests.projections.helpers import lobby_row
from tests.projections.test_read_models import notifications
from tests.support.games import seated_table
from tests.support.store import LAST_MOVE_GRANULARITY, NOT_MOVES

T0 = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


@contextmanager
def lobby_models(settings: Settings, app: CanastaApp) -> Iterator[ReadModels]:
    """The lobby alone, as a fresh process would run it (it remembers nothing)."""
    rm = ReadModels(settings, app=app, projections=(LobbyProjection,))
    try:
        yield rm
    finally:
        rm.close()


def started(app: CanastaApp, host: str) -> tuple[UUID, UUID]:
    """A two-player classic table of ``host`` and a guest, started: its id and its deal's."""
    table_id = seated_table(app, (host, f"{host}-guest"))
    return table_id, app.start_game(table_id, host)


def timed(app: CanastaApp, schedule: dict[UUID, tuple[float, float]]) -> list[tuple[Any, Tracking]]:
    """Every stored event, in the log's order, at the time the test gives it: per table
    (``schedule[table] = (first, step)``), its events (its own and its deals') ``step``
    seconds apart from ``first``."""
    deals = {
        UUID(deal): table_id for table_id in schedule for deal in app.get_table(table_id).deals
    }
    counts = dict.fromkeys(schedule, 0)
    events = []
    for n in notifications(app):
        event: Any = app.mapper.to_domain_event(n)
        table_id = deals.get(event.originator_id, event.originator_id)
        first, step = schedule[table_id]
        moment = at(first + step * counts[table_id])
        counts[table_id] += 1
        events.append((dataclasses.replace(event, timestamp=moment), Tracking(app.name, n.id)))
    return events


def feed(rm: ReadModels, events: Sequence[tuple[Any, Tracking]], batch: int = 7) -> None:
    """The events to the lobby projection, a few per transaction, as its runner does."""
    worker = rm.workers["lobby"]
    for first in range(0, len(events), batch):
        part = events[first : first + batch]
        with worker.view.batch((part[0][1], part[-1][1])):
            for event, tracking in part:
                worker.projection.process_event(event, tracking)


def last_moves(events: Sequence[tuple[Any, Tracking]], table_id: UUID) -> list[datetime]:
    """The times of a table's moves: its events and those of its deals, the secret ones
    (the shuffle) aside."""
    deal_ids = set()
    moves = []
    for event, _ in events:
        if getattr(event, "table_id", None) == str(table_id):
            deal_ids.add(event.originator_id)
        mine = event.originator_id == table_id or event.originator_id in deal_ids
        if mine and type(event).__name__ not in NOT_MOVES:
            moves.append(event.timestamp)
    return moves


class RowWrites:
    """Counts the UPDATEs of lobby rows (a trigger in the database itself)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        if settings.database_url is None:
            with sqlite3.connect(settings.sqlite_path) as db:
                db.executescript(
                    "CREATE TABLE lobby_row_writes (n INTEGER);"
                    "CREATE TRIGGER lobby_row_written AFTER UPDATE ON tables "
                    "BEGIN INSERT INTO lobby_row_writes VALUES (1); END;"
                )
        else:
            with psycopg.connect(settings.database_url) as db:
                db.execute("CREATE TABLE lobby_row_writes (n integer)")
                db.execute(
                    "CREATE FUNCTION lobby_row_written() RETURNS trigger LANGUAGE plpgsql AS "
                    "$$ BEGIN INSERT INTO lobby_row_writes VALUES (1); RETURN NULL; END $$"
                )
                db.execute(
                    "CREATE TRIGGER lobby_row_written AFTER UPDATE ON tables "
                    "FOR EACH ROW EXECUTE FUNCTION lobby_row_written()"
                )

    def count(self) -> int:
        sql = "SELECT count(*) FROM lobby_row_writes"
        if self.settings.database_url is None:
            with sqlite3.connect(self.settings.sqlite_path) as db:
                return int(db.execute(sql).fetchone()[0])
        with psycopg.connect(self.settings.database_url) as db:
            row = db.execute(sql).fetchone()
            assert row is not None
            return int(row[0])


def two_games(app: CanastaApp) -> tuple[UUID, UUID]:
    """``live`` and ``idle``, two tables in play, ``idle`` created after ``live``; each deal
    played some 30 commands."""
    live, live_deal = started(app, "ann")
    idle, idle_deal = started(app, "cyd")
    play_deal(app, live_deal, random.Random(5), max_commands=30)
    play_deal(app, idle_deal, random.Random(6), max_commands=30)
    return live, idle


def test_the_last_move_is_stored_about_once_a_minute_and_orders_the_tables_in_play(
    settings: Settings, app: CanastaApp
) -> None:
    live, idle = two_games(app)
    # ``idle``'s events come 4 s apart from the start, ``live``'s 20 s apart: ``live`` plays
    # on long after ``idle`` stopped, though it was created first.
    events = timed(app, {live: (0, 20), idle: (1, 4)})
    live_moves, idle_moves = last_moves(events, live), last_moves(events, idle)
    assert idle_moves[-1] < live_moves[-1] - timedelta(minutes=10)
    table_events = [e for e, _ in events if e.originator_id in (live, idle)]
    with lobby_models(settings, app) as rm:
        writes = RowWrites(settings)
        feed(rm, events)
        rows = {table: lobby_row(rm, table) for table in (live, idle)}

        for table, moves in ((live, live_moves), (idle, idle_moves)):
            row = rows[table]
            assert row is not None and row["status"] == "playing"
            shown = datetime.fromisoformat(row["last_move_at"])
            # One of its moves, at most a minute before its last.
            assert shown in moves
            assert moves[-1] - LAST_MOVE_GRANULARITY < shown <= moves[-1]

        # Not a write a move: some 30 commands of each deal, more events still, and each
        # table's row written about once a minute of play (and at each table event).
        deal_events = len(events) - len(table_events)
        minutes = sum((moves[-1] - T0) / timedelta(minutes=1) for moves in (live_moves, idle_moves))
        assert writes.count() <= len(table_events) + minutes + 2 < deal_events / 2

        # In play: by the last move, the latest first, not by creation.
        assert [row["id"] for row in rm.lobby("playing")] == [str(live), str(idle)]
        cut = idle_moves[-1] + timedelta(minutes=5)
        assert [row["id"] for row in rm.lobby("playing", moved_since=cut)] == [str(live)]
        assert [row["id"] for row in rm.lobby("playing", moved_before=cut)] == [str(idle)]


def test_a_restart_and_a_rebuild_store_the_same_times(settings: Settings, app: CanastaApp) -> None:
    """What a process remembers only saves writes: a fresh one (a restart, at every third
    event: it writes again at the first move it sees) ends with the same rows as one
    process, and so does a rebuild from the log."""
    live, idle = two_games(app)
    events = timed(app, {live: (0, 17), idle: (2, 11)})
    with lobby_models(settings, app) as rm:
        feed(rm, events)
        once = rm.dump()[LOBBY]
        rm.rebuild()  # the real events, at their real times
        rm.workers["lobby"].reset()
        feed(rm, events, batch=50)
        assert rm.dump()[LOBBY] == once

    with lobby_models(settings, app) as rm:
        rm.workers["lobby"].reset()
    for first in range(0, len(events), 3):
        with lobby_models(settings, app) as rm:  # knows nothing of what was stored
            feed(rm, events[first : first + 3], batch=3)
    with lobby_models(settings, app) as rm:
        assert rm.dump()[LOBBY] == once


def test_an_older_store_gets_the_column_filled_with_each_tables_last_event(
    settings: Settings, app: CanastaApp
) -> None:
    """Revision 0009 on PostgreSQL (down to 0008 and up again), the SQLite file when it is
    opened: the rows already there get their table's last event (``updated_at``) as its last
    move; a rebuild gives the true one."""
    two_games(app)
    with lobby_models(settings, app) as rm:
        rm.catch_up()
        before = rm.dump()[LOBBY]
    if settings.database_url is None:
        with sqlite3.connect(settings.sqlite_path) as db:  # as the file was before
            db.execute("DROP INDEX tables_last_move_idx")
            db.execute("ALTER TABLE tables DROP COLUMN last_move_at")
    else:
        downgrade(settings.database_url, "0008")
        with psycopg.connect(settings.database_url) as db:
            columns = db.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'tables'"
            ).fetchall()
        assert ("last_move_at",) not in columns
        upgrade(settings.database_url)
    with lobby_models(settings, app) as rm:
        rows = rm.dump()[LOBBY]
        assert [row["last_move_at"] for row in rows] == [row["updated_at"] for row in rows]
        rm.rebuild()
        assert rm.dump()[LOBBY] == before
        assert [r["id"] for r in rm.lobby("playing", moved_since=T0)] == [
            r["table_id"] for r in sorted(before, key=lambda r: r["last_move_at"], reverse=True)
        ]


class EveryEventDecoded(LobbyProjection):
    """The lobby as it was: every deal move decoded to read its time (same name, same rows)."""

    move_topics = frozenset()


def test_the_runner_reads_a_moves_time_without_decoding_it(
    settings: Settings, app: CanastaApp
) -> None:
    """The lobby's runner takes a deal move's time from its stored bytes (``stored_time``)
    and decodes only the table's events; the rows are those of decoding every event."""
    live, idle = two_games(app)
    decoded: list[str] = []
    with lobby_models(settings, app) as rm:
        mapper = rm.workers["lobby"].mapper
        to_domain_event = mapper.to_domain_event

        def counted(stored: Any) -> Any:
            decoded.append(stored.topic)
            return to_domain_event(stored)

        mapper.to_domain_event = counted  # type: ignore[method-assign,assignment]
        try:
            rm.rebuild()
        finally:
            del mapper.to_domain_event
        rows = rm.dump()[LOBBY]
    assert decoded and not set(topics_of(*DEAL_MOVES)) & set(decoded)
    assert {UUID(row["table_id"]) for row in rows} == {live, idle}

    with ReadModels(settings, app=app, projections=(EveryEventDecoded,)) as rm:
        rm.rebuild()
        assert rm.dump()[LOBBY] == rows


def test_a_stored_events_time_is_read_as_decoding_gives_it(app: CanastaApp) -> None:
    two_games(app)
    stored = notifications(app)
    assert len(stored) > 50
    for notification in stored:
        event: Any = app.mapper.to_domain_event(notification)
        assert stored_time(notification.state) == event.timestamp
    assert (
        stored_time(b'{"chain":"x","timestamp":{"_type_":"datetime_iso","_data_":"2026"}}') is None
    )
    assert stored_time(b'{"timestamp":{"_type_":"datetime_iso","_data_":"not a time"}}') is None
