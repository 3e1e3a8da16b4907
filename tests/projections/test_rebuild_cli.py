"""``canasta rebuild-read-models``: the operator's rebuild of every read model from the event
log, on the store the environment configures (SQLite or PostgreSQL)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.application import CanastaApp
from app.infra.projection_runner import ReadModels
from app.settings import Settings, eventsourcing_env
from projections.read_models import PROJECTIONS
from tests.projections.helpers import assert_read_models_match
from tests.support.cli import run_cli
from tests.support.games import random_game


def store_env(settings: Settings) -> dict[str, str]:
    if settings.database_url is not None:
        return {"DATABASE_URL": settings.database_url}
    return {"CANASTA_DATA_DIR": str(settings.data_dir)}


def test_rebuild_read_models_warns_reports_progress_and_rebuilds_the_same_rows(
    settings: Settings, app: CanastaApp
) -> None:
    table_ids = [
        random_game(app, 51, "classic", 4, max_deals=2),
        random_game(app, 52, "classic", 2),
    ]
    open_table = app.create_table("hal", "classic", 4)
    with ReadModels(settings, app=app) as rm:
        rm.catch_up()
        before, positions = rm.dump(), rm.positions()

    done = run_cli("rebuild-read-models", env=store_env(settings))
    assert done.returncode == 0, done.stderr
    assert "WARNING: stop every server" in done.stderr
    for projection in PROJECTIONS:
        assert f"{projection.name}: " in done.stdout
        assert f"{projection.name} at {positions[projection.name]}" in done.stdout
    assert f"table tables: {len(table_ids) + 1} rows" in done.stdout

    with ReadModels(settings, app=app) as rm:
        assert rm.positions() == positions
        assert rm.dump() == before
        assert_read_models_match(app, rm, [*table_ids, open_table])


def test_rebuild_read_models_refuses_the_in_memory_store(tmp_path: Path) -> None:
    done = run_cli("rebuild-read-models", env={"DATABASE_URL": "memory"})
    assert done.returncode == 2
    assert "in-memory store" in done.stderr


@pytest.mark.postgres
def test_rebuild_read_models_on_a_database_without_the_migrations_fails_clearly(
    empty_postgres_url: str,
) -> None:
    done = run_cli("rebuild-read-models", env={"DATABASE_URL": empty_postgres_url})
    assert done.returncode == 2
    assert "alembic upgrade head" in done.stderr


def test_the_rebuild_uses_the_settings_of_the_environment(tmp_path: Path) -> None:
    """An empty SQLite store: nothing to rebuild, every read model empty, exit 0. A folder
    without the store (a mistyped CANASTA_DATA_DIR) is refused first, and nothing made."""
    settings = Settings(data_dir=tmp_path / "data")
    done = run_cli("rebuild-read-models", env=store_env(settings))
    assert done.returncode == 2 and "no store at SQLite" in done.stderr, done.stderr
    assert not settings.data_dir.exists()
    app = CanastaApp(eventsourcing_env(settings))  # the store, as a server makes it
    done = run_cli("rebuild-read-models", env=store_env(settings))
    assert done.returncode == 0, done.stderr
    assert "from 0 events" in done.stdout
    try:
        with ReadModels(settings, app=app) as rm:
            assert all(rows == [] for rows in rm.dump().values())
    finally:
        app.close()


def test_rebuild_read_models_refuses_while_another_process_runs_them(
    settings: Settings, app: CanastaApp
) -> None:
    """docs/operations.md: the rebuild is maintenance with every server stopped. One left
    running (here a process that leads the read models, as a server or `canasta project`
    does) would project beside the rebuild and leave the read models incomplete: the rebuild
    refuses, says what to stop, and changes nothing (it used to warn and go on)."""
    random_game(app, 53, "classic", 2)
    with ReadModels(settings, app=app) as leader:
        leader.start()
        wait = 0
        while not leader.is_leading and wait < 300:
            time.sleep(0.05)
            wait += 1
        assert leader.is_leading
        leader.catch_up()
        before = leader.dump()
        done = run_cli("rebuild-read-models", env=store_env(settings))
        assert done.returncode == 2, done.stdout
        assert "another process runs them" in done.stderr
        assert "Stop every server, `canasta project` and `canasta bots`" in done.stderr
        assert "rebuilding" not in done.stdout
        assert leader.dump() == before
    done = run_cli("rebuild-read-models", env=store_env(settings))  # stopped: it runs
    assert done.returncode == 0, done.stderr
