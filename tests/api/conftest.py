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

``http`` is anything with httpx's ``Client`` interface: a ``TestClient`` or an
``httpx.Client(base_url=server.url)``.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
from fastapi.testclient import TestClient

from app.application import CanastaApp
from app.main import create_app
from app.schemas import command_body
from app.settings import Settings, eventsourcing_env
from domain import commands as c
from domain.legal import legal_command, seat_to_act
from domain.state import DealState

REPO = Path(__file__).resolve().parents[2]
PLAYERS = ("ann", "bob", "cyd", "dee", "eve", "fay")

#: Seconds a uvicorn process may take to answer /health, and to exit after SIGTERM.
SERVER_START_TIMEOUT = 30.0
SERVER_STOP_TIMEOUT = 15.0

Headers = dict[str, str]


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


def register_player(http: Any, name: str) -> Headers:
    """``POST /players {"name"}``; returns ``{"Authorization": "Bearer <token>"}``."""
    response = http.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


@pytest.fixture
def register() -> Callable[[Any, str], Headers]:
    """``register(http, name)``: registers ``name`` and returns his bearer-token headers."""
    return register_player


# --- games played through HTTP ----------------------------------------------------------------


@dataclass
class Game:
    """A table played through HTTP; room seat ``i`` belongs to ``names[i]``, and
    ``names[0]`` is the host. ``deal`` is the current deal's id once the game has started."""

    http: Any
    table: str
    names: list[str]
    headers: dict[str, Headers]
    deal: str | None = None
    seqs: dict[str, int] = field(default_factory=dict)

    @property
    def host(self) -> Headers:
        return self.headers[self.names[0]]

    def start(self, body: dict[str, Any] | None = None) -> str:
        """``POST /tables/{id}/start`` by the host; returns (and remembers) deal 1's id."""
        response = self.http.post(f"/tables/{self.table}/start", json=body, headers=self.host)
        assert response.status_code == 201, response.text
        self.deal = response.json()["deal"]
        return self.deal

    def next_deal(self) -> str:
        """``POST /tables/{id}/deals`` by the host; returns (and remembers) the new deal's id."""
        response = self.http.post(f"/tables/{self.table}/deals", headers=self.host)
        assert response.status_code == 201, response.text
        self.deal = response.json()["deal"]
        return self.deal

    def send(self, name: str, command: c.Command) -> httpx.Response:
        """One sequenced command of ``name`` on the current deal; ``expect`` is taken from
        what ``GET /deals/{id}`` shows him just before (R-CMD-1)."""
        assert self.deal is not None, "the game has not started"
        view = self.http.get(f"/deals/{self.deal}", headers=self.headers[name]).json()
        self.seqs[name] = self.seqs.get(name, 0) + 1
        request = {
            "seq": self.seqs[name],
            "expect": {
                "game": self.table,
                "deal": view["number"],
                "step": view["step"],
                "turn": view["turn"],
                "phase": view["phase"],
            },
            "command": command_body(command),
        }
        response: httpx.Response = self.http.post(
            f"/deals/{self.deal}/commands", json=request, headers=self.headers[name]
        )
        return response

    def play_deal(
        self,
        state_of: Callable[[str], DealState],
        rng: random.Random,
        *,
        max_commands: int = 5000,
        after_each: Callable[[int], None] | None = None,
    ) -> int:
        """Play the current deal to its end with random legal commands; returns how many were
        sent. ``state_of(deal_id)`` reads the deal's real state (to choose a legal command);
        ``after_each(n)`` runs after the n-th accepted command."""
        assert self.deal is not None, "the game has not started"
        sent = 0
        while True:
            st = state_of(self.deal)
            seat = seat_to_act(st)
            if seat is None:
                return sent
            assert sent < max_commands, f"the deal did not end in {max_commands} commands"
            response = self.send(self.names[seat], legal_command(st, seat, rng))
            assert response.status_code == 200, response.text
            sent += 1
            if after_each is not None:
                after_each(sent)


def open_table(
    http: Any,
    names: Sequence[str] = PLAYERS[:4],
    *,
    entry: str = "classic",
    teams: list[list[int]] | None = None,
    start: bool = True,
    start_body: dict[str, Any] | None = None,
) -> Game:
    """Register ``names``, let ``names[0]`` create a table for them all (``entry``), seat them
    in order, choose ``teams`` if given, and start the game unless ``start`` is False."""
    headers = {name: register_player(http, name) for name in names}
    response = http.post(
        "/tables", json={"entry": entry, "players": len(names)}, headers=headers[names[0]]
    )
    assert response.status_code == 201, response.text
    game = Game(http=http, table=response.json()["id"], names=list(names), headers=headers)
    for seat, name in enumerate(names):
        response = http.post(
            f"/tables/{game.table}/seats", json={"seat": seat}, headers=headers[name]
        )
        assert response.status_code == 200, response.text
    if teams is not None:
        response = http.put(f"/tables/{game.table}/teams", json={"teams": teams}, headers=game.host)
        assert response.status_code == 200, response.text
    if start:
        game.start(start_body)
    return game


@pytest.fixture
def open_game() -> Callable[..., Game]:
    """``open_game(http, names=..., entry=..., teams=..., start=True, start_body=None)``:
    a table seated by newly registered players (see ``open_table``), returned as a ``Game``."""
    return open_table


def state_reader(canasta: CanastaApp) -> Callable[[str], DealState]:
    """``state_of(deal_id)`` for ``Game.play_deal`` over an application service."""
    return lambda deal_id: canasta.get_deal(UUID(deal_id)).state


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


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _server_env(settings: Settings, extra: dict[str, str]) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("CANASTA_") and k != "DATABASE_URL"
    }
    env["CANASTA_DATA_DIR"] = str(settings.data_dir)
    if settings.database_url is not None:
        env["CANASTA_DATABASE_URL"] = settings.database_url
    env.update(extra)
    return env


@pytest.fixture
def uvicorn_server(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Factory: ``uvicorn_server(database_url=None, data_dir=None, env=None)`` starts a real
    ``uvicorn app.main:app`` on a free 127.0.0.1 port and returns it once ``/health`` answers.

    Without ``database_url`` it uses SQLite in ``data_dir`` (default ``tmp_path / "data"``,
    given as ``CANASTA_DATA_DIR``): two servers started with the same ``data_dir`` or the same
    PostgreSQL URL share one store. ``env`` adds environment variables (e.g.
    ``{"CANASTA_STREAM_POLL_SECONDS": "0.05"}``); ``CANASTA_*`` variables of the test process
    are not passed on. Each server's output goes to ``tmp_path / "uvicorn-<port>.log"``. Every
    server is stopped after the test; one that does not exit within 15 s of SIGTERM fails it.
    """
    servers: list[Server] = []

    def start(
        *,
        database_url: str | None = None,
        data_dir: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> Server:
        settings = Settings(database_url=database_url, data_dir=data_dir or tmp_path / "data")
        port = _free_port()
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
                    "warning",
                ],
                cwd=REPO,
                env=_server_env(settings, env or {}),
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
                if httpx.get(server.url + "/health", timeout=1.0).status_code == 200:
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
