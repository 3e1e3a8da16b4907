"""Read-model tables and the tracking recorders that write them.

The read models are built from the event store's notification log (R-HIST-1):

- ``discard_log``: the public discard log of every deal (R-VIEW-2), one row per entry of
  ``projections.discard_log.public_entry``;
- ``draw_log``: each seat's private draws from the stock (R-VIEW-3), one row per
  ``CardsDrawn`` event; a query always names the one seat whose rows it returns;
- ``score_deals`` and ``deal_scores``: the score table (R-SCORE-1, R-GAME-1), per deal and
  per side, with the breakdown of the deal's score and the side's cumulative total;
- ``tables``: the lobby, one row per table (entry, options, host, who sits where, status),
  from the table aggregate's events; everything in it is public (``GET /tables/{id}``).

A recorder here is an eventsourcing tracking recorder that also owns the view tables: every
write records the position of the event it comes from (``Tracking``) in the projection's
tracking table IN THE SAME TRANSACTION as the rows, and records it first. A notification that
was already processed (the tracking row holds it or a later one) is refused with
``AlreadyProcessed`` and nothing is written, so each event changes the view exactly once
however often it is delivered, and a crash leaves either both the rows and the position or
neither.

The write and query logic is written once (``ReadModelRecorder``) with ``:name`` parameters;
``PostgresReadModelRecorder`` and ``SQLiteReadModelRecorder`` supply the transaction, the SQL
dialect and the column types. On PostgreSQL the tables are created by alembic
(``alembic/versions/0002_read_models.py`` and ``0003_lobby.py``; the application runs with
``CREATE_TABLE=n``); the
DDL below is the same and is used only when ``CREATE_TABLE`` is on. On SQLite they are created
here (``IF NOT EXISTS``) in the same file as the events.
"""

from __future__ import annotations

import json
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from uuid import UUID

from eventsourcing.persistence import ProgrammingError, Tracking, TrackingRecorder
from eventsourcing.postgres import PostgresDatastore, PostgresTrackingRecorder
from eventsourcing.sqlite import SQLiteCursor, SQLiteDatastore, SQLiteTrackingRecorder
from psycopg import Cursor, RawCursor
from psycopg.rows import DictRow
from psycopg.sql import SQL
from psycopg.types.json import Jsonb

from app.persistence import numbered_rows

DISCARD_LOG = "discard_log"
DRAW_LOG = "draw_log"
SCORE_DEALS = "score_deals"
DEAL_SCORES = "deal_scores"
LOBBY = "tables"
VIEW_TABLES = (DISCARD_LOG, DRAW_LOG, SCORE_DEALS, DEAL_SCORES, LOBBY)

#: A table's status in the lobby (``domain.table``'s statuses).
LOBBY_STATUSES = ("open", "playing", "finished", "stopped")
#: Lobby columns a table event may change besides its version and position (JSON ones marked).
LOBBY_CHANGES = ("sides", "totals", "status", "deals", "current_deal", "winners")
_JSON_COLUMNS = frozenset({"breakdown", "options", "seats", "sides", "totals", "winners"})
_UUID_COLUMNS = frozenset({"deal_id", "table_id", "current_deal"})
_TIME_COLUMNS = frozenset({"created_at", "updated_at"})

#: The parts of a side's deal score (domain.scoring), one column each, ``total`` last. The
#: whole breakdown is kept too (column ``breakdown``, JSON), so that a part added to the
#: domain later is shown at once and only needs a migration to become a column.
BREAKDOWN = (
    "melds",
    "natural_canastas",
    "mixed_canastas",
    "wild_canastas",
    "special_canastas",
    "canasta_bonus",
    "going_out",
    "concealed",
    "red_threes",
    "hands",
    "penalties",
    "ponytails",
    "cut_bonus",
    "total",
)

#: Columns of ``discard_log`` besides deal_id, step and kind; an entry sets only its own.
DISCARD_FIELDS = ("seat", "card", "top", "size", "crosswise", "partner", "yes")
_BOOLEAN_FIELDS = frozenset({"crosswise", "yes"})

#: Rows sort by these columns in ``rows()`` (the primary keys).
_ORDER = {
    DISCARD_LOG: "deal_id, step",
    DRAW_LOG: "deal_id, step",
    SCORE_DEALS: "deal_id",
    DEAL_SCORES: "deal_id, side",
    LOBBY: "table_id",
}

#: The tracking row the library writes when it creates a single-row tracking table.
MIGRATION_ROW = "__migration__"

_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")

#: Runs one statement inside the current transaction; returns the rows it fetched.
Run = Callable[..., list[dict[str, Any]]]


class AlreadyProcessed(Exception):
    """This projection has already processed the notification: nothing was written."""


def _check_identifier(name: str) -> str:
    if not _IDENTIFIER.fullmatch(name):
        raise ProgrammingError(f"not a plain lower-case SQL identifier: {name!r}")
    return name


def _check_seat(seat: Any) -> int:
    if isinstance(seat, bool) or not isinstance(seat, int):
        raise TypeError(f"a draw log is read for one seat, given as an int, not {seat!r}")
    return seat


class ReadModelRecorder(TrackingRecorder, ABC):
    """Writes and reads the view tables; each write also records the tracking position.

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
        with self._batch_transaction(pipelined=span is not None) as cursor:
            local.cursor = cursor
            local.tracked = None
            local.appended = {}
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

    # --- writes ----------------------------------------------------------------------------
    def track(self, tracking: Tracking) -> None:
        """Record that an event was processed without changing any view row."""
        with self._write(tracking):
            pass

    def add_discard_entry(
        self, tracking: Tracking, deal_id: UUID | str, entry: Mapping[str, Any]
    ) -> None:
        """One entry of the public discard log (``public_entry``'s dict)."""
        unknown = set(entry) - {"step", "kind", *DISCARD_FIELDS}
        if unknown:
            raise ValueError(f"the discard_log table has no column for {sorted(unknown)}")
        params = {"deal_id": self._id(deal_id), "step": entry["step"], "kind": entry["kind"]}
        params.update({field: entry.get(field) for field in DISCARD_FIELDS})
        self._append(tracking, DISCARD_LOG, params)

    def add_draw(
        self,
        tracking: Tracking,
        deal_id: UUID | str,
        *,
        step: int,
        seat: int,
        cards: Sequence[str],
        replacement: bool,
    ) -> None:
        """One draw from the stock, to the private log of ``seat`` (R-VIEW-3)."""
        row = {
            "deal_id": self._id(deal_id),
            "step": step,
            "seat": _check_seat(seat),
            "cards": self._cards(cards),
            "replacement": bool(replacement),
        }
        self._append(tracking, DRAW_LOG, row)

    def open_deal(
        self, tracking: Tracking, deal_id: UUID | str, *, table_id: UUID | str, number: int
    ) -> None:
        """A deal started: remember its table and number for its scores."""
        with self._write(tracking) as run:
            run(
                f"INSERT INTO {self._table(SCORE_DEALS)} (deal_id, table_id, deal_number) "
                "VALUES (:deal_id, :table_id, :deal_number)",
                {
                    "deal_id": self._id(deal_id),
                    "table_id": self._id(table_id),
                    "deal_number": number,
                },
            )

    def score_deal(
        self,
        tracking: Tracking,
        deal_id: UUID | str,
        *,
        reason: str,
        scores: Mapping[str, Mapping[str, int]],
    ) -> None:
        """A deal was scored: each side's breakdown (R-SCORE-1)."""
        columns = (*BREAKDOWN, "breakdown")
        update = ", ".join(f"{key} = excluded.{key}" for key in columns)
        with self._write(tracking) as run:
            table_id, number = self._deal_of(run, deal_id)
            run(
                f"UPDATE {self._table(SCORE_DEALS)} SET reason = :reason WHERE deal_id = :deal_id",
                {"reason": reason, "deal_id": self._id(deal_id)},
            )
            for side, breakdown in sorted(scores.items()):
                run(
                    f"INSERT INTO {self._table(DEAL_SCORES)} "
                    f"(table_id, deal_id, deal_number, side, {', '.join(columns)}) "
                    "VALUES (:table_id, :deal_id, :deal_number, :side, "
                    f"{', '.join(':' + key for key in columns)}) "
                    f"ON CONFLICT (deal_id, side) DO UPDATE SET {update}",
                    {
                        "table_id": table_id,
                        "deal_id": self._id(deal_id),
                        "deal_number": number,
                        "side": side,
                        **{key: breakdown.get(key) for key in BREAKDOWN},
                        "total": breakdown["total"],
                        "breakdown": self._json(dict(breakdown)),
                    },
                )

    def record_deal(
        self,
        tracking: Tracking,
        table_id: UUID | str,
        *,
        deal_id: UUID | str,
        scores: Mapping[str, int],
        totals: Mapping[str, int],
    ) -> None:
        """The table recorded a deal: each side's cumulative total after it (R-GAME-1)."""
        with self._write(tracking) as run:
            _, number = self._deal_of(run, deal_id)
            for side, cumulative in sorted(totals.items()):
                run(
                    f"INSERT INTO {self._table(DEAL_SCORES)} "
                    "(table_id, deal_id, deal_number, side, total, cumulative) "
                    "VALUES (:table_id, :deal_id, :deal_number, :side, :total, :cumulative) "
                    "ON CONFLICT (deal_id, side) DO UPDATE SET cumulative = excluded.cumulative",
                    {
                        "table_id": self._id(table_id),
                        "deal_id": self._id(deal_id),
                        "deal_number": number,
                        "side": side,
                        "total": scores.get(side, 0),
                        "cumulative": cumulative,
                    },
                )

    def add_lobby_table(
        self,
        tracking: Tracking,
        table_id: UUID | str,
        *,
        host: str,
        entry: str,
        players: int,
        options: Mapping[str, Any],
        target: int,
        version: int,
        at: datetime,
    ) -> None:
        """A table was created: it is open, every seat free."""
        with self._write(tracking) as run:
            run(
                f"INSERT INTO {self._table(LOBBY)} "
                "(table_id, entry, players, options, target, host, seats, status, deals, "
                "version, created_position, updated_position, created_at, updated_at) "
                "VALUES (:table_id, :entry, :players, :options, :target, :host, :seats, "
                ":status, 0, :version, :position, :position, :at, :at)",
                {
                    "table_id": self._id(table_id),
                    "entry": entry,
                    "players": players,
                    "options": self._json(dict(options)),
                    "target": target,
                    "host": host,
                    "seats": self._json([None] * players),
                    "status": LOBBY_STATUSES[0],
                    "version": version,
                    "position": tracking.notification_id,
                    "at": self._time(at),
                },
            )

    def seat_lobby_player(
        self,
        tracking: Tracking,
        table_id: UUID | str,
        *,
        seat: int,
        player: str,
        version: int,
        at: datetime,
    ) -> None:
        """A player took a seat. The seats are read and written in the transaction that
        recorded the position first, so no other runner of this projection is in between."""
        with self._write(tracking) as run:
            rows = run(
                f"SELECT seats FROM {self._table(LOBBY)} WHERE table_id = :table_id",
                {"table_id": self._id(table_id)},
            )
            if not rows:
                raise LookupError(f"a seat was taken at table {table_id}, never created")
            seats = list(self._json_out(rows[0]["seats"]))
            seats[_check_seat(seat)] = player
            self._update_lobby(run, tracking, table_id, version, at, {"seats": seats})

    def update_lobby_table(
        self,
        tracking: Tracking,
        table_id: UUID | str,
        *,
        version: int,
        at: datetime,
        **changes: Any,
    ) -> None:
        """Teams chosen, game started, a deal opened or recorded, game ended or stopped:
        set the ``changes`` (columns of ``LOBBY_CHANGES``)."""
        unknown = set(changes) - set(LOBBY_CHANGES)
        if unknown:
            raise ValueError(f"the lobby has no column for {sorted(unknown)}")
        if "status" in changes and changes["status"] not in LOBBY_STATUSES:
            raise ValueError(f"not a table status: {changes['status']!r}")
        with self._write(tracking) as run:
            self._update_lobby(run, tracking, table_id, version, at, changes)

    def _update_lobby(
        self,
        run: Run,
        tracking: Tracking,
        table_id: UUID | str,
        version: int,
        at: datetime,
        changes: Mapping[str, Any],
    ) -> None:
        params: dict[str, Any] = {}
        for column, value in changes.items():
            if value is not None and column in _JSON_COLUMNS:
                value = self._json(value)
            elif value is not None and column in _UUID_COLUMNS:
                value = self._id(value)
            params[column] = value
        assignments = "".join(f"{column} = :{column}, " for column in params)
        params.update(
            table_id=self._id(table_id),
            version=version,
            position=tracking.notification_id,
            at=self._time(at),
        )
        updated = run(
            f"UPDATE {self._table(LOBBY)} SET {assignments}version = :version, "
            "updated_position = :position, updated_at = :at "
            "WHERE table_id = :table_id RETURNING table_id",
            params,
        )
        if not updated:
            raise LookupError(f"table {table_id} changed but its creation was never projected")

    def _deal_of(self, run: Run, deal_id: UUID | str) -> tuple[Any, int]:
        rows = run(
            f"SELECT table_id, deal_number FROM {self._table(SCORE_DEALS)} "
            "WHERE deal_id = :deal_id",
            {"deal_id": self._id(deal_id)},
        )
        if not rows:
            raise LookupError(f"deal {deal_id} was scored but its start was never projected")
        return rows[0]["table_id"], int(rows[0]["deal_number"])

    def reset(self, tables: Sequence[str]) -> None:
        """Delete every row of ``tables`` and this projection's positions, in one transaction
        (the next run processes the notification log from the start)."""
        for name in tables:
            if name not in VIEW_TABLES:
                raise ValueError(f"not a read-model table: {name!r}")
        with self._write(None) as run:
            for name in tables:
                run(f"DELETE FROM {self._table(name)}")
            run(
                f"DELETE FROM {self._tracking_table()} WHERE application_name <> :keep",
                {"keep": MIGRATION_ROW},
            )

    # --- queries ---------------------------------------------------------------------------
    def discard_log(
        self, deal_id: UUID | str, after_step: int | None = None
    ) -> list[dict[str, Any]]:
        """The deal's public discard log (R-VIEW-2), oldest first, entries after
        ``after_step`` only if given; each entry as ``public_entry`` made it."""
        sql = (
            f"SELECT step, kind, {', '.join(DISCARD_FIELDS)} FROM {self._table(DISCARD_LOG)} "
            "WHERE deal_id = :deal_id"
        )
        params: dict[str, Any] = {"deal_id": self._id(deal_id)}
        if after_step is not None:
            sql += " AND step > :after_step"
            params["after_step"] = int(after_step)
        with self._read() as run:
            rows = run(sql + " ORDER BY step", params)
        entries = []
        for row in rows:
            entry: dict[str, Any] = {"step": int(row["step"]), "kind": row["kind"]}
            for field in DISCARD_FIELDS:
                value = row[field]
                if value is not None:
                    entry[field] = bool(value) if field in _BOOLEAN_FIELDS else value
            entries.append(entry)
        return entries

    def draw_log(self, deal_id: UUID | str, seat: int) -> list[dict[str, Any]]:
        """The private draw log of ``seat`` in the deal (R-VIEW-3): its rows only."""
        with self._read() as run:
            rows = run(
                f"SELECT step, seat, cards, replacement FROM {self._table(DRAW_LOG)} "
                "WHERE deal_id = :deal_id AND seat = :seat ORDER BY step",
                {"deal_id": self._id(deal_id), "seat": _check_seat(seat)},
            )
        return [
            {
                "step": int(row["step"]),
                "seat": int(row["seat"]),
                "cards": self._cards_out(row["cards"]),
                "replacement": bool(row["replacement"]),
            }
            for row in rows
        ]

    def score_table(self, table_id: UUID | str) -> dict[str, Any]:
        """The game's score table: every deal the table recorded, in order, with each side's
        breakdown (R-SCORE-1), deal total and cumulative total; ``totals`` after the last."""
        with self._read() as run:
            rows = run(
                "SELECT d.deal_id, d.deal_number, d.reason, s.side, s.total, s.breakdown, "
                f"s.cumulative FROM {self._table(DEAL_SCORES)} s "
                f"JOIN {self._table(SCORE_DEALS)} d ON d.deal_id = s.deal_id "
                "WHERE s.table_id = :table_id AND s.cumulative IS NOT NULL "
                "ORDER BY d.deal_number, s.side",
                {"table_id": self._id(table_id)},
            )
        deals: list[dict[str, Any]] = []
        for row in rows:
            deal_id = str(self._id(row["deal_id"]))
            if not deals or deals[-1]["deal_id"] != deal_id:
                deals.append(
                    {
                        "deal_id": deal_id,
                        "number": int(row["deal_number"]),
                        "reason": row["reason"],
                        "scores": {},
                    }
                )
            side: dict[str, Any] = (
                self._json_out(row["breakdown"])
                if row["breakdown"] is not None
                else {"total": row["total"]}  # recorded by the table, not scored (yet)
            )
            side["cumulative"] = row["cumulative"]
            deals[-1]["scores"][row["side"]] = side
        totals = {s: v["cumulative"] for s, v in deals[-1]["scores"].items()} if deals else {}
        return {"table_id": str(self._id(table_id)), "deals": deals, "totals": totals}

    def lobby(self, status: str = "open", limit: int = 100) -> list[dict[str, Any]]:
        """The tables of one status, newest first: what a lobby lists (all of it public)."""
        if status not in LOBBY_STATUSES:
            raise ValueError(f"not a table status: {status!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"not a limit: {limit!r}")
        with self._read() as run:
            rows = run(
                f"SELECT * FROM {self._table(LOBBY)} WHERE status = :status "
                "ORDER BY created_position DESC LIMIT :limit",
                {"status": status, "limit": limit},
            )
        tables = []
        for row in rows:
            plain = self._plain(LOBBY, row)
            seats = plain["seats"]
            tables.append(
                {
                    "id": plain["table_id"],
                    "entry": plain["entry"],
                    "players": plain["players"],
                    "options": plain["options"],
                    "target": plain["target"],
                    "host": plain["host"],
                    "seats": seats,
                    "free_seats": sum(1 for name in seats if name is None),
                    "sides": plain["sides"],
                    "totals": plain["totals"],
                    "status": plain["status"],
                    "deals": plain["deals"],
                    "current_deal": plain["current_deal"],
                    "winners": plain["winners"],
                    "version": plain["version"],
                    "created_at": plain["created_at"],
                    "updated_at": plain["updated_at"],
                }
            )
        return tables

    def rows(self, table: str) -> list[dict[str, Any]]:
        """Every row of a view table in primary-key order (checks and diagnostics)."""
        if table not in VIEW_TABLES:
            raise ValueError(f"not a read-model table: {table!r}")
        with self._read() as run:
            rows = run(f"SELECT * FROM {self._table(table)} ORDER BY {_ORDER[table]}")
        return [self._plain(table, row) for row in rows]

    def _plain(self, table: str, row: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in row.items():
            if value is None:
                pass
            elif key in _UUID_COLUMNS:
                value = str(self._id(value))
            elif key == "cards":
                value = self._cards_out(value)
            elif key in _JSON_COLUMNS:
                value = self._json_out(value)
            elif key in _TIME_COLUMNS:
                value = self._time_out(value)
            elif key in _BOOLEAN_FIELDS or key == "replacement":
                value = bool(value)
            out[key] = value
        return out


# --- PostgreSQL ------------------------------------------------------------------------------


def postgres_view_ddl(schema: str) -> list[str]:
    """The view tables on PostgreSQL (alembic revisions 0002 and 0003 create the same in
    "public")."""
    s = '"' + schema.replace('"', '""') + '"'
    return [
        f"CREATE TABLE IF NOT EXISTS {s}.discard_log ("
        "deal_id uuid NOT NULL, "
        "step bigint NOT NULL, "
        "kind text NOT NULL, "
        "seat integer, "
        "card text, "
        "top text, "
        "size integer, "
        "crosswise boolean, "
        "partner integer, "
        "yes boolean, "
        "PRIMARY KEY (deal_id, step))",
        f"CREATE TABLE IF NOT EXISTS {s}.draw_log ("
        "deal_id uuid NOT NULL, "
        "step bigint NOT NULL, "
        "seat integer NOT NULL, "
        "cards text[] NOT NULL, "
        "replacement boolean NOT NULL, "
        "PRIMARY KEY (deal_id, step))",
        f"CREATE INDEX IF NOT EXISTS draw_log_seat_idx ON {s}.draw_log (deal_id, seat, step)",
        f"CREATE TABLE IF NOT EXISTS {s}.score_deals ("
        "deal_id uuid NOT NULL, "
        "table_id uuid NOT NULL, "
        "deal_number integer NOT NULL, "
        "reason text, "
        "PRIMARY KEY (deal_id))",
        f"CREATE INDEX IF NOT EXISTS score_deals_table_idx "
        f"ON {s}.score_deals (table_id, deal_number)",
        f"CREATE TABLE IF NOT EXISTS {s}.deal_scores ("
        "table_id uuid NOT NULL, "
        "deal_id uuid NOT NULL, "
        "deal_number integer NOT NULL, "
        "side text NOT NULL, "
        + "".join(f"{key} integer, " for key in BREAKDOWN if key != "total")
        + "total integer NOT NULL, "
        "breakdown jsonb, "
        "cumulative integer, "
        "PRIMARY KEY (deal_id, side))",
        f"CREATE INDEX IF NOT EXISTS deal_scores_table_idx "
        f"ON {s}.deal_scores (table_id, deal_number)",
        *postgres_lobby_ddl(schema),
    ]


def postgres_lobby_ddl(schema: str) -> list[str]:
    """The lobby on PostgreSQL (alembic revision 0003 creates the same in "public")."""
    s = '"' + schema.replace('"', '""') + '"'
    return [
        f"CREATE TABLE IF NOT EXISTS {s}.tables ("
        "table_id uuid NOT NULL, "
        "entry text NOT NULL, "
        "players integer NOT NULL, "
        "options jsonb NOT NULL, "
        "target integer NOT NULL, "
        "host text NOT NULL, "
        "seats jsonb NOT NULL, "
        "sides jsonb, "
        "totals jsonb, "
        "status text NOT NULL, "
        "deals integer NOT NULL, "
        "current_deal uuid, "
        "winners jsonb, "
        "version integer NOT NULL, "
        "created_position bigint NOT NULL, "
        "updated_position bigint NOT NULL, "
        "created_at timestamp with time zone NOT NULL, "
        "updated_at timestamp with time zone NOT NULL, "
        "PRIMARY KEY (table_id))",
        f"CREATE INDEX IF NOT EXISTS tables_status_idx ON {s}.tables (status, created_position)",
    ]


def _covered(tracked: Tracking | None, tracking: Tracking) -> bool:
    """Whether a batch's recorded position ``tracked`` already covers ``tracking``."""
    return (
        tracked is not None
        and tracked.application_name == tracking.application_name
        and tracking.notification_id <= tracked.notification_id
    )


@lru_cache(maxsize=256)
def _returns_rows(sql: str) -> bool:
    """Whether a statement of this module answers with rows (SELECT, or RETURNING)."""
    return sql.lstrip().upper().startswith("SELECT") or " RETURNING " in sql.upper()


@lru_cache(maxsize=256)
def _pyformat(sql: str) -> str:
    """``:name`` parameters as psycopg's ``%(name)s`` (the SQL here has no other ``:`` or ``%``)."""
    return re.sub(r"(?<![:\w]):([a-z_]+)", r"%(\1)s", sql)


#: At most this many rows per multi-row INSERT (PostgreSQL takes up to 65,535 parameters).
_ROWS_PER_INSERT = 1000


class PostgresReadModelRecorder(ReadModelRecorder, PostgresTrackingRecorder):
    """The read models in PostgreSQL: the library's tracking recorder plus the view tables.

    Constructed by ``eventsourcing.projection.ProjectionRunner`` through the PostgreSQL
    infrastructure factory, whose tracking table is ``<projection name>_tracking``.
    """

    def __init__(
        self,
        datastore: PostgresDatastore,
        *,
        tracking_table_name: str = "notification_tracking",
        **kwargs: Any,
    ) -> None:
        super().__init__(
            datastore, tracking_table_name=_check_identifier(tracking_table_name), **kwargs
        )
        if not self.datastore.single_row_tracking:
            raise ProgrammingError("the read models need single-row tracking tables")
        self.sql_create_statements.extend(
            SQL(statement).format() for statement in postgres_view_ddl(self.datastore.schema)
        )
        self._schema = '"' + self.datastore.schema.replace('"', '""') + '"'
        self._insert_texts: dict[tuple[str, tuple[str, ...], int], str] = {}

    def _table(self, name: str) -> str:
        return f"{self._schema}.{_check_identifier(name)}"

    def _json(self, value: Any) -> Any:
        return Jsonb(value)

    def _tracking_table(self) -> str:
        return self._table(self.tracking_table_name)

    @contextmanager
    def _transaction(self, *, commit: bool) -> Iterator[Cursor[DictRow]]:
        with self.datastore.transaction(commit=commit) as curs:
            yield curs

    @contextmanager
    def _batch_transaction(self, *, pipelined: bool) -> Iterator[Cursor[DictRow]]:
        if not pipelined:
            with self._transaction(commit=True) as curs:
                yield curs
            return
        with self.datastore.get_connection() as conn, conn.pipeline(), conn.transaction():
            yield conn.cursor()

    def _runner(self, curs: Cursor[DictRow]) -> Run:
        def run(sql: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
            curs.execute(_pyformat(sql), params or {}, prepare=True)
            # Only statements with rows wait for the answer (in a pipeline, the others
            # are sent on and their errors raised at the next sync or the commit).
            return [dict(row) for row in curs.fetchall()] if _returns_rows(sql) else []

        return run

    def _insert_rows(
        self,
        curs: Cursor[DictRow],
        table: str,
        columns: tuple[str, ...],
        rows: Sequence[tuple[Any, ...]],
    ) -> None:
        """One multi-row INSERT per chunk, with PostgreSQL's ``$n`` placeholders (a raw
        cursor: psycopg would parse a ``%s`` query of this size again every time)."""
        raw = RawCursor(curs.connection)
        for first in range(0, len(rows), _ROWS_PER_INSERT):
            chunk = rows[first : first + _ROWS_PER_INSERT]
            raw.execute(
                self._multirow_insert(table, columns, len(chunk)),
                [value for row in chunk for value in row],
            )

    def _multirow_insert(self, table: str, columns: tuple[str, ...], rows: int) -> str:
        key = (table, columns, rows)
        text = self._insert_texts.get(key)
        if text is None:
            values = numbered_rows(rows, len(columns))
            text = f"INSERT INTO {self._table(table)} ({', '.join(columns)}) VALUES {values}"
            self._insert_texts[key] = text
        return text


# --- SQLite ----------------------------------------------------------------------------------


def sqlite_view_ddl() -> list[str]:
    """The view tables on SQLite, in the same file as the events."""
    return [
        "CREATE TABLE IF NOT EXISTS discard_log ("
        "deal_id TEXT NOT NULL, "
        "step INTEGER NOT NULL, "
        "kind TEXT NOT NULL, "
        "seat INTEGER, "
        "card TEXT, "
        "top TEXT, "
        "size INTEGER, "
        "crosswise INTEGER, "
        "partner INTEGER, "
        "yes INTEGER, "
        "PRIMARY KEY (deal_id, step)) WITHOUT ROWID",
        "CREATE TABLE IF NOT EXISTS draw_log ("
        "deal_id TEXT NOT NULL, "
        "step INTEGER NOT NULL, "
        "seat INTEGER NOT NULL, "
        "cards TEXT NOT NULL, "
        "replacement INTEGER NOT NULL, "
        "PRIMARY KEY (deal_id, step)) WITHOUT ROWID",
        "CREATE INDEX IF NOT EXISTS draw_log_seat_idx ON draw_log (deal_id, seat, step)",
        "CREATE TABLE IF NOT EXISTS score_deals ("
        "deal_id TEXT NOT NULL, "
        "table_id TEXT NOT NULL, "
        "deal_number INTEGER NOT NULL, "
        "reason TEXT, "
        "PRIMARY KEY (deal_id)) WITHOUT ROWID",
        "CREATE INDEX IF NOT EXISTS score_deals_table_idx ON score_deals (table_id, deal_number)",
        "CREATE TABLE IF NOT EXISTS deal_scores ("
        "table_id TEXT NOT NULL, "
        "deal_id TEXT NOT NULL, "
        "deal_number INTEGER NOT NULL, "
        "side TEXT NOT NULL, "
        + "".join(f"{key} INTEGER, " for key in BREAKDOWN if key != "total")
        + "total INTEGER NOT NULL, "
        "breakdown TEXT, "
        "cumulative INTEGER, "
        "PRIMARY KEY (deal_id, side)) WITHOUT ROWID",
        "CREATE INDEX IF NOT EXISTS deal_scores_table_idx ON deal_scores (table_id, deal_number)",
        "CREATE TABLE IF NOT EXISTS tables ("
        "table_id TEXT NOT NULL, "
        "entry TEXT NOT NULL, "
        "players INTEGER NOT NULL, "
        "options TEXT NOT NULL, "
        "target INTEGER NOT NULL, "
        "host TEXT NOT NULL, "
        "seats TEXT NOT NULL, "
        "sides TEXT, "
        "totals TEXT, "
        "status TEXT NOT NULL, "
        "deals INTEGER NOT NULL, "
        "current_deal TEXT, "
        "winners TEXT, "
        "version INTEGER NOT NULL, "
        "created_position INTEGER NOT NULL, "
        "updated_position INTEGER NOT NULL, "
        "created_at TEXT NOT NULL, "
        "updated_at TEXT NOT NULL, "
        "PRIMARY KEY (table_id)) WITHOUT ROWID",
        "CREATE INDEX IF NOT EXISTS tables_status_idx ON tables (status, created_position)",
    ]


class SQLiteReadModelRecorder(ReadModelRecorder, SQLiteTrackingRecorder):
    """The read models in SQLite: the library's tracking recorder plus the view tables.

    The library's SQLite tracking table is always called ``tracking``, one per database file;
    each projection here has its own, ``<projection name>_tracking`` as on PostgreSQL (each
    tracks its position in the same application's log).
    """

    def __init__(
        self,
        datastore: SQLiteDatastore,
        *,
        tracking_table_name: str = "notification_tracking",
        **kwargs: Any,
    ) -> None:
        # Set before the base class builds its CREATE statements.
        self.tracking_table_name = _check_identifier(tracking_table_name)
        super().__init__(datastore, **kwargs)
        if not self.datastore.single_row_tracking:
            raise ProgrammingError("the read models need single-row tracking tables")
        table = self.tracking_table_name
        self.insert_tracking_statement = (
            f"INSERT INTO {table} "
            "VALUES (:application_name, :notification_id) "
            "ON CONFLICT (application_name) DO UPDATE "
            "SET notification_id = :notification_id "
            f"WHERE {table}.notification_id < :notification_id "
            "RETURNING notification_id"
        )
        self.select_max_tracking_id_statement = (
            f"SELECT MAX(notification_id) FROM {table} WHERE application_name=?"
        )

    def construct_create_table_statements(self) -> list[str]:
        return [
            f"CREATE TABLE IF NOT EXISTS {self.tracking_table_name} ("
            "application_name TEXT, "
            "notification_id INTEGER, "
            "PRIMARY KEY "
            "(application_name)) "
            "WITHOUT ROWID",
            *sqlite_view_ddl(),
        ]

    def create_table(self) -> None:
        # The library's version migrates a legacy table named "tracking"; there is none here.
        # A process starting beside a running server finds everything made already: then it
        # only reads, since a deferred transaction that has to write next to another writer
        # fails at once with "database is locked" instead of waiting.
        with self.datastore.transaction(commit=False) as c:
            c.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                (self.tracking_table_name,),
            )
            exists = c.fetchone() is not None
            if exists:
                c.execute(
                    f"SELECT 1 FROM {self.tracking_table_name} WHERE application_name = ?",
                    (MIGRATION_ROW,),
                )
                exists = c.fetchone() is not None
        if exists and self._views_exist():
            return
        with self.datastore.transaction(commit=True) as c:
            self._create_table(c)

    def _views_exist(self) -> bool:
        with self.datastore.transaction(commit=False) as c:
            c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            names = {row[0] for row in c.fetchall()}
        return all(table in names for table in VIEW_TABLES)

    def _create_table(self, c: SQLiteCursor) -> None:
        for statement in self.create_table_statements:
            c.execute(statement)
        c.execute(
            f"INSERT INTO {self.tracking_table_name} VALUES (?, 1) "
            "ON CONFLICT (application_name) DO NOTHING",
            (MIGRATION_ROW,),
        )

    def _table(self, name: str) -> str:
        return _check_identifier(name)

    def _tracking_table(self) -> str:
        return self.tracking_table_name

    def _id(self, value: UUID | str) -> Any:
        return str(super()._id(value))

    def _cards(self, cards: Sequence[str]) -> Any:
        return json.dumps(list(cards))

    def _cards_out(self, value: Any) -> list[str]:
        cards: list[str] = json.loads(value)
        return cards

    def _json(self, value: Any) -> Any:
        return json.dumps(value, sort_keys=True)

    def _json_out(self, value: Any) -> Any:
        return json.loads(value)

    def _time(self, value: datetime) -> Any:
        return self._time_out(value)

    @contextmanager
    def _transaction(self, *, commit: bool) -> Iterator[SQLiteCursor]:
        with self.datastore.transaction(commit=commit) as c:
            yield c

    def _runner(self, c: SQLiteCursor) -> Run:
        def run(sql: str, params: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
            c.execute(sql, dict(params or {}))
            return [dict(row) for row in c.fetchall()]

        return run

    def _insert_rows(
        self, c: SQLiteCursor, table: str, columns: tuple[str, ...], rows: Sequence[tuple[Any, ...]]
    ) -> None:
        marks = ", ".join("?" for _ in columns)
        c.executemany(
            f"INSERT INTO {self._table(table)} ({', '.join(columns)}) VALUES ({marks})", rows
        )


__all__ = [
    "BREAKDOWN",
    "DEAL_SCORES",
    "DISCARD_LOG",
    "DRAW_LOG",
    "LOBBY",
    "LOBBY_STATUSES",
    "SCORE_DEALS",
    "VIEW_TABLES",
    "AlreadyProcessed",
    "PostgresReadModelRecorder",
    "ReadModelRecorder",
    "SQLiteReadModelRecorder",
    "postgres_lobby_ddl",
    "postgres_view_ddl",
    "sqlite_view_ddl",
]
