"""PostgreSQL: the elected process follows the log (LISTEN/NOTIFY), its lease is an advisory
lock that a broken connection gives up, and alembic creates the same tables as the recorders
do. (Election between two processes and retries after an error: ``test_lease.py``.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from eventsourcing.persistence import ProgrammingError
from eventsourcing.postgres import PostgresFactory
from eventsourcing.utils import Environment

from app.application import CanastaApp
from app.infra.projection_runner import LEASE_KEY, ReadModels, tracking_table_name
from app.infra.read_model_store import MIGRATION_ROW, PostgresReadModelRecorder
from app.migrations import downgrade, upgrade
from app.settings import Settings, eventsourcing_env
from projections.read_models import PROJECTIONS
from projections.view import VIEW_TABLES
from tests.projections.helpers import assert_read_models_match
from tests.support.games import random_game
from tests.support.waiting import wait_for

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_settings(migrated_postgres_url: str) -> Settings:
    return Settings(database_url=migrated_postgres_url, postgres_pool_size=4)


@pytest.fixture
def pg_app(pg_settings: Settings) -> Iterator[CanastaApp]:
    app = CanastaApp(eventsourcing_env(pg_settings))
    try:
        yield app
    finally:
        app.close()


def test_the_leader_follows_the_log_with_listen_notify(
    pg_settings: Settings, pg_app: CanastaApp
) -> None:
    # A poll interval far longer than the test: only the NOTIFY of each insert can wake it.
    with ReadModels(pg_settings, app=pg_app, poll_interval=60) as rm:
        rm.start()
        wait_for(lambda: rm.is_leading, what="for the lease")
        table_id = random_game(pg_app, 21, "classic", 4, max_deals=2)
        head = rm.head()
        # The background thread does the work: nothing is pulled in this thread.
        wait_for(lambda: all(w.has_processed(head) for w in rm.workers.values()))
        rm.wait_until(head, timeout=5)
        assert_read_models_match(pg_app, rm, [table_id])
        # Read-your-writes: after one more command, wait_until() sees it processed.
        table_id2 = random_game(pg_app, 22, "classic", 2, max_deals=1)
        rm.wait_until(timeout=5)
        assert_read_models_match(pg_app, rm, [table_id, table_id2])
        rm.rebuild()
        assert rm.is_running
        assert_read_models_match(pg_app, rm, [table_id, table_id2])
        rm.stop()
        assert not rm.is_leading


def _lease_holders(url: str) -> list[int]:
    """The server pids of the sessions holding the read-models lease in this database (an
    advisory lock is per database; pg_locks shows the whole cluster's, and the other test
    workers' databases have leaders of their own)."""
    high, low = (LEASE_KEY & 0xFFFF_FFFF_FFFF_FFFF) >> 32, LEASE_KEY & 0xFFFF_FFFF
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND classid = %s AND objid = %s AND objsubid = 1",
            (high, low),
        ).fetchall()
    return [row[0] for row in rows]


def test_the_lease_is_the_documented_advisory_lock(pg_settings: Settings) -> None:
    assert LEASE_KEY == -6377569059128348955
    url = pg_settings.database_url
    assert url is not None
    with ReadModels(pg_settings, lease_retry_seconds=0.1) as rm:
        assert _lease_holders(url) == []
        rm.start()
        wait_for(lambda: rm.is_leading, what="for the lease")
        assert len(_lease_holders(url)) == 1
        rm.stop()
        wait_for(lambda: _lease_holders(url) == [], what="for the lease's release")


def test_a_leader_whose_lease_connection_breaks_stops_leading_and_takes_it_again(
    pg_settings: Settings, pg_app: CanastaApp, caplog: pytest.LogCaptureFixture
) -> None:
    url = pg_settings.database_url
    assert url is not None
    with ReadModels(pg_settings, app=pg_app, lease_retry_seconds=0.1) as rm:
        rm.start()
        wait_for(lambda: rm.is_leading, what="for the lease")
        [holder] = _lease_holders(url)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT pg_terminate_backend(%s)", (holder,))
        wait_for(lambda: "lost the lease" in caplog.text, what="for the lost lease")
        # Alone on the database, it takes the lease again, on a new connection.
        wait_for(lambda: rm.is_leading and _lease_holders(url) not in ([], [holder]))
        table_id = random_game(pg_app, 25, "classic", 2, max_deals=1)
        head = rm.head()
        wait_for(lambda: all(w.has_processed(head) for w in rm.workers.values()))
        assert_read_models_match(pg_app, rm, [table_id])


def test_read_models_need_the_migration(empty_postgres_url: str) -> None:
    upgrade(empty_postgres_url, "0001")
    settings = Settings(database_url=empty_postgres_url, postgres_pool_size=2)
    app = CanastaApp(eventsourcing_env(settings))
    try:
        with pytest.raises(ProgrammingError, match="alembic upgrade head"):
            ReadModels(settings, app=app)
    finally:
        app.close()


def _catalog(url: str, schema: str) -> dict[str, Any]:
    def rows(sql: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(url) as conn:
            found = conn.execute(sql, (schema,)).fetchall()
        return sorted(
            tuple(v.replace(f"{schema}.", "") if isinstance(v, str) else v for v in row)
            for row in found
        )

    ours = tuple([*VIEW_TABLES, *(tracking_table_name(p) for p in PROJECTIONS)])
    names = "(" + ", ".join(f"'{n}'" for n in ours) + ")"
    return {
        "tables": rows(
            "SELECT c.relname, c.relkind, c.reloptions::text FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            f"WHERE n.nspname = %s AND c.relkind = 'r' AND c.relname IN {names}"
        ),
        "columns": rows(
            "SELECT table_name, column_name, ordinal_position, data_type, udt_name, "
            "is_nullable, column_default FROM information_schema.columns "
            f"WHERE table_schema = %s AND table_name IN {names}"
        ),
        "indexes": rows(
            f"SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s "
            f"AND tablename IN {names}"
        ),
    }


def test_migration_creates_what_the_recorders_create(migrated_postgres_url: str) -> None:
    url = migrated_postgres_url
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS libref CASCADE")
        conn.execute("CREATE SCHEMA libref")
    env = eventsourcing_env(Settings(database_url=url, postgres_pool_size=1))
    env.update({"POSTGRES_SCHEMA": "libref", "CREATE_TABLE": "y"})
    for projection in PROJECTIONS:
        # As the library's ProjectionRunner constructs a view: factory named after it.
        factory = PostgresFactory(Environment(projection.name, env))
        try:
            view = factory.tracking_recorder(PostgresReadModelRecorder)
            assert view.tracking_table_name == tracking_table_name(projection)
        finally:
            factory.close()
    try:
        ours, library = _catalog(url, "public"), _catalog(url, "libref")
        assert ours == library
        assert len(ours["tables"]) == len(VIEW_TABLES) + len(PROJECTIONS)
        with psycopg.connect(url) as conn:
            for projection in PROJECTIONS:
                table = tracking_table_name(projection)
                for schema in ("public", "libref"):
                    rows = conn.execute(f'SELECT * FROM "{schema}"."{table}"').fetchall()
                    assert rows == [(MIGRATION_ROW, 1)]
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP SCHEMA libref CASCADE")

    # With CREATE_TABLE on, the library accepts the migrated tables as they are.
    env = eventsourcing_env(Settings(database_url=url, postgres_pool_size=1))
    env["CREATE_TABLE"] = "y"
    factory = PostgresFactory(Environment("discard_log", env))
    try:
        factory.tracking_recorder(PostgresReadModelRecorder)
    finally:
        factory.close()
    assert _catalog(url, "public") == ours


def test_downgrade_to_0001_removes_the_read_models(migrated_postgres_url: str) -> None:
    downgrade(migrated_postgres_url, "0001")
    assert _catalog(migrated_postgres_url, "public") == {"tables": [], "columns": [], "indexes": []}
    upgrade(migrated_postgres_url)
    assert len(_catalog(migrated_postgres_url, "public")["tables"]) == len(VIEW_TABLES) + len(
        PROJECTIONS
    )
