"""The read models in PostgreSQL.

The tables are created by alembic (``alembic/versions/0002_read_models.py`` and
``0003_lobby.py``; the application runs with ``CREATE_TABLE=n``); with ``CREATE_TABLE`` on,
the recorder creates them from the schema's ``MetaData`` (``schema.py``), which is the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from eventsourcing.persistence import ProgrammingError
from eventsourcing.postgres import PostgresDatastore, PostgresTrackingRecorder
from psycopg import Cursor, RawCursor
from psycopg.rows import DictRow
from psycopg.sql import SQL
from psycopg.types.json import Jsonb

from app.infra.library import run_once, within_wait
from app.infra.persistence import numbered_rows
from app.infra.read_model_store.base import Run, check_identifier
from app.infra.read_model_store.recorder import ReadModelRecorder
from app.infra.read_model_store.schema import postgres_view_ddl


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


@within_wait
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
            datastore, tracking_table_name=check_identifier(tracking_table_name), **kwargs
        )
        if not self.datastore.single_row_tracking:
            raise ProgrammingError("the read models need single-row tracking tables")
        self.sql_create_statements.extend(
            SQL(statement).format() for statement in postgres_view_ddl(self.datastore.schema)
        )
        self._schema = '"' + self.datastore.schema.replace('"', '""') + '"'
        self._insert_texts: dict[tuple[str, tuple[str, ...], int], str] = {}

    def _table(self, name: str) -> str:
        return f"{self._schema}.{check_identifier(name)}"

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


#: The read models' queries on a read replica (app.replica): each query once, no retries
#: (app.infra.library.run_once; a stopped replica is left aside at once).
ReplicaReadModelRecorder = run_once(PostgresReadModelRecorder, "ReplicaReadModelRecorder", __name__)
