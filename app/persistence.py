"""The PostgreSQL application recorder, with a cheaper way of sending the rows.

The library's ``PostgresApplicationRecorder`` inserts a transaction's events as one array of
the composite type ``stored_event_uuid`` (``INSERT ... SELECT ... FROM unnest(%s)``); psycopg
builds the text of such an array in Python, and that was the largest single cost of the
group committer in ``make bench`` (a tenth of a worker's CPU). This subclass sends the same
rows as plain parameters of one multi-row ``INSERT ... VALUES``, which psycopg's C dumpers
handle, and sends the whole transaction in one round trip (``insert_events``). The rest is
the library's: the same table, the table lock (notification ids in commit order) and the
NOTIFY in the same transaction, the same notification ids returned.

Selected with the library's ``APPLICATION_RECORDER_TOPIC`` setting (see
``app.settings.eventsourcing_env``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from eventsourcing.persistence import InterfaceError, OperationalError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder
from eventsourcing.utils import retry
from psycopg import Cursor
from psycopg.rows import DictRow
from psycopg.sql import SQL, Composed, Identifier

TOPIC = "app.persistence:PostgresRecorder"


class PostgresRecorder(PostgresApplicationRecorder):
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
            rows = conn.cursor()
            with conn.pipeline(), conn.transaction():
                self._lock_table(control)
                self._notify_channel(control)
                self._insert_stored_events(rows, stored_events, **kwargs)
            # The pipeline has synced: the COMMIT went through, RETURNING is here.
            return [int(row["notification_id"]) for row in rows.fetchall()]

    def _insert_stored_events(
        self,
        curs: Cursor[DictRow],
        stored_events: Sequence[StoredEvent],
        **kwargs: Any,
    ) -> None:
        params: list[Any] = []
        for event in stored_events:
            params.extend((event.originator_id, event.originator_version, event.topic, event.state))
        curs.execute(self._insert_values(len(stored_events)), params, prepare=True)

    def _insert_values(self, rows: int) -> Composed:
        return _insert_statement(self.datastore.schema, self.events_table_name, rows)


@lru_cache(maxsize=256)
def _insert_statement(schema: str, table: str, rows: int) -> Composed:
    values = SQL(", ").join([SQL("(%s, %s, %s, %s)")] * rows)
    return (
        SQL("INSERT INTO {}.{} (originator_id, originator_version, topic, state) VALUES ").format(
            Identifier(schema), Identifier(table)
        )
        + values
        + SQL(" RETURNING notification_id")
    )
