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

Selected with the library's ``APPLICATION_RECORDER_TOPIC`` setting (see
``app.settings.eventsourcing_env``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from eventsourcing.persistence import InterfaceError, OperationalError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from eventsourcing.utils import retry
from psycopg import Connection, Cursor, RawCursor
from psycopg.rows import DictRow, tuple_row
from psycopg.sql import SQL, Composable, Identifier

TOPIC = "app.infra.persistence:PostgresRecorder"


def numbered_rows(rows: int, width: int) -> str:
    """The VALUES list of a multi-row INSERT with PostgreSQL's own ``$n`` placeholders
    (for a raw cursor): ``($1, ..., $width), ($width+1, ...), ...``, ``rows`` of them."""
    return ", ".join(
        "(" + ", ".join(f"${width * i + j}" for j in range(1, width + 1)) + ")" for i in range(rows)
    )


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
        notify = lambda: SQL("NOTIFY {0}").format(Identifier(self.channel_name))  # noqa: E731
        curs.execute(self._text(curs.connection, "notify", notify))

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
        values = numbered_rows(rows, 4)
        return SQL(
            "INSERT INTO {}.{} (originator_id, originator_version, topic, state) VALUES "
        ).format(Identifier(self.datastore.schema), Identifier(self.events_table_name)) + SQL(
            values + " RETURNING notification_id"
        )
