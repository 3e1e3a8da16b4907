"""What an app leaves behind when it stops: nothing. Its shutdown (the end of ``with
TestClient(app)``, uvicorn's on SIGTERM) stops its threads (the read models' and the bots'
leaders, the group committer, the streams' follower) and closes its connections before it
returns; and a start-up that fails part-way, once the read models have started, closes what it
had started too. Before, such a process kept its read-models leader running and holding the
lease in its database: another server on that database never led the read models (its lobby
stayed as it was), and the next test on that database found the lease held by a session of its
own process."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psycopg
import pytest
from eventsourcing.persistence import ProgrammingError
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from tests.support.databases import own_database
from tests.support.http import open_table
from tests.support.keys import key_file

#: The names of the threads an app starts (app.infra.projection_runner, app.bot_runner,
#: app.infra.group_commit, app.fanout, app.replica).
APP_THREADS = {"read-models", "bots", "group-commit", "canasta-event-hub", "replica-pools"}


def app_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name in APP_THREADS}


def sessions(url: str | None) -> set[tuple[int, str]]:
    """The other sessions open on ``url``'s database (pid, application name); none off
    PostgreSQL."""
    if url is None:
        return set()
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT pid, application_name FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return {(row[0], row[1]) for row in rows}


def sessions_left(url: str | None, before: set[tuple[int, str]]) -> set[tuple[int, str]]:
    """The sessions on ``url``'s database that were not there ``before``, once those closed
    have gone: a server process ends a moment after its client closed the connection."""
    deadline = time.monotonic() + 5
    while (left := sessions(url) - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def names(threads: set[threading.Thread]) -> list[str]:
    return sorted(t.name for t in threads)


def settings_for(
    database_url: str | None, tmp_path: Path, read_database_url: str | None = None
) -> Settings:
    """SQLite in ``tmp_path`` (None) or PostgreSQL, with a signing key there for the latter."""
    return Settings(
        database_url=database_url,
        read_database_url=read_database_url,
        data_dir=tmp_path / "data",
        signing_key_file=key_file(tmp_path) if database_url is not None else None,
    )


@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_an_apps_shutdown_stops_its_threads_and_closes_its_connections(
    store: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = request.getfixturevalue("migrated_postgres_url") if store == "postgres" else None
    threads, connections = app_threads(), sessions(url)
    with TestClient(create_app(settings_for(url, tmp_path))) as http:
        game = open_table(http)
        assert http.get(f"/deals/{game.deal_id}", headers=game.host).status_code == 200
        http.app.state.read_models.catch_up()  # type: ignore[attr-defined]
        assert {"read-models", "bots"} <= set(names(app_threads() - threads))
    assert names(app_threads() - threads) == [], "a thread of the app outlived its shutdown"
    left = sessions_left(url, connections)
    assert left == set(), f"connections outlived the app's shutdown: {left}"


@pytest.mark.postgres
def test_a_start_up_that_fails_once_the_read_models_started_leaves_nothing_running(
    migrated_postgres_url: str, tmp_path: Path
) -> None:
    threads, connections = app_threads(), sessions(migrated_postgres_url)
    # A read replica without the read models' tables stops the start-up (docs/scaling.md):
    # by then the read models' leader has started on the primary. (One without any schema
    # is refused before anything starts, tests/app/test_startup_refusals.py: this one says
    # it has the migrations, an alembic_version alone.)
    with own_database(migrated_postgres_url, "canasta_unmigrated") as (unmigrated, _):
        with psycopg.connect(unmigrated, autocommit=True) as conn:
            conn.execute("CREATE TABLE alembic_version (version_num varchar(32) PRIMARY KEY)")
            conn.execute("INSERT INTO alembic_version VALUES ('0009')")
        failing = create_app(
            settings_for(migrated_postgres_url, tmp_path, read_database_url=unmigrated)
        )
        with pytest.raises(ProgrammingError, match="has no tables"), TestClient(failing):
            pass
    assert names(app_threads() - threads) == [], "a thread outlived the failed start-up"
    left = sessions_left(migrated_postgres_url, connections)
    assert left == set(), f"connections outlived the failed start-up: {left}"

    # Another server on the database leads the read models: its lobby shows a new table.
    with TestClient(create_app(settings_for(migrated_postgres_url, tmp_path))) as http:
        read_models = http.app.state.read_models  # type: ignore[attr-defined]
        deadline = time.monotonic() + 10
        while not read_models.is_leading:
            assert time.monotonic() < deadline, "the read models' lease is held elsewhere"
            time.sleep(0.05)
        game = open_table(http, start=False)
        read_models.catch_up()
        listed = http.get("/tables", params={"status": "open"}).json()
        assert game.table in [t["id"] for t in listed]
