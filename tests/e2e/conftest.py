"""A real server per test, on SQLite (as ``make run``) or on PostgreSQL with two workers."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from app.application import CanastaApp
from app.settings import Settings
from tests.e2e.client import Api, open_shadow
from tests.e2e.server import Server

#: uvicorn workers on PostgreSQL: requests are spread over processes sharing one database.
POSTGRES_WORKERS = 2
#: Each worker's command pool. A worker also opens a few connections for its read models (2
#: for queries, more while busy, 1 for the lease), and the test process some: this keeps a
#: crash and restart within PostgreSQL's default max_connections (100), with the killed
#: server's connections not yet all gone.
POSTGRES_POOL_SIZE = "4"


@dataclass
class Backend:
    """A running server and the settings of its store (for the test's own read-only apps)."""

    name: str
    server: Server
    settings: Settings
    _opened: list[CanastaApp | Api] = field(default_factory=list)

    def api(self) -> Api:
        api = Api(self.server.url)
        self._opened.append(api)
        return api

    def shadow(self) -> CanastaApp:
        app = open_shadow(self.settings)
        self._opened.append(app)
        return app

    def close(self) -> None:
        for opened in reversed(self._opened):
            opened.close()
        self._opened.clear()


def make_backend(
    name: str,
    workdir: Path,
    postgres_url: str | None = None,
    extra_env: dict[str, str] | None = None,
) -> Backend:
    if postgres_url is not None:
        env = {"CANASTA_POSTGRES_POOL_SIZE": POSTGRES_POOL_SIZE, **(extra_env or {})}
        server = Server(workdir, database_url=postgres_url, workers=POSTGRES_WORKERS, extra_env=env)
        # The test process's own applications read with one thread each: small pools.
        return Backend(name, server, Settings(database_url=postgres_url, postgres_pool_size=2))
    server = Server(workdir, extra_env=extra_env)
    return Backend(name, server, Settings(database_url=None, data_dir=server.data_dir))


BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def started_backend(
    request: pytest.FixtureRequest, workdir: Path, extra_env: dict[str, str] | None = None
) -> Iterator[Backend]:
    url = request.getfixturevalue("migrated_postgres_url") if request.param == "postgres" else None
    yield from running(make_backend(request.param, workdir, url, extra_env))


def running(backend: Backend) -> Iterator[Backend]:
    """The backend with its server started; afterwards closed, stopped, and its server's
    log checked clean (for fixtures: ``yield from running(...)``)."""
    backend.server.start()
    try:
        yield backend
    finally:
        backend.close()
        backend.server.stop()
    backend.server.assert_clean_log()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A started server: SQLite with one worker, or PostgreSQL (migrated) with two."""
    yield from started_backend(request, tmp_path)


@pytest.fixture(params=BACKENDS)
def test_mode_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """As ``backend``, on a server set up for tests: it accepts fixed dealers, decks and
    earlier scores at the start (``CANASTA_ALLOW_STACKED_DECKS``, R-DEAL-3)."""
    yield from started_backend(request, tmp_path, {"CANASTA_ALLOW_STACKED_DECKS": "true"})
