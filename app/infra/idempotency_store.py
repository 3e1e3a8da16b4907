"""The idempotency keys' table (``Idempotency-Key``, ``app.idempotency``): one row per key
in use, shared by every server process of one database.

The table, ``idempotency_keys``, is described once here as SQLAlchemy Core ``MetaData``:
alembic revision 0007 creates it on PostgreSQL (the application never creates tables there);
on SQLite it is created here, ``IF NOT EXISTS``, in the same file as the events; the
in-memory store keeps it in a private in-memory SQLite database (that store belongs to one
process). Correctness rests on the table's primary key alone: two requests under one key,
in one process or two, both ``INSERT``; exactly one row goes in, and the other request
reads it.

A row: ``key_id`` (a hash of the caller, the route and the key: the key itself is not
stored), ``fingerprint`` (a hash of the request's body), ``claim`` (the id of the request
that holds the key while it runs), ``status`` (null while it runs) and ``answer`` (the
stored answer, encrypted with a key derived from the idempotency key: see
``app.idempotency``), ``created_at`` and ``expires_at`` (Unix seconds).
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import Column, Float, Index, Integer, MetaData, PrimaryKeyConstraint, Table, Text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.schema import CreateIndex, CreateTable

TABLE = "idempotency_keys"


def _metadata() -> MetaData:
    metadata = MetaData()
    Table(
        TABLE,
        metadata,
        Column("key_id", Text(), nullable=False),
        Column("fingerprint", Text(), nullable=False),
        Column("claim", Text(), nullable=False),
        Column("status", Integer()),
        Column("answer", Text()),
        Column("created_at", Float(), nullable=False),
        Column("expires_at", Float(), nullable=False),
        PrimaryKeyConstraint("key_id"),
        Index("idempotency_keys_expires_idx", "expires_at"),
        sqlite_with_rowid=False,
    )
    return metadata


METADATA = _metadata()


def create_statements(dialect: Dialect, schema: str | None = None) -> list[str]:
    """``CREATE TABLE/INDEX IF NOT EXISTS`` of the table, compiled for ``dialect``."""
    metadata = METADATA
    if schema is not None:
        metadata = MetaData()
        METADATA.tables[TABLE].to_metadata(metadata, schema=schema)
    table = next(iter(metadata.tables.values()))
    statements = [str(CreateTable(table, if_not_exists=True).compile(dialect=dialect)).strip()]
    for index in sorted(table.indexes, key=lambda index: str(index.name)):
        statements.append(str(CreateIndex(index, if_not_exists=True).compile(dialect=dialect)))
    return statements


def postgres_ddl(schema: str) -> list[str]:
    return create_statements(postgresql.dialect(), schema)


def sqlite_ddl() -> list[str]:
    return create_statements(sqlite.dialect())


@dataclass(frozen=True)
class Row:
    """A key's row as stored."""

    fingerprint: str
    claim: str
    status: int | None
    answer: str | None
    created_at: float
    expires_at: float


#: A transaction: a context manager yielding a DB-API cursor, committed at its end.
Transaction = Callable[[], AbstractContextManager[Any]]


@lru_cache(maxsize=64)
def _pyformat(sql: str) -> str:
    """``:name`` parameters as psycopg's ``%(name)s``."""
    return re.sub(r"(?<![:\w]):([a-z_]+)", r"%(\1)s", sql)


class IdempotencyStore:
    """The rows of ``idempotency_keys``, each change in one short transaction of its own."""

    def __init__(self, transaction: Transaction, *, table: str, pyformat: bool) -> None:
        self._transaction = transaction
        self._table = table
        self._pyformat = pyformat

    # --- construction ----------------------------------------------------------------------
    @classmethod
    def for_datastore(cls, datastore: Any) -> IdempotencyStore:
        """The store in the library's datastore: PostgreSQL (the table made by alembic) or a
        SQLite file (the table made here); None-like stores use ``in_memory``."""
        if hasattr(datastore, "schema"):  # PostgresDatastore
            schema = '"' + str(datastore.schema).replace('"', '""') + '"'
            return cls(
                lambda: datastore.transaction(commit=True),
                table=f"{schema}.{TABLE}",
                pyformat=True,
            )
        store = cls(lambda: datastore.transaction(commit=True), table=TABLE, pyformat=False)
        store.create_table()
        return store

    @classmethod
    def in_memory(cls) -> IdempotencyStore:
        """A private in-memory SQLite database (the in-memory event store's process)."""
        connection = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        lock = threading.Lock()

        @contextmanager
        def transaction() -> Iterator[sqlite3.Cursor]:
            with lock:
                cursor = connection.cursor()
                cursor.execute("BEGIN")
                try:
                    yield cursor
                except BaseException:
                    cursor.execute("ROLLBACK")
                    raise
                cursor.execute("COMMIT")

        store = cls(transaction, table=TABLE, pyformat=False)
        store.create_table()
        return store

    def create_table(self) -> None:
        """On SQLite, unless it is there already: a process starting beside a running server
        then only reads (a deferred transaction that reads, then writes next to another
        writer fails at once with "database is locked" instead of waiting)."""
        with self._transaction() as cursor:
            cursor.execute(
                "SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'index') "
                "AND tbl_name = :table",
                {"table": TABLE},
            )
            found = cursor.fetchone()
            if found is not None and self._values(found)[0] >= len(sqlite_ddl()):
                return
        with self._transaction() as cursor:
            for statement in sqlite_ddl():
                cursor.execute(statement)

    # --- statements ------------------------------------------------------------------------
    def _run(self, cursor: Any, sql: str, params: dict[str, Any]) -> None:
        sql = sql.replace("{table}", self._table)
        cursor.execute(_pyformat(sql) if self._pyformat else sql, params)

    @staticmethod
    def _values(row: Any) -> tuple[Any, ...]:
        return tuple(row.values()) if isinstance(row, dict) else tuple(row)

    def insert(self, key_id: str, fingerprint: str, claim: str, now: float, ttl: float) -> bool:
        """Claim a key that has no row: True if this call's row went in, False if the key
        has one already (another request's, live or expired)."""
        with self._transaction() as cursor:
            self._run(
                cursor,
                "INSERT INTO {table} (key_id, fingerprint, claim, status, answer, created_at, "
                "expires_at) VALUES (:key_id, :fingerprint, :claim, NULL, NULL, :now, :expires) "
                "ON CONFLICT (key_id) DO NOTHING RETURNING key_id",
                {
                    "key_id": key_id,
                    "fingerprint": fingerprint,
                    "claim": claim,
                    "now": now,
                    "expires": now + ttl,
                },
            )
            return bool(cursor.fetchall())

    def get(self, key_id: str) -> Row | None:
        with self._transaction() as cursor:
            self._run(
                cursor,
                "SELECT fingerprint, claim, status, answer, created_at, expires_at "
                "FROM {table} WHERE key_id = :key_id",
                {"key_id": key_id},
            )
            found = cursor.fetchone()
        if found is None:
            return None
        fingerprint, claim, status, answer, created_at, expires_at = self._values(found)
        return Row(fingerprint, claim, status, answer, float(created_at), float(expires_at))

    def take_over(
        self, key_id: str, fingerprint: str, claim: str, old_claim: str, now: float, ttl: float
    ) -> bool:
        """Replace the row that still holds ``old_claim`` (an expired key, or a request that
        never answered) by a new claim; False if another request changed it first."""
        with self._transaction() as cursor:
            self._run(
                cursor,
                "UPDATE {table} SET fingerprint = :fingerprint, claim = :claim, status = NULL, "
                "answer = NULL, created_at = :now, expires_at = :expires "
                "WHERE key_id = :key_id AND claim = :old_claim RETURNING key_id",
                {
                    "key_id": key_id,
                    "fingerprint": fingerprint,
                    "claim": claim,
                    "old_claim": old_claim,
                    "now": now,
                    "expires": now + ttl,
                },
            )
            return bool(cursor.fetchall())

    def finish(self, key_id: str, claim: str, status: int, answer: str) -> None:
        """Store the answer of the request that holds the key."""
        with self._transaction() as cursor:
            self._run(
                cursor,
                "UPDATE {table} SET status = :status, answer = :answer "
                "WHERE key_id = :key_id AND claim = :claim",
                {"key_id": key_id, "claim": claim, "status": status, "answer": answer},
            )

    def release(self, key_id: str, claim: str) -> None:
        """Free the key (its request changed nothing): a retry runs again."""
        with self._transaction() as cursor:
            self._run(
                cursor,
                "DELETE FROM {table} WHERE key_id = :key_id AND claim = :claim",
                {"key_id": key_id, "claim": claim},
            )

    def purge(self, now: float) -> None:
        """Delete the expired keys."""
        with self._transaction() as cursor:
            self._run(cursor, "DELETE FROM {table} WHERE expires_at < :now", {"now": now})


__all__ = ["METADATA", "TABLE", "IdempotencyStore", "Row", "postgres_ddl", "sqlite_ddl"]
