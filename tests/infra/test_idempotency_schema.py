"""The idempotency keys' table (``app.infra.idempotency_store``): alembic revision 0007
creates on PostgreSQL what its ``MetaData`` describes (the server creates the same on
SQLite), and a downgrade removes it."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from app.infra.idempotency_store import TABLE, postgres_ddl
from app.migrations import downgrade, upgrade
from tests.support.databases import schema_made_by

pytestmark = pytest.mark.postgres


def _shape(url: str, schema: str) -> dict[str, Any]:
    with psycopg.connect(url) as conn:
        columns = conn.execute(
            "SELECT column_name, ordinal_position, data_type, is_nullable, column_default "
            "FROM information_schema.columns WHERE table_schema = %s AND table_name = %s "
            "ORDER BY ordinal_position",
            (schema, TABLE),
        ).fetchall()
        indexes = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s AND tablename = %s",
            (schema, TABLE),
        ).fetchall()
    return {
        "columns": columns,
        "indexes": sorted((n, d.replace(f"{schema}.", "")) for n, d in indexes),
    }


def test_the_migration_makes_the_table_the_metadata_describes(migrated_postgres_url: str) -> None:
    url = migrated_postgres_url
    with schema_made_by(url, "idemref", postgres_ddl("idemref")) as described:
        ours, theirs = _shape(url, "public"), _shape(url, described)
    assert ours["columns"] and ours == theirs


def test_a_downgrade_to_0006_removes_the_table_and_an_upgrade_brings_it_back(
    migrated_postgres_url: str,
) -> None:
    url = migrated_postgres_url
    downgrade(url, "0006")
    assert _shape(url, "public")["columns"] == []
    upgrade(url)
    assert len(_shape(url, "public")["columns"]) == 7
