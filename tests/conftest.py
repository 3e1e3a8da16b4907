"""Shared fixtures.

PostgreSQL tests get their server from ``TEST_DATABASE_URL``, which ``make test`` sets after
starting a throwaway cluster (scripts/pg.sh). Without it they are skipped locally, but fail on CI
(env ``CI`` set), so that a CI run can never pass by silently skipping them. The read-replica
tests get the cluster's streaming standby the same way, from ``TEST_READ_DATABASE_URL``
(``replica``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

from app.migrations import upgrade
from tests.support.replica import Replica

# The per-client limits (app/rate_limits.py) are off in the test process: tests send faster than
# a client may. Every ``Settings()`` made here reads it; the servers the tests start get it from
# their fixtures, which pass this setting on (tests/api/conftest.py, tests/e2e/server.py).
# ``CANASTA_RATE_LIMITS=true pytest ...`` runs tests with the default limits on;
# tests/api/test_rate_limits.py turns them on itself.
os.environ.setdefault("CANASTA_RATE_LIMITS", "false")
# The apps the tests build in this process log warnings and errors only: their INFO lines (a
# lease taken, a request answered) would otherwise interleave with pytest's own output. Tests
# that read log lines set the levels they need (caplog), which the server keeps
# (app/observability.py); the servers the tests start have their own settings.
os.environ.setdefault("CANASTA_LOG_LEVEL", "warning")


def _on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """URL of the test PostgreSQL database (``TEST_DATABASE_URL``)."""
    url = os.environ.get("TEST_DATABASE_URL", "").strip()
    if not url:
        if _on_ci():
            pytest.fail(
                "TEST_DATABASE_URL is not set on CI: PostgreSQL tests must run, not be skipped "
                "(run them with `make test`)",
                pytrace=False,
            )
        pytest.skip("needs PostgreSQL: run `make test` (it starts a throwaway server)")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker:
        url = worker_database(url, worker)
    return url


def worker_database(url: str, worker: str) -> str:
    """A database of its own for one pytest-xdist worker (``make test`` runs several), made
    afresh on the same server: the tests reset and migrate their database, so two workers
    must never share one. The database is named after the base one and the worker."""
    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/') or 'canasta_test'}_{worker}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return urlunsplit(parts._replace(path=f"/{name}"))


@pytest.fixture(scope="session")
def standby(postgres_url: str) -> Replica:
    """The test database on the test server's streaming standby (``TEST_READ_DATABASE_URL``,
    its URL with the worker's database name: a database made on the primary reaches the
    standby by replication), once the standby shows that database. Skipped locally without
    it, a failure on CI, like ``postgres_url``. Start one with ``scripts/pg.sh
    replica-start`` and set ``TEST_READ_DATABASE_URL="$(scripts/pg.sh replica-url)"``.
    Tests take ``replica``."""
    base = os.environ.get("TEST_READ_DATABASE_URL", "").strip()
    if not base:
        if _on_ci():
            pytest.fail(
                "TEST_READ_DATABASE_URL is not set on CI: the read-replica tests must run "
                "(run them with `make test`)",
                pytrace=False,
            )
        pytest.skip(
            "needs the test server's streaming standby: run `make test`, or "
            "`scripts/pg.sh replica-start` and TEST_READ_DATABASE_URL=$(scripts/pg.sh replica-url)"
        )
    name = urlsplit(postgres_url).path
    standby = Replica(urlunsplit(urlsplit(base)._replace(path=name)), postgres_url)
    standby.wait_for_database()
    return standby


@pytest.fixture
def replica(standby: Replica, migrated_postgres_url: str) -> Replica:
    """The standby (``standby``) with the test's freshly migrated database replayed: the
    test's app may start on it at once. The standby replays the primary's WAL a moment
    later, and is one for the whole cluster: while another worker's test has paused its
    replay (``Replica.paused``), this worker's new schema does not reach it. An app started
    on it before that found none of the read models' tables there and failed to start
    ("discard_log_tracking does not exist")."""
    standby.caught_up()
    return standby


def reset_schema(url: str) -> None:
    """Drop everything in the ``public`` schema (tables, types, functions, sequences)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS public CASCADE")
        conn.execute("CREATE SCHEMA public")


@pytest.fixture
def empty_postgres_url(postgres_url: str) -> str:
    """The test database with an empty ``public`` schema (no migrations applied)."""
    reset_schema(postgres_url)
    return postgres_url


@pytest.fixture
def migrated_postgres_url(empty_postgres_url: str) -> Iterator[str]:
    """The test database with a fresh ``public`` schema migrated to alembic's head."""
    upgrade(empty_postgres_url)
    yield empty_postgres_url
