"""The PostgreSQL application recorder, with a cheaper way of sending the rows.

The library's ``PostgresApplicationRecorder`` inserts a transaction's events as one array of
the composite type ``stored_event_uuid`` (``INSERT ... SELECT ... FROM unnest(%s)``); psycopg
builds the text of such an array in Python, and that was the largest single cost of the
group committer in ``make bench`` (a tenth of a worker's CPU). This subclass sends the same
rows as plain parameters of one multi-row ``INSERT ... VALUES``, which psycopg's C dumpers
handle, and sends the whole transaction in one round trip (``insert_events``). Its
statements are composed once per size, not for every transaction, and the INSERT uses
PostgreSQL's ``$n`` placeholders through a raw cursor, so psycopg has no query to parse
(``_insert_rows``). The rest is the library's: the same table, the table lock (notification
ids in commit order) and the NOTIFY in the same transaction, the same notification ids
returned.

Since 2 December 2026 a transaction is, in the usual case, one statement of PostgreSQL's
simple query protocol (``_insert_simple``): the lock, the NOTIFY and the INSERT with its rows
written into the text, which PostgreSQL runs as one implicit transaction (all or nothing). In
pipeline mode psycopg's generators and waits made a lone transaction cost about 0.29 ms of
the committer's CPU; one simple query costs about 0.13 ms (2,000 transactions of two events
in a row, docs/performance.md), and at 1,000 commands/s most transactions hold one or two
commands. Only values that cannot carry SQL are written into the text: the
UUID, the integer version, the topic when it is a plain module and class name
(``PLAIN_TOPIC``), and the state as hexadecimal bytes in an escape string; any other event
goes through the parameterised, pipelined path (``_insert_pipelined``).

Selected with the library's ``APPLICATION_RECORDER_TOPIC`` setting (see
``app.settings.eventsourcing_env``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import InterfaceError, OperationalError, StoredEvent
from eventsourcing.postgres import (
    ConnectionPool,
    PostgresAggregateRecorder,
    PostgresApplicationRecorder,
    PostgresFactory,
    PostgresTrackingRecorder,
)
from eventsourcing.utils import retry
from psycopg import Connection, Cursor, RawCursor
from psycopg.rows import DictRow, tuple_row
from psycopg.sql import SQL, Composable, Identifier

from app.infra import deadline
from app.infra.library import run_once, within_wait

TOPIC = "app.infra.persistence:PostgresRecorder"


def numbered_rows(rows: int, width: int) -> str:
    """The VALUES list of a multi-row INSERT with PostgreSQL's own ``$n`` placeholders
    (for a raw cursor): ``($1, ..., $width), ($width+1, ...), ...``, ``rows`` of them."""
    return ", ".join(
        "(" + ", ".join(f"${width * i + j}" for j in range(1, width + 1)) + ")" for i in range(rows)
    )


#: A topic that may be written into a statement's text as it is: a module and class name.
PLAIN_TOPIC = re.compile(r"[A-Za-z0-9_.:]+")


def plain(event: StoredEvent) -> bool:
    """Whether ``event``'s values can be written into a simple query's text safely."""
    return (
        type(event.originator_id) is UUID
        and type(event.originator_version) is int
        and PLAIN_TOPIC.fullmatch(event.topic) is not None
        and isinstance(event.state, bytes)
    )


def value_row(event: StoredEvent) -> str:
    """One row of the simple query's VALUES, for a ``plain`` event. The state is an escape
    string (``E'...'``, whose meaning does not depend on ``standard_conforming_strings``)
    holding bytea's hexadecimal form."""
    return (
        f"('{event.originator_id}',{event.originator_version},'{event.topic}',"
        f"E'\\\\x{event.state.hex()}')"
    )


@within_wait
class PostgresRecorder(PostgresApplicationRecorder):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._texts: dict[Any, Any] = {}  # statement key -> its text, rendered once

    def _text(self, conn: Connection[Any], key: Any, make: Callable[[], Any]) -> Any:
        """The statement ``make()`` builds, built on first use only, composed SQL rendered to
        text: the same for every connection (one server, one encoding)."""
        text = self._texts.get(key)
        if text is None:
            text = make()
            if isinstance(text, Composable):
                text = text.as_string(conn)
            self._texts[key] = text
        return text

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def insert_events(
        self, stored_events: Sequence[StoredEvent], **kwargs: Any
    ) -> Sequence[int] | None:
        """The library's transaction (the table lock, NOTIFY, the rows, ``RETURNING``) in ONE
        round trip: every statement and the COMMIT are pipelined and sent together, so the
        events table's lock is held for the server's work and the commit only, not across a
        round trip to this process and back (nor a wait for its GIL, which under load made
        each transaction hold the lock several times longer than the work). A version
        conflict surfaces at the sync, as ``IntegrityError`` (via ``get_connection``)."""
        if not stored_events:
            nothing: Sequence[int] | None = super().insert_events(stored_events, **kwargs)
            return nothing
        with self.datastore.get_connection() as conn:
            if all(plain(event) for event in stored_events):
                return self._insert_simple(conn, stored_events)
            return self._insert_pipelined(conn, stored_events)

    def _insert_simple(
        self, conn: Connection[Any], stored_events: Sequence[StoredEvent]
    ) -> list[int]:
        """The transaction as ONE simple query (see the module's documentation): several
        statements in one query run as one implicit transaction, on the pool's autocommit
        connection; an error (a version conflict) rolls all of it back."""
        head = self._text(conn, "simple", lambda: self._simple_head(conn))
        curs = conn.cursor(row_factory=tuple_row)
        curs.execute(head + ",".join(map(value_row, stored_events)) + " RETURNING notification_id")
        while curs.nextset():  # the lock's and the NOTIFY's results, then the INSERT's rows
            pass
        return [int(row[0]) for row in curs.fetchall()]

    def _simple_head(self, conn: Connection[Any]) -> str:
        """``SET LOCAL lock_timeout ...; LOCK TABLE ...; NOTIFY ...; INSERT ... VALUES ``"""
        statements = [*self.lock_table_statements, self._notify_statement(), self._insert_head()]
        texts = [st.as_string(conn) if isinstance(st, Composable) else str(st) for st in statements]
        return "; ".join(texts)

    def _insert_pipelined(
        self, conn: Connection[Any], stored_events: Sequence[StoredEvent]
    ) -> list[int]:
        """The transaction's statements with parameters, pipelined and sent together."""
        control = conn.cursor()
        rows = RawCursor(conn, row_factory=tuple_row)
        with conn.pipeline(), conn.transaction():
            self._lock_table(control)
            self._notify_channel(control)
            self._insert_rows(rows, stored_events)
        # The pipeline has synced: the COMMIT went through, RETURNING is here.
        return [int(row[0]) for row in rows.fetchall()]

    def _lock_table(self, curs: Cursor[DictRow]) -> None:
        for i, statement in enumerate(self.lock_table_statements):
            text = self._text(curs.connection, ("lock", i), lambda: statement)  # noqa: B023
            curs.execute(text, prepare=True)

    def _notify_channel(self, curs: Cursor[DictRow]) -> None:
        curs.execute(self._text(curs.connection, "notify", self._notify_statement))

    def _notify_statement(self) -> Composable:
        return SQL("NOTIFY {0}").format(Identifier(self.channel_name))

    def _insert_rows(self, curs: RawCursor[Any], stored_events: Sequence[StoredEvent]) -> None:
        """One multi-row INSERT with PostgreSQL's own ``$n`` placeholders (a raw cursor):
        psycopg parses a ``%s`` query of over 50 parameters again on every execution (it
        caches only smaller ones), and that parse was over a third of a transaction's CPU."""
        params: list[Any] = []
        for event in stored_events:
            params.extend((event.originator_id, event.originator_version, event.topic, event.state))
        rows = len(stored_events)
        text = self._text(curs.connection, ("insert", rows), lambda: self._insert_values(rows))
        curs.execute(text, params, prepare=True)

    def _insert_values(self, rows: int) -> Composable:
        return self._insert_head() + SQL(numbered_rows(rows, 4) + " RETURNING notification_id")

    def _insert_head(self) -> Composable:
        """``INSERT INTO ... (the four columns) VALUES ``, without its rows."""
        return SQL(
            "INSERT INTO {}.{} (originator_id, originator_version, topic, state) VALUES "
        ).format(Identifier(self.datastore.schema), Identifier(self.events_table_name))


# --- the primary's store -------------------------------------------------------------------
#
# Every query tried again only within the connect timeout (app.infra.library.within_wait): a
# database that went away fails a request within CANASTA_DATABASE_WAIT_SECONDS.


@within_wait
class PrimaryAggregateRecorder(PostgresAggregateRecorder):
    """The snapshots' recorder of the primary."""


@within_wait
class PrimaryTrackingRecorder(PostgresTrackingRecorder):
    """The library's tracking recorder on the primary."""


class _BoundedPool(ConnectionPool[Connection[DictRow]]):
    """The library's connection pool, whose wait for a connection ends at the deadline of
    the query that waits (``app.infra.deadline``), not a whole timeout after the try
    began."""

    def getconn(self, timeout: float | None = None) -> Any:
        return super().getconn(deadline.remaining(self.timeout if timeout is None else timeout))


class _PromptPoolFactory(PostgresFactory):
    """The library's PostgreSQL factory whose pool connects again as soon as the database is
    back after an outage. psycopg_pool replaces each connection an outage broke by an
    attempt that pauses 1, 2, 4, 8, 16... seconds between its tries, for up to five minutes
    (``reconnect_timeout``): after an outage of 11 s the next try came at 15 s, and a request
    meanwhile waited for a connection in vain (503 ``database_unavailable`` after the database
    was back: for as long again as the outage, at worst). Here an attempt tries for the
    connect timeout only (``CANASTA_DATABASE_WAIT_SECONDS``: tries at once, 1 s later and at
    its end), then gives its place up; the next request that waits for a connection makes the
    pool open one at once (psycopg_pool grows a pool with waiting clients)
    (tests/app/test_pool_recovery.py). A wait for a connection ends by its query's deadline
    (``_BoundedPool``: tests/app/test_database_wait.py)."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        pool = self.datastore.pool
        pool.reconnect_timeout = max(float(pool.timeout), 1.0)
        # Not opened yet; the subclass adds no state, only a bounded wait (``_BoundedPool``).
        pool.__class__ = _BoundedPool


class PrimaryFactory(_PromptPoolFactory):
    """The library's PostgreSQL factory, its queries tried within the connect timeout, its
    pool connecting again promptly; ``PRIMARY_FACTORY_TOPIC`` as ``PERSISTENCE_MODULE``."""

    aggregate_recorder_class = PrimaryAggregateRecorder
    application_recorder_class = PostgresRecorder
    tracking_recorder_class = PrimaryTrackingRecorder


PRIMARY_FACTORY_TOPIC = f"{__name__}:PrimaryFactory"


# --- the read replica's store (app.replica) ---------------------------------------------------
#
# A replica that stops must be left aside at once (docs/scaling.md, "Lag and failure"), not
# after the library's ten tries of every query: its recorders run each query once.

ReplicaRecorder = run_once(PostgresRecorder, "ReplicaRecorder", __name__)
ReplicaAggregateRecorder = run_once(PostgresAggregateRecorder, "ReplicaAggregateRecorder", __name__)
ReplicaTrackingRecorder = run_once(PostgresTrackingRecorder, "ReplicaTrackingRecorder", __name__)


class ReplicaFactory(_PromptPoolFactory):
    """The library's PostgreSQL factory with recorders that do not retry (the snapshots'
    included); ``REPLICA_FACTORY_TOPIC`` as ``PERSISTENCE_MODULE``."""

    aggregate_recorder_class = ReplicaAggregateRecorder
    application_recorder_class = ReplicaRecorder
    tracking_recorder_class = ReplicaTrackingRecorder


REPLICA_FACTORY_TOPIC = f"{__name__}:ReplicaFactory"
REPLICA_RECORDER_TOPIC = f"{__name__}:ReplicaRecorder"
