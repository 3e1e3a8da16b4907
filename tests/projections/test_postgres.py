"""PostgreSQL: the library's ProjectionRunner keeps the read models live, a runner stopped by
an error is restarted, two servers can run the projections at once, and alembic creates the
same tables as the recorders do."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from eventsourcing.persistence import ProgrammingError, Tracking
from eventsourcing.postgres import PostgresFactory
from eventsourcing.utils import Environment

from app.application import CanastaApp
from app.migrations import downgrade, upgrade
from app.settings import Settings, eventsourcing_env
from projections.read_models import PROJECTIONS, DiscardLogProjection
from projections.runner import ReadModels, tracking_table_name
from projections.store import MIGRATION_ROW, VIEW_TABLES, PostgresReadModelRecorder
from tests.projections.helpers import assert_read_models_match, play

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


def wait_for(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_projection_runners_follow_the_log(pg_settings: Settings, pg_app: CanastaApp) -> None:
    with ReadModels(pg_settings, app=pg_app, supervise_interval=0.05) as rm:
        rm.start()
        assert all(live.is_running for live in rm._live.values())
        table_id = play(pg_app, 21, "classic", 4, max_deals=2)
        head = rm.head()
        # The runners do the work: nothing is pulled in this thread.
        wait_for(lambda: all(w.has_processed(head) for w in rm.workers.values()))
        rm.wait_until(head, timeout=5)
        assert_read_models_match(pg_app, rm, [table_id])
        # Read-your-writes: after one more command, wait_until() sees it processed.
        table_id2 = play(pg_app, 22, "classic", 2, max_deals=1)
        rm.wait_until(timeout=5)
        assert_read_models_match(pg_app, rm, [table_id, table_id2])
        rm.rebuild()
        assert rm.is_running
        assert_read_models_match(pg_app, rm, [table_id, table_id2])
        rm.stop()
        assert all(live.runner is None for live in rm._live.values())


def test_a_runner_stopped_by_an_error_is_restarted(
    pg_settings: Settings, pg_app: CanastaApp
) -> None:
    failed: list[int] = []

    class FailsOnce(DiscardLogProjection):
        def project(self, event: Any, tracking: Tracking) -> None:
            if not failed and tracking.notification_id > 100:
                failed.append(tracking.notification_id)
                raise RuntimeError("a transient failure")
            super().project(event, tracking)

    table_id = play(pg_app, 23, "classic", 4, max_deals=1)
    with ReadModels(
        pg_settings, app=pg_app, projections=(FailsOnce,), supervise_interval=0.05
    ) as rm:
        rm.start()
        live = rm._live["discard_log"]
        wait_for(lambda: live.failures == 1 and live.is_running)  # restarted after 1 s
        rm.wait_until(timeout=10)
        assert failed
        assert rm.discard_log(pg_app.get_table(table_id).deals[0])
    with ReadModels(pg_settings, app=pg_app) as rm:
        rm.catch_up()
        assert_read_models_match(pg_app, rm, [table_id])


def test_two_servers_run_the_projections_at_once(pg_settings: Settings, pg_app: CanastaApp) -> None:
    with (
        ReadModels(pg_settings, supervise_interval=0.05) as one,
        ReadModels(pg_settings, supervise_interval=0.05) as two,
    ):
        one.start()
        two.start()
        table_id = play(pg_app, 24, "classic", 4, max_deals=2)
        one.wait_until(timeout=10)
        two.wait_until(timeout=10)
        assert all(live.is_running and live.failures == 0 for live in one._live.values())
        assert all(live.is_running and live.failures == 0 for live in two._live.values())
        assert_read_models_match(pg_app, one, [table_id])
        assert one.dump() == two.dump()


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
