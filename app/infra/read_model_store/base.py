"""The transactions of the read-model recorders: every write tracked, batches, hooks.

A recorder here is an eventsourcing tracking recorder that also owns the view tables: every
write records the position of the event it comes from (``Tracking``) in the projection's
tracking table IN THE SAME TRANSACTION as the rows, and records it first. A notification that
was already processed (the tracking row holds it or a later one) is refused with
``AlreadyProcessed`` and nothing is written, so each event changes the view exactly once
however often it is delivered, and a crash leaves either both the rows and the position or
neither.

``TrackedTransactions`` is that machinery, written once with ``:name`` parameters; the
writes and queries are ``ReadModelRecorder``'s (``recorder.py``); the PostgreSQL and SQLite
recorders (``postgres.py``, ``sqlite.py``) supply the transaction, the SQL dialect and the
column types.
"""

from __future__ import annotations

import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from eventsourcing.persistence import ProgrammingError, Tracking

from projections.view import AlreadyProcessed, ReadModelView

#: The tracking row the library writes when it creates a single-row tracking table.
MIGRATION_ROW = "__migration__"

_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")

#: Columns converted on the way in and out (JSON, ids, times) and the boolean fields.
JSON_COLUMNS = frozenset({"away", "breakdown", "options", "seats", "sides", "totals", "winners"})
UUID_COLUMNS = frozenset({"deal_id", "table_id", "current_deal"})
TIME_COLUMNS = frozenset({"created_at", "updated_at", "last_move_at"})
BOOLEAN_FIELDS = frozenset({"crosswise", "yes"})

#: Runs one statement inside the current transaction; returns the rows it fetched.
Run = Callable[..., list[dict[str, Any]]]


def check_identifier(name: str) -> str:
    if not _IDENTIFIER.fullmatch(name):
        raise ProgrammingError(f"not a plain lower-case SQL identifier: {name!r}")
    return name


def check_seat(seat: Any) -> int:
    if isinstance(seat, bool) or not isinstance(seat, int):
        raise TypeError(f"a draw log is read for one seat, given as an int, not {seat!r}")
    return seat


def _covered(tracked: Tracking | None, tracking: Tracking) -> bool:
    """Whether a batch's recorded position ``tracked`` already covers ``tracking``."""
    return (
        tracked is not None
        and tracked.application_name == tracking.application_name
        and tracking.notification_id <= tracked.notification_id
    )


class TrackedTransactions(ReadModelView, ABC):
    """Transactions that record the tracking position first, and batches of them.

    Subclasses provide the database: ``_transaction()``, ``_runner(cursor)``, ``_table(name)``
    and the conversions of ids and card lists. Every write goes through ``_write(tracking)``:
    one transaction (or the current ``batch()``'s) that first records ``tracking`` or raises
    ``AlreadyProcessed``.
    """

    tracking_table_name: str

    # --- transactions ----------------------------------------------------------------------
    @contextmanager
    def _write(self, tracking: Tracking | None) -> Iterator[Run]:
        """A transaction that records ``tracking`` first (unless None) and commits at exit;
        inside ``batch()``, the batch's transaction."""
        local = self._batch_local()
        shared = getattr(local, "cursor", None)
        if shared is not None:
            if tracking is not None and not _covered(getattr(local, "tracked", None), tracking):
                self._track(shared, tracking)
            yield self._runner(shared)
            return
        with self._transaction(commit=True) as cursor:
            if tracking is not None:
                self._track(cursor, tracking)
            yield self._runner(cursor)

    def track(self, tracking: Tracking) -> None:
        """Record that an event was processed without changing any view row (nothing to do
        inside a batch whose position, recorded first, covers it)."""
        local = self._batch_local()
        if getattr(local, "cursor", None) is None or not _covered(
            getattr(local, "tracked", None), tracking
        ):
            with self._write(tracking):
                pass

    @contextmanager
    def _read(self) -> Iterator[Run]:
        """A read-only transaction."""
        with self._transaction(commit=False) as cursor:
            yield self._runner(cursor)

    @contextmanager
    def batch(self, span: tuple[Tracking, Tracking] | None = None) -> Iterator[None]:
        """The writes of this thread inside share one transaction, committed at the end
        (faster catch-ups and rebuilds); an error rolls back the whole batch, positions
        included. Writes that find their event already processed are skipped as usual.

        With ``span``, the batch's first and last notifications: the last one's position is
        recorded once, first, instead of each event's, provided that none of the span was
        processed yet (the batch is all or nothing, so exactly-once holds as well);
        otherwise ``AlreadyProcessed``, and nothing is written. On PostgreSQL the batch's
        writes are then pipelined: sent without waiting for each one's answer."""
        local = self._batch_local()
        if getattr(local, "cursor", None) is not None:
            yield  # already in a batch
            return
        committed: list[Callable[[], None]] = []
        with self._batch_transaction(pipelined=span is not None) as cursor:
            local.cursor = cursor
            local.tracked = None
            local.appended = {}
            local.committed = committed
            local.notes = {}
            try:
                if span is not None:
                    self._track_span(cursor, *span)
                    local.tracked = span[1]
                yield
                for (table, columns), rows in local.appended.items():
                    self._insert_rows(cursor, table, columns, rows)
            finally:
                local.cursor = None
                local.tracked = None
                local.appended = None
                local.committed = None
                local.notes = None
        for done in committed:  # the batch committed (an error skips this)
            done()

    def _track_span(self, cursor: Any, first: Tracking, last: Tracking) -> None:
        """Record ``last`` if the recorded position is before ``first``; else
        ``AlreadyProcessed`` (some or all of the span was processed elsewhere)."""
        table = self._tracking_table()
        rows = self._runner(cursor)(
            f"INSERT INTO {table} (application_name, notification_id) "
            "VALUES (:application_name, :last) "
            "ON CONFLICT (application_name) DO UPDATE SET notification_id = :last "
            f"WHERE {table}.notification_id < :first "
            "RETURNING notification_id",
            {
                "application_name": last.application_name,
                "first": first.notification_id,
                "last": last.notification_id,
            },
        )
        if not rows:
            raise AlreadyProcessed(
                f"{self.tracking_table_name}: {last.application_name} "
                f"{first.notification_id}..{last.notification_id} was processed in part"
            )

    def _batch_transaction(self, *, pipelined: bool) -> AbstractContextManager[Any]:
        """A batch's transaction (pipelined where the database can)."""
        return self._transaction(commit=True)

    def _after_commit(self, done: Callable[[], None]) -> None:
        """Call ``done`` once the write just made is committed: at once outside a batch
        (``_write`` has committed), at the batch's end inside one, never if it rolls back."""
        waiting: list[Callable[[], None]] | None = getattr(self._batch_local(), "committed", None)
        if waiting is None:
            done()
        else:
            waiting.append(done)

    def _batch_notes(self) -> dict[Any, Any] | None:
        """Inside a batch, a dict for what its writes stored, forgotten at its end (None
        outside one): what is noted there holds only if the batch commits."""
        notes: dict[Any, Any] | None = getattr(self._batch_local(), "notes", None)
        return notes

    def in_batch(self) -> bool:
        return getattr(self._batch_local(), "cursor", None) is not None

    def _batch_local(self) -> threading.local:
        local: threading.local | None = self.__dict__.get("_batch_state")
        if local is None:
            local = self.__dict__.setdefault("_batch_state", threading.local())
        return local

    def _append(self, tracking: Tracking, table: str, row: Mapping[str, Any]) -> None:
        """Insert ``row`` into the append-only view ``table`` (one event's row), tracked.

        Inside ``batch()`` the row is kept and the batch's rows of each table go in ONE
        statement at the batch's end, in the same transaction (most of a catch-up's
        statements were these single-row inserts); nothing in a batch reads these tables.
        Outside a batch, it is inserted at once."""
        with self._write(tracking) as run:
            appended: dict[tuple[str, tuple[str, ...]], list[tuple[Any, ...]]] | None = getattr(
                self._batch_local(), "appended", None
            )
            if appended is not None:  # in a batch
                appended.setdefault((table, tuple(row)), []).append(tuple(row.values()))
            else:
                columns = ", ".join(row)
                values = ", ".join(f":{name}" for name in row)
                run(f"INSERT INTO {self._table(table)} ({columns}) VALUES ({values})", row)

    @abstractmethod
    def _insert_rows(
        self, cursor: Any, table: str, columns: tuple[str, ...], rows: Sequence[tuple[Any, ...]]
    ) -> None:
        """Insert ``rows`` (values in the order of ``columns``) into view ``table``, in one
        statement where the database can."""

    def _track(self, cursor: Any, tracking: Tracking) -> None:
        """Record ``tracking`` (the library's single-row upsert); ``AlreadyProcessed`` if the
        table holds this notification or a later one."""
        cursor.execute(
            self.insert_tracking_statement,
            {
                "application_name": tracking.application_name,
                "notification_id": tracking.notification_id,
            },
        )
        if cursor.fetchone() is None:
            raise AlreadyProcessed(
                f"{self.tracking_table_name}: {tracking.application_name} "
                f"{tracking.notification_id} was already processed"
            )

    # --- database hooks ------------------------------------------------------------------
    insert_tracking_statement: Any

    @abstractmethod
    def _transaction(self, *, commit: bool) -> AbstractContextManager[Any]:
        """A database transaction; yields a cursor."""

    @abstractmethod
    def _runner(self, cursor: Any) -> Run:
        """Runs ``:name``-parameter SQL on ``cursor``."""

    @abstractmethod
    def _table(self, name: str) -> str:
        """The (qualified, quoted) name of view table ``name``."""

    @abstractmethod
    def _tracking_table(self) -> str:
        """The (qualified, quoted) name of this recorder's tracking table."""

    def _id(self, value: UUID | str) -> Any:
        return value if isinstance(value, UUID) else UUID(value)

    def _cards(self, cards: Sequence[str]) -> Any:
        return list(cards)

    def _cards_out(self, value: Any) -> list[str]:
        return list(value)

    def _json(self, value: Any) -> Any:
        return value

    def _json_out(self, value: Any) -> Any:
        return value

    def _time(self, value: datetime) -> Any:
        return value

    def _time_out(self, value: Any) -> str:
        """A timestamp as ISO 8601 in UTC (the same text on every backend)."""
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(value)
        return moment.astimezone(UTC).isoformat()

    def _plain(self, table: str, row: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in row.items():
            if value is None:
                pass
            elif key in UUID_COLUMNS:
                value = str(self._id(value))
            elif key == "cards":
                value = self._cards_out(value)
            elif key in JSON_COLUMNS:
                value = self._json_out(value)
            elif key in TIME_COLUMNS:
                value = self._time_out(value)
            elif key in BOOLEAN_FIELDS or key == "replacement":
                value = bool(value)
            out[key] = value
        return out
