"""The read-model tables, written once as SQLAlchemy Core ``MetaData``.

Compiled per dialect: on PostgreSQL (uuid, bigint, boolean, jsonb, text[], timestamptz) when
``CREATE_TABLE`` is on (otherwise alembic creates them: the frozen revisions 0002 and 0003
create the same, ``tests/infra/test_schema.py`` compares them); on SQLite (TEXT and INTEGER,
``WITHOUT ROWID``) in the same file as the events. The tracking tables are the library's.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    Uuid,
    text,
    true,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine.interfaces import Dialect
from sqlalchemy.schema import CreateIndex, CreateTable
from sqlalchemy.types import TypeEngine

from projections.view import BREAKDOWN

# Column types: PostgreSQL's own, and on SQLite the storage classes the recorder converts to.
_UUID: TypeEngine[Any] = Uuid(as_uuid=True).with_variant(Text(), "sqlite")
_STEP: TypeEngine[Any] = BigInteger().with_variant(Integer(), "sqlite")
_BOOL: TypeEngine[Any] = Boolean().with_variant(Integer(), "sqlite")
_JSON: TypeEngine[Any] = postgresql.JSONB().with_variant(Text(), "sqlite")
_CARDS: TypeEngine[Any] = postgresql.ARRAY(Text()).with_variant(Text(), "sqlite")
_TIME: TypeEngine[Any] = DateTime(timezone=True).with_variant(Text(), "sqlite")


def _metadata() -> MetaData:
    metadata = MetaData()
    Table(
        "discard_log",
        metadata,
        Column("deal_id", _UUID, nullable=False),
        Column("step", _STEP, nullable=False, autoincrement=False),
        Column("kind", Text(), nullable=False),
        Column("seat", Integer()),
        Column("card", Text()),
        Column("top", Text()),
        Column("size", Integer()),
        Column("crosswise", _BOOL),
        Column("partner", Integer()),
        Column("yes", _BOOL),
        PrimaryKeyConstraint("deal_id", "step"),
        sqlite_with_rowid=False,
    )
    Table(
        "draw_log",
        metadata,
        Column("deal_id", _UUID, nullable=False),
        Column("step", _STEP, nullable=False, autoincrement=False),
        Column("seat", Integer(), nullable=False),
        Column("cards", _CARDS, nullable=False),
        Column("replacement", _BOOL, nullable=False),
        PrimaryKeyConstraint("deal_id", "step"),
        Index("draw_log_seat_idx", "deal_id", "seat", "step"),
        sqlite_with_rowid=False,
    )
    Table(
        "score_deals",
        metadata,
        Column("deal_id", _UUID, nullable=False),
        Column("table_id", _UUID, nullable=False),
        Column("deal_number", Integer(), nullable=False),
        Column("reason", Text()),
        PrimaryKeyConstraint("deal_id"),
        Index("score_deals_table_idx", "table_id", "deal_number"),
        sqlite_with_rowid=False,
    )
    Table(
        "deal_scores",
        metadata,
        Column("table_id", _UUID, nullable=False),
        Column("deal_id", _UUID, nullable=False),
        Column("deal_number", Integer(), nullable=False),
        Column("side", Text(), nullable=False),
        *(Column(key, Integer()) for key in BREAKDOWN if key != "total"),
        Column("total", Integer(), nullable=False),
        Column("breakdown", _JSON),
        Column("cumulative", Integer()),
        PrimaryKeyConstraint("deal_id", "side"),
        Index("deal_scores_table_idx", "table_id", "deal_number"),
        sqlite_with_rowid=False,
    )
    Table(
        "tables",
        metadata,
        Column("table_id", _UUID, nullable=False),
        Column("entry", Text(), nullable=False),
        Column("players", Integer(), nullable=False),
        Column("options", _JSON, nullable=False),
        Column("target", Integer(), nullable=False),
        Column("host", Text(), nullable=False),
        Column("seats", _JSON, nullable=False),
        Column("sides", _JSON),
        Column("totals", _JSON),
        Column("status", Text(), nullable=False),
        Column("deals", Integer(), nullable=False),
        Column("current_deal", _UUID),
        Column("winners", _JSON),
        Column("version", Integer(), nullable=False),
        Column("created_position", _STEP, nullable=False),
        Column("updated_position", _STEP, nullable=False),
        Column("created_at", _TIME, nullable=False),
        Column("updated_at", _TIME, nullable=False),
        # Revision 0005 (docs/tables.md): an unlisted table is never listed; one without
        # spectators only while open.
        Column("listed", _BOOL, nullable=False, server_default=true()),
        Column("spectators", _BOOL, nullable=False, server_default=true()),
        # Revision 0006 (docs/tables.md): the turn clock, and the seats the bot plays for
        # their absent players (room seat numbers, ascending).
        Column("turn_seconds", Integer()),
        Column("away", _JSON, nullable=False, server_default=text("'[]'")),
        # Revision 0009 (docs/api.md, the lobby): the time of the table's last move, within
        # a minute (app/infra/read_model_store/lobby.py); the tables in play are listed by it,
        # and a move finds its table by its current deal.
        Column("last_move_at", _TIME),
        PrimaryKeyConstraint("table_id"),
        Index("tables_status_idx", "status", "created_position"),
        Index("tables_last_move_idx", "status", "last_move_at"),
        Index("tables_current_deal_idx", "current_deal"),
        sqlite_with_rowid=False,
    )
    return metadata


#: The view tables (no schema: PostgreSQL's is given when compiling, ``postgres_view_ddl``).
METADATA = _metadata()


@lru_cache(maxsize=16)
def _in_schema(schema: str | None) -> MetaData:
    if schema is None:
        return METADATA
    metadata = MetaData()
    for table in METADATA.tables.values():
        table.to_metadata(metadata, schema=schema)
    return metadata


def create_statements(dialect: Dialect, schema: str | None = None) -> list[str]:
    """``CREATE TABLE/INDEX IF NOT EXISTS`` of every view table, compiled for ``dialect``."""
    statements: list[str] = []
    for table in _in_schema(schema).tables.values():  # in the order written above
        create = CreateTable(table, if_not_exists=True).compile(dialect=dialect)
        statements.append(str(create).strip())
        for index in sorted(table.indexes, key=lambda index: str(index.name)):
            statements.append(str(CreateIndex(index, if_not_exists=True).compile(dialect=dialect)))
    return statements


def postgres_view_ddl(schema: str) -> list[str]:
    """The view tables on PostgreSQL, in ``schema``."""
    return create_statements(postgresql.dialect(), schema)


def sqlite_view_ddl() -> list[str]:
    """The view tables on SQLite, in the same file as the events."""
    return create_statements(sqlite.dialect())


__all__ = ["METADATA", "create_statements", "postgres_view_ddl", "sqlite_view_ddl"]
