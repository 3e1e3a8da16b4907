"""The read models in SQLite, in the same file as the events (created here, ``IF NOT
EXISTS``, from the schema's ``MetaData``)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.persistence import ProgrammingError
from eventsourcing.sqlite import SQLiteCursor, SQLiteDatastore, SQLiteTrackingRecorder

from app.infra.read_model_store.base import MIGRATION_ROW, Run, check_identifier
from app.infra.read_model_store.recorder import ReadModelRecorder
from app.infra.read_model_store.schema import sqlite_view_ddl
from projections.view import LOBBY, VIEW_TABLES

#: Columns added to a view table after it was first created: a file made before gets them
#: (``ALTER TABLE ... ADD COLUMN``) when it is opened, as alembic revision 0005 does on
#: PostgreSQL: the lobby's privacy (docs/tables.md); as revision 0006 does, its turn clock
#: and away seats; and as revision 0009 does, its last move.
ADDED_COLUMNS: tuple[tuple[str, str, str], ...] = (
    (LOBBY, "listed", "INTEGER NOT NULL DEFAULT 1"),
    (LOBBY, "spectators", "INTEGER NOT NULL DEFAULT 1"),
    (LOBBY, "turn_seconds", "INTEGER"),
    (LOBBY, "away", "TEXT NOT NULL DEFAULT '[]'"),
    (LOBBY, "last_move_at", "TEXT"),
)
#: How an added column is filled in the rows already there (else: its default), as its
#: alembic revision does: a table's last move is its last event's time until a rebuild.
FILLED_COLUMNS: dict[tuple[str, str], str] = {
    (LOBBY, "last_move_at"): "updated_at",
}


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
        self.tracking_table_name = check_identifier(tracking_table_name)
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
            if not all(table in names for table in VIEW_TABLES):
                return False
            return not self._missing_columns(c)

    @staticmethod
    def _missing_columns(c: SQLiteCursor) -> list[tuple[str, str, str]]:
        missing = []
        for table, column, definition in ADDED_COLUMNS:
            c.execute(f"PRAGMA table_info({check_identifier(table)})")
            if column not in {row[1] for row in c.fetchall()}:
                missing.append((table, column, definition))
        return missing

    def _create_table(self, c: SQLiteCursor) -> None:
        # The tables first, then the columns a file made before lacks, then the indexes
        # (an index may be on such a column).
        statements = self.create_table_statements
        indexes = [s for s in statements if s.lstrip().upper().startswith("CREATE INDEX")]
        for statement in statements:
            if statement not in indexes:
                c.execute(statement)
        for table, column, definition in self._missing_columns(c):
            c.execute(f"ALTER TABLE {check_identifier(table)} ADD COLUMN {column} {definition}")
            source = FILLED_COLUMNS.get((table, column))
            if source is not None:
                c.execute(
                    f"UPDATE {check_identifier(table)} SET {column} = {check_identifier(source)}"
                )
        for statement in indexes:
            c.execute(statement)
        c.execute(
            f"INSERT INTO {self.tracking_table_name} VALUES (?, 1) "
            "ON CONFLICT (application_name) DO NOTHING",
            (MIGRATION_ROW,),
        )

    def _table(self, name: str) -> str:
        return check_identifier(name)

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
