"""The alembic migration creates the schema that eventsourcing needs with ``CREATE_TABLE=n``,
and the read-model tables that ``app.infra.read_model_store.schema.METADATA`` describes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from eventsourcing.persistence import ProgrammingError
from sqlalchemy import create_engine, inspect, pool

from app.infra.read_model_store.schema import METADATA, postgres_view_ddl
from app.migrations import downgrade, sqlalchemy_url, upgrade
from app.settings import Settings, eventsourcing_env
from tests.infra.probe import CanastaProbe
from tests.support.databases import schema_made_by

pytestmark = pytest.mark.postgres


@contextmanager
def probe_app(url: str, **overrides: str) -> Iterator[CanastaProbe]:
    env = eventsourcing_env(Settings(database_url=url, postgres_pool_size=2))
    env.update(overrides)
    app = CanastaProbe(env=env)
    try:
        yield app
    finally:
        app.close()


def fetch(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql, params).fetchall()


def test_env_does_not_let_the_library_create_tables(postgres_url: str) -> None:
    env = eventsourcing_env(Settings(database_url=postgres_url))
    assert env["CREATE_TABLE"] == env["CANASTA_CREATE_TABLE"] == "n"
    assert env["PERSISTENCE_MODULE"] == "app.infra.persistence:PrimaryFactory"


def test_migrated_schema_stores_and_lists_events(migrated_postgres_url: str) -> None:
    with probe_app(migrated_postgres_url) as app:
        assert app.factory.env_create_table() is False  # type: ignore[attr-defined]
        counter_id = app.create_counter("tricks", increments=2)

        counter = app.get_counter(counter_id)
        assert (counter.name, counter.count, counter.version) == ("tricks", 2, 3)

        notifications = app.notification_log.select(start=1, limit=10)
        assert [n.id for n in notifications] == [1, 2, 3]
        assert {n.originator_id for n in notifications} == {counter_id}
        assert [n.originator_version for n in notifications] == [1, 2, 3]

        # Snapshots go to canasta_snapshots.
        app.take_snapshot(counter_id)
        assert app.get_counter(counter_id).count == 2

    rows = fetch(migrated_postgres_url, "SELECT count(*) FROM canasta_events")
    assert rows == [(3,)]
    rows = fetch(migrated_postgres_url, "SELECT originator_version FROM canasta_snapshots")
    assert rows == [(3,)]

    # A second process (new application object) sees the same log.
    with probe_app(migrated_postgres_url) as other:
        assert other.get_counter(counter_id).count == 2
        assert other.recorder.max_notification_id() == 3


def test_unmigrated_schema_fails_clearly(empty_postgres_url: str) -> None:
    with probe_app(empty_postgres_url) as app:
        with pytest.raises(ProgrammingError, match=r"canasta_events|stored_event_uuid"):
            app.create_counter("tricks")
        with pytest.raises(
            ProgrammingError, match=r'relation "public\.canasta_events" does not exist'
        ):
            app.notification_log.select(start=1, limit=10)

    tables = fetch(
        empty_postgres_url,
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public'",
    )
    assert tables == []


def _catalog(url: str, schema: str) -> dict[str, Any]:
    """What the schema contains, with the schema name removed from definitions."""

    def strip(value: Any) -> Any:
        return value.replace(f"{schema}.", "") if isinstance(value, str) else value

    def rows(sql: str) -> list[tuple[Any, ...]]:
        return sorted(tuple(strip(v) for v in row) for row in fetch(url, sql, schema))

    return {
        "tables": rows(
            "SELECT c.relname, c.relkind, c.reloptions::text FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relname <> 'alembic_version' "
            "AND c.relname <> 'alembic_version_pkc'"
        ),
        "columns": rows(
            "SELECT table_name, column_name, ordinal_position, data_type, is_nullable, "
            "column_default FROM information_schema.columns "
            "WHERE table_schema = %s AND table_name <> 'alembic_version'"
        ),
        "indexes": rows(
            "SELECT indexname, indexdef FROM pg_indexes "
            "WHERE schemaname = %s AND tablename <> 'alembic_version'"
        ),
        "types": rows(
            "SELECT t.typname, a.attname, a.attnum, format_type(a.atttypid, a.atttypmod) "
            "FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
            "JOIN pg_class c ON c.oid = t.typrelid JOIN pg_attribute a ON a.attrelid = c.oid "
            "WHERE n.nspname = %s AND t.typtype = 'c' AND c.relkind = 'c' AND a.attnum > 0"
        ),
        "functions": rows(
            "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname = %s"
        ),
    }


def test_migration_matches_the_library_ddl(migrated_postgres_url: str) -> None:
    url = migrated_postgres_url
    downgrade(url, "0001")  # the event store alone: what the library itself would create
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS libref CASCADE")
        conn.execute("CREATE SCHEMA libref")
    # Let the library create its own schema in "libref" (snapshotting on: snapshots table too).
    with probe_app(url, CANASTA_POSTGRES_SCHEMA="libref", CANASTA_CREATE_TABLE="y") as app:
        app.create_counter("reference")

    ours = _catalog(url, "public")
    library = _catalog(url, "libref")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA libref CASCADE")

    # The one deliberate difference: the insert function used only with
    # POSTGRES_ENABLE_DB_FUNCTIONS=y, which this project never enables.
    assert library.pop("functions") == [("es_insert_events_uuid",)]
    assert ours.pop("functions") == []
    assert ours == library
    events_options = next(t[2] for t in ours["tables"] if t[0] == "canasta_events")
    assert "autovacuum_vacuum_threshold=100000000" in events_options
    assert {t[0] for t in ours["tables"]} == {
        "canasta_events",
        "canasta_events_notification_id_idx",
        "canasta_events_notification_id_seq",
        "canasta_events_pkey",
        "canasta_snapshots",
        "canasta_snapshots_pkey",
        "stored_event_uuid",
    }


def test_migration_adopts_a_schema_the_library_created(empty_postgres_url: str) -> None:
    with probe_app(empty_postgres_url, CANASTA_CREATE_TABLE="y") as app:
        counter_id = app.create_counter("before")
    upgrade(empty_postgres_url)  # tables and type already exist: no error
    with probe_app(empty_postgres_url) as app:
        assert app.get_counter(counter_id).name == "before"


def test_downgrade_removes_everything(migrated_postgres_url: str) -> None:
    downgrade(migrated_postgres_url)
    objects = fetch(
        migrated_postgres_url,
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'public' AND c.relname NOT LIKE 'alembic_version%%'",
    )
    assert objects == []
    upgrade(migrated_postgres_url)
    with probe_app(migrated_postgres_url) as app:
        counter_id = app.create_counter("again")
        assert app.get_counter(counter_id).name == "again"


def test_the_events_table_is_kept_out_of_autovacuum(migrated_postgres_url: str) -> None:
    """Migration 0004: a VACUUM or ANALYZE of the events table holds SHARE UPDATE EXCLUSIVE,
    which the write path's table lock waits for, so autovacuum would stall every command."""
    url = migrated_postgres_url

    def options() -> str:
        rows = fetch(url, "SELECT reloptions::text FROM pg_class WHERE relname = 'canasta_events'")
        return str(rows[0][0])

    assert "autovacuum_enabled=false" in options()
    # Why: while a session holds what VACUUM/ANALYZE hold, a command cannot be saved.
    with psycopg.connect(url) as vacuum_like, probe_app(url) as app:
        vacuum_like.execute("LOCK TABLE canasta_events IN SHARE UPDATE EXCLUSIVE MODE")
        with psycopg.connect(url) as writer:
            writer.execute("SET lock_timeout = '200ms'")
            with pytest.raises(psycopg.errors.LockNotAvailable):
                writer.execute("LOCK TABLE canasta_events IN EXCLUSIVE MODE")
        vacuum_like.rollback()
        app.create_counter("saved once the lock is gone")
    downgrade(url, "0003")
    assert "autovacuum_enabled=true" in options()
    upgrade(url)
    assert "autovacuum_enabled=false" in options()


def _described(url: str, schema: str) -> dict[str, Any]:
    """The view tables of ``schema`` as PostgreSQL reports them: each column's type (as
    PostgreSQL formats it), nullability and default, the primary key, every index."""
    engine = create_engine(sqlalchemy_url(url), poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            inspector = inspect(conn)
            tables: dict[str, Any] = {}
            for name in METADATA.tables:
                types: dict[str, str] = dict(
                    conn.exec_driver_sql(
                        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) "
                        "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
                        "JOIN pg_namespace n ON n.oid = c.relnamespace "
                        "WHERE n.nspname = %(schema)s AND c.relname = %(table)s "
                        "AND a.attnum > 0 AND NOT a.attisdropped",
                        {"schema": schema, "table": name},
                    ).all()
                )
                tables[name] = {
                    "columns": [
                        (c["name"], types[c["name"]], c["nullable"], c["default"])
                        for c in inspector.get_columns(name, schema=schema)
                    ],
                    "primary_key": inspector.get_pk_constraint(name, schema=schema)[
                        "constrained_columns"
                    ],
                    "indexes": sorted(
                        (i["name"], tuple(i["column_names"]), bool(i["unique"]))
                        for i in inspector.get_indexes(name, schema=schema)
                    ),
                }
            return tables
    finally:
        engine.dispose()


def test_the_read_model_metadata_is_what_alembic_creates(migrated_postgres_url: str) -> None:
    """The read-model schema is written once (SQLAlchemy ``MetaData``); the frozen alembic
    revisions 0002 and 0003 wrote it by hand: created from the metadata in a schema of its
    own, it must be the same tables, columns, types, nullability, keys and indexes."""
    url = migrated_postgres_url
    with schema_made_by(url, "metaref", postgres_view_ddl("metaref")) as described:
        ours, alembic = _described(url, described), _described(url, "public")
    assert ours == alembic
    assert set(ours) == {"discard_log", "draw_log", "score_deals", "deal_scores", "tables"}
    assert ours["draw_log"]["columns"][3] == ("cards", "text[]", False, None)
    assert ours["tables"]["indexes"] == [
        ("tables_current_deal_idx", ("current_deal",), False),
        ("tables_last_move_idx", ("status", "last_move_at"), False),
        ("tables_status_idx", ("status", "created_position"), False),
    ]
