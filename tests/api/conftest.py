"""Shared fixtures of the HTTP API tests (tests/api). Real HTTP, real stores, no mocks.

Fixtures (each documented below):

- ``make_client(**settings)``: a started ``TestClient`` over ``create_app(Settings(...))``,
  in-memory store by default; ``client``: one such client.
- ``register(http, name)``: ``POST /players``; returns the player's ``Authorization`` headers.
- ``open_game(http, ...)``: a table whose seats are filled by newly registered players, started
  unless asked not to; returns a ``Game`` that sends sequenced commands (R-CMD-1) and can play a
  whole deal with the random legal player (``domain.legal``), as /tmp/smoke.py did.
- ``uvicorn_server(...)``: a real ``uvicorn app.main:app`` process on a free 127.0.0.1 port
  (SQLite in ``tmp_path`` through ``CANASTA_DATA_DIR`` by default, or a PostgreSQL URL), started
  and healthy (``/health``) before it is returned, stopped (SIGTERM) after the test.
- ``store_reader(settings)``: a ``CanastaApp`` in the test process over a server's store, to
  read what the server recorded (states, stored events) and compare with what HTTP showed.

The helpers behind ``register`` and ``open_game`` (``register_player``, ``open_table``,
``Game``, ``state_reader``) live in ``tests/support/http.py``, for tests outside this folder too.

``http`` is anything with httpx's ``Client`` interface: a ``TestClient`` or an
``httpx.Client(base_url=server.url)``.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from app.application import CanastaApp
from app.main import create_app
from app.settings import Settings, eventsourcing_env
from tests.e2e.server import STARTUP_SECONDS, server_env
from tests.support.http import Game, Headers, free_port, open_table, register_player
from tests.support.keys import key_file, needs_key
from tests.support.log_watch import LogWatch

REPO = Path(__file__).resolve().parents[2]

#: Seconds a uvicorn process may take to answer /health: the bound of tests/e2e/server.py (30 s
#: ran out for 5 servers of one run on a busy box; the wait ends as soon as /health answers).
SERVER_START_TIMEOUT = STARTUP_SECONDS
#: How long one /health request may take before it is tried again.
HEALTH_TIMEOUT = 2.0
#: Seconds a uvicorn process may take to exit after SIGTERM.
SERVER_STOP_TIMEOUT = 15.0


# --- in-process clients -----------------------------------------------------------------------


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """Factory: ``make_client(**settings)`` returns a started ``TestClient`` (lifespan run) over
    ``create_app(Settings(database_url="memory", data_dir=tmp_path / "data", **settings))``.

    Keyword arguments override those settings, e.g. ``allow_stacked_decks=True``,
    ``auditors=["audrey"]`` or ``database_url=None`` (SQLite in ``tmp_path``). The process's
    application service is ``client.app.state.canasta``. Every client is closed after the test.
    """
    clients: list[TestClient] = []

    def make(**settings: Any) -> TestClient:
        config = Settings(**{"database_url": "memory", "data_dir": tmp_path / "data", **settings})
        if needs_key(config.database_url) and config.signing_key_file is None:
            config = config.model_copy(update={"signing_key_file": key_file(tmp_path)})
        client = TestClient(create_app(config))
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in reversed(clients):
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    """A started ``TestClient`` over an in-memory store with default settings."""
    return make_client()


@pytest.fixture
def register() -> Callable[[Any, str], Headers]:
    """``register(http, name)``: registers ``name`` and returns his bearer-token headers."""
    return register_player


# --- games played through HTTP ----------------------------------------------------------------


@pytest.fixture
def open_game() -> Callable[..., Game]:
    """``open_game(http, names=..., entry=..., teams=..., start=True, start_body=None)``:
    a table seated by newly registered players (see ``open_table``), returned as a ``Game``."""
    return open_table


# --- real server processes --------------------------------------------------------------------


@dataclass
class Server:
    """A running ``uvicorn app.main:app`` process."""

    url: str
    process: subprocess.Popen[bytes]
    settings: Settings  # the store it uses: give it to ``store_reader`` to read the same data
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, timeout: float = SERVER_STOP_TIMEOUT) -> float:
        """SIGTERM, then wait for the exit; returns the seconds it took. A process still
        running after ``timeout`` is killed and the test fails (shutdown hung)."""
        began = time.monotonic()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                pytest.fail(f"uvicorn did not exit within {timeout}s of SIGTERM:\n{self.log()}")
        return time.monotonic() - began


@pytest.fixture
def uvicorn_server(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Factory: ``uvicorn_server(database_url=None, data_dir=None, env=None, log_level=...)``
    starts a real
    ``uvicorn app.main:app`` on a free 127.0.0.1 port and returns it once ``/health`` answers.

    Without ``database_url`` it uses SQLite in ``data_dir`` (default ``tmp_path / "data"``,
    given as ``CANASTA_DATA_DIR``): two servers started with the same ``data_dir`` or the same
    PostgreSQL URL share one store. ``env`` adds environment variables (e.g.
    ``{"CANASTA_STREAM_POLL_SECONDS": "0.05"}``); ``CANASTA_*`` variables of the test process
    are not passed on, but for ``CANASTA_RATE_LIMITS`` (off in tests: tests/conftest.py);
    ``log_level`` is uvicorn's (``warning``); ``args`` more of its options (``--workers``). Each server's output goes to ``tmp_path / "uvicorn-<port>.log"``. Every
    server is stopped after the test; one that does not exit within 15 s of SIGTERM fails it.
    """
    servers: list[Server] = []

    def start(
        *,
        database_url: str | None = None,
        data_dir: Path | None = None,
        env: dict[str, str] | None = None,
        log_level: str = "warning",
        args: tuple[str, ...] = (),
    ) -> Server:
        settings = Settings(database_url=database_url, data_dir=data_dir or tmp_path / "data")
        port = free_port()
        log_path = tmp_path / f"uvicorn-{port}.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "uvicorn",
                    "app.main:app",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--log-level",
                    log_level,
                    *args,
                ],
                cwd=REPO,
                env=server_env(settings.data_dir, settings.database_url, env),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        server = Server(f"http://127.0.0.1:{port}", process, settings, log_path)
        servers.append(server)
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if process.poll() is not None:
                pytest.fail(f"uvicorn exited with {process.returncode}:\n{server.log()}")
            try:
                if httpx.get(server.url + "/health", timeout=HEALTH_TIMEOUT).status_code == 200:
                    return server
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"uvicorn did not answer /health in time:\n{server.log()}")
            time.sleep(0.05)

    yield start
    for server in reversed(servers):
        server.stop()


@pytest.fixture
def store_reader() -> Iterator[Callable[[Settings], CanastaApp]]:
    """Factory: ``store_reader(server.settings)`` is a ``CanastaApp`` in the test process over
    that server's store (no aggregate cache, so every read sees the latest events). Closed
    after the test."""
    apps: list[CanastaApp] = []

    def make(settings: Settings) -> CanastaApp:
        config = settings.model_copy(update={"aggregate_cache_maxsize": 0})
        canasta = CanastaApp(env=eventsourcing_env(config))
        apps.append(canasta)
        return canasta

    yield make
    for canasta in apps:
        canasta.close()


@pytest.fixture
def log_watch(
    caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> Iterator[LogWatch]:
    """Every logger at DEBUG, and whatever is printed, for a secrecy test to scan."""
    watch = LogWatch(caplog, capsys)
    watch.start()
    yield watch
    watch.stop()
