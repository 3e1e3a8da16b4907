"""The service's sign of life, kept in the database (docs/operations.md, "Restarts and
crashes"; docs/tables.md, "Turn clock").

Every process that serves the API writes, every ``beat_seconds``, that the service is alive
now into one row of the store's database (``canasta_liveness``: PostgreSQL, alembic revision
0008; SQLite, created in the same file on first use; the in-memory store keeps it in the
process, which is the whole service). The row says:

- ``alive_at``: the last time a serving process said it was alive;
- ``up_since``: when the service came back after its last outage, that is the first beat
  that found ``alive_at`` older than ``outage_seconds`` (or the first beat ever);
- ``down_since``: the ``alive_at`` that beat found, the last sign of life before that outage
  (null after the first beat ever).

One statement reads and writes the row, so the first of several processes to come back
opens the new period and the others find it open. The bots' leader compares a turn's start
with ``up_since`` (``domain.clock.restart_due``): a person's turn that ran through the outage
gets its full time again, recorded in the deal (``TurnClockRestarted``). A hand-over of the
leader between live processes changes nothing here: the others went on beating.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from psycopg.sql import SQL, Identifier

logger = logging.getLogger(__name__)

#: The table that holds the row (one, ``id`` 1), in the events' database and schema.
TABLE = "canasta_liveness"
#: At most this long between two beats of a serving process.
BEAT_SECONDS = 2.0


@dataclass(frozen=True)
class Alive:
    """The service's record (see the module's docstring)."""

    alive_at: datetime
    up_since: datetime
    down_since: datetime | None

    def out_of_service(self, now: datetime, outage_seconds: float) -> bool:
        """Whether no serving process has said it is alive for longer than an outage takes:
        players cannot move, so no turn may time out."""
        return now - self.alive_at > timedelta(seconds=outage_seconds)


class Liveness(Protocol):
    outage_seconds: float

    def beat(self, now: datetime | None = None) -> Alive:
        """Say the service is alive at ``now`` (the process's clock by default)."""

    def read(self) -> Alive | None:
        """The record, or None if no serving process ever beat."""


def _time(value: Any) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


def _alive(row: Mapping[str, Any] | tuple[Any, ...]) -> Alive:
    at, up, down = (
        (row["alive_at"], row["up_since"], row["down_since"]) if isinstance(row, Mapping) else row
    )
    return Alive(_time(at), _time(up), None if down is None else _time(down))


def _text(moment: datetime) -> str:
    """SQLite keeps times as ISO 8601 text in UTC, always with microseconds, so that they
    compare as text as they compare as times."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


class MemoryLiveness:
    """The in-memory store: the process is the service, alive while it runs."""

    def __init__(self, outage_seconds: float) -> None:
        self.outage_seconds = outage_seconds
        self._alive: Alive | None = None
        self._lock = threading.Lock()

    def beat(self, now: datetime | None = None) -> Alive:
        now = now or datetime.now(UTC)
        with self._lock:
            was = self._alive
            if was is None or was.out_of_service(now, self.outage_seconds):
                self._alive = Alive(now, now, None if was is None else was.alive_at)
            else:
                self._alive = Alive(max(was.alive_at, now), was.up_since, was.down_since)
            return self._alive

    def read(self) -> Alive | None:
        return self._alive


_UPSERT = """
INSERT INTO {table} (id, alive_at, up_since, down_since) VALUES (1, {now}, {now}, NULL)
ON CONFLICT (id) DO UPDATE SET
  down_since = CASE WHEN {table}.alive_at < {stale} THEN {table}.alive_at
               ELSE {table}.down_since END,
  up_since = CASE WHEN {table}.alive_at < {stale} THEN {now} ELSE {table}.up_since END,
  alive_at = {greatest}({table}.alive_at, {now})
RETURNING alive_at, up_since, down_since
"""
_SELECT = "SELECT alive_at, up_since, down_since FROM {table} WHERE id = 1"


class SQLiteLiveness:
    """The row in the SQLite file of the events (the library's datastore)."""

    CREATE = (
        f"CREATE TABLE IF NOT EXISTS {TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), "
        "alive_at TEXT NOT NULL, up_since TEXT NOT NULL, down_since TEXT)"
    )

    def __init__(self, datastore: Any, outage_seconds: float) -> None:
        self.datastore = datastore
        self.outage_seconds = outage_seconds
        self._created = False
        self._upsert = _UPSERT.format(table=TABLE, now=":now", stale=":stale", greatest="max")
        self._select = _SELECT.format(table=TABLE)

    def _ensure_table(self) -> None:
        if not self._created:
            with self.datastore.transaction(commit=True) as cursor:
                cursor.execute(self.CREATE)
            self._created = True

    def beat(self, now: datetime | None = None) -> Alive:
        now = now or datetime.now(UTC)
        stale = now - timedelta(seconds=self.outage_seconds)
        self._ensure_table()
        with self.datastore.transaction(commit=True) as cursor:
            cursor.execute(self._upsert, {"now": _text(now), "stale": _text(stale)})
            return _alive(tuple(cursor.fetchone()))

    def read(self) -> Alive | None:
        self._ensure_table()
        with self.datastore.transaction(commit=False) as cursor:
            cursor.execute(self._select)
            row = cursor.fetchone()
        return None if row is None else _alive(tuple(row))


class PostgresLiveness:
    """The row in the events' schema on PostgreSQL (created by alembic, revision 0008)."""

    def __init__(self, datastore: Any, outage_seconds: float) -> None:
        self.datastore = datastore
        self.outage_seconds = outage_seconds
        table = SQL("{}.{}").format(Identifier(datastore.schema or "public"), Identifier(TABLE))
        self._upsert = SQL(_UPSERT).format(
            table=table, now=SQL("%(now)s"), stale=SQL("%(stale)s"), greatest=SQL("GREATEST")
        )
        self._select = SQL(_SELECT).format(table=table)

    def beat(self, now: datetime | None = None) -> Alive:
        now = now or datetime.now(UTC)
        stale = now - timedelta(seconds=self.outage_seconds)
        with self.datastore.transaction(commit=True) as cursor:
            cursor.execute(self._upsert, {"now": now, "stale": stale})
            row = cursor.fetchone()
        return _alive(row)

    def read(self) -> Alive | None:
        with self.datastore.transaction(commit=False) as cursor:
            cursor.execute(self._select)
            row = cursor.fetchone()
        return None if row is None else _alive(row)


def liveness_for(factory: Any, outage_seconds: float) -> Liveness:
    """The record of the store behind a library ``factory``: PostgreSQL, SQLite, or the
    process itself for the in-memory store."""
    datastore = getattr(factory, "datastore", None)
    module = type(datastore).__module__
    if module == "eventsourcing.postgres":
        return PostgresLiveness(datastore, outage_seconds)
    if module == "eventsourcing.sqlite":
        return SQLiteLiveness(datastore, outage_seconds)
    return MemoryLiveness(outage_seconds)


class Heartbeat:
    """A serving process's beats (``app.main``): one at once, when the server starts and
    before it serves anybody, then every ``interval`` seconds in a thread of their own until
    ``close``. A beat that fails (the database away) is logged and tried again."""

    def __init__(self, liveness: Liveness, interval: float | None = None) -> None:
        self.liveness = liveness
        self.interval = interval or min(BEAT_SECONDS, liveness.outage_seconds / 4)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._failing = False

    def start(self) -> None:
        self.beat()
        self._thread = threading.Thread(target=self._run, name="liveness", daemon=True)
        self._thread.start()

    def beat(self) -> None:
        try:
            alive = self.liveness.beat()
        except Exception as exc:
            if not self._failing:
                logger.warning("liveness: cannot record that the service is alive: %r", exc)
            self._failing = True
            return
        if self._failing:
            logger.info("liveness: recorded again")
        self._failing = False
        if alive.up_since == alive.alive_at and alive.down_since is not None:
            logger.warning(
                "liveness: the service was out of service from %s to %s: the turn clocks "
                "running then start again",
                alive.down_since.isoformat(),
                alive.up_since.isoformat(),
            )

    def _run(self) -> None:
        while not self._stopping.wait(self.interval):
            self.beat()

    def close(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
