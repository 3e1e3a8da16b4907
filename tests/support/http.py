"""Players and tables over HTTP, for any test that drives the API (``tests/api``, the old-store
test, the fixture builders).

``http`` is anything with httpx's ``Client`` interface: a ``TestClient`` or an
``httpx.Client(base_url=server.url)``.
"""

from __future__ import annotations

import os
import random
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import httpx

from app.application import CanastaApp
from app.schemas import command_body
from domain import commands as c
from domain.deal import Deal
from domain.legal import legal_command, seat_to_act
from domain.state import DealState

PLAYERS = ("ann", "bob", "cyd", "dee", "eve", "fay")

Headers = dict[str, str]


def register_player(http: Any, name: str) -> Headers:
    """``POST /players {"name"}``; returns ``{"Authorization": "Bearer <token>"}``."""
    response = http.post("/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


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
    invite: str | None = None  # a private table's invite code (POST /tables answered it)

    @property
    def host(self) -> Headers:
        return self.headers[self.names[0]]

    @property
    def deal_id(self) -> str:
        """The current deal's id, once the game has started."""
        assert self.deal is not None, "the game has not started"
        return self.deal

    def start(self, body: dict[str, Any] | None = None) -> str:
        """``POST /tables/{id}/start`` by the host; returns (and remembers) deal 1's id."""
        response = self.http.post(f"/tables/{self.table}/start", json=body, headers=self.host)
        assert response.status_code == 201, response.text
        self.deal = response.json()["deal"]
        return self.deal

    def next_deal(self, body: dict[str, Any] | None = None) -> str:
        """``POST /tables/{id}/deals`` by the host (``body``: e.g. a stacked ``deck``, which
        only a server set up for tests accepts); returns (and remembers) the new deal's id."""
        response = self.http.post(f"/tables/{self.table}/deals", json=body, headers=self.host)
        assert response.status_code == 201, response.text
        self.deal = response.json()["deal"]
        return self.deal

    def send(self, name: str, command: c.Command) -> httpx.Response:
        """One sequenced command of ``name`` on the current deal; ``expect`` is taken from
        what ``GET /deals/{id}`` shows him just before (R-CMD-1)."""
        self.seqs[name] = self.seqs.get(name, 0) + 1
        response: httpx.Response = self.http.post(
            f"/deals/{self.deal}/commands",
            json=self.request(name, command, self.seqs[name]),
            headers=self.headers[name],
        )
        return response

    def request(self, name: str, command: c.Command, seq: int | None) -> dict[str, Any]:
        """The body of a command of ``name`` (or of its dry run: ``seq`` may be None, then it
        is left out), ``expect`` taken from what ``GET /deals/{id}`` shows him now."""
        assert self.deal is not None, "the game has not started"
        view = self.http.get(f"/deals/{self.deal}", headers=self.headers[name]).json()
        body: dict[str, Any] = {
            "expect": {
                "game": self.table,
                "deal": view["number"],
                "step": view["step"],
                "turn": view["turn"],
                "phase": view["phase"],
            },
            "command": command_body(command),
        }
        if seq is not None:
            body["seq"] = seq
        return body

    def check(self, name: str, command: c.Command, seq: int | None = None) -> httpx.Response:
        """The dry run of a command of ``name`` (``POST /deals/{id}/commands/check``): no
        sequence number used."""
        response: httpx.Response = self.http.post(
            f"/deals/{self.deal}/commands/check",
            json=self.request(name, command, seq),
            headers=self.headers[name],
        )
        return response

    def play_one(self, state_of: Callable[[str], DealState], rng: random.Random) -> bool:
        """One random legal command of the seat to act on the current deal, which must be
        accepted; False (nothing sent) once the deal is over. ``state_of(deal_id)`` reads the
        deal's real state (to choose a legal command)."""
        st = state_of(self.deal_id)
        seat = seat_to_act(st)
        if seat is None:
            return False
        response = self.send(self.names[seat], legal_command(st, seat, rng))
        assert response.status_code == 200, response.text
        return True

    def play_commands(
        self, state_of: Callable[[str], DealState], rng: random.Random, commands: int
    ) -> None:
        """``commands`` random legal commands (``play_one``); the deal must not end first."""
        for sent in range(commands):
            assert self.play_one(state_of, rng), f"the deal ended after {sent} commands"

    def play_deal(
        self,
        state_of: Callable[[str], DealState],
        rng: random.Random,
        *,
        max_commands: int = 5000,
        after_each: Callable[[int], None] | None = None,
    ) -> int:
        """Play the current deal to its end with random legal commands (``play_one``);
        returns how many were sent. ``after_each(n)`` runs after the n-th accepted command."""
        sent = 0
        while self.play_one(state_of, rng):
            sent += 1
            assert sent <= max_commands, f"the deal did not end in {max_commands} commands"
            if after_each is not None:
                after_each(sent)
        return sent


def open_table(
    http: Any,
    names: Sequence[str] = PLAYERS[:4],
    *,
    entry: str = "classic",
    teams: list[list[int]] | None = None,
    start: bool = True,
    start_body: dict[str, Any] | None = None,
    table: dict[str, Any] | None = None,
) -> Game:
    """Register ``names``, let ``names[0]`` create a table for them all (``entry``, and
    ``table``: more fields of ``POST /tables``, e.g. ``private``), seat them in order (with
    the invite code of a private table), choose ``teams`` if given, and start the game
    unless ``start`` is False."""
    headers = {name: register_player(http, name) for name in names}
    body = {"entry": entry, "players": len(names), **(table or {})}
    response = http.post("/tables", json=body, headers=headers[names[0]])
    assert response.status_code == 201, response.text
    created = response.json()
    game = Game(
        http=http,
        table=created["id"],
        names=list(names),
        headers=headers,
        invite=created.get("invite"),
    )
    for seat, name in enumerate(names):
        join = {"seat": seat} if game.invite is None else {"seat": seat, "invite": game.invite}
        response = http.post(f"/tables/{game.table}/seats", json=join, headers=headers[name])
        assert response.status_code == 200, response.text
    if teams is not None:
        response = http.put(f"/tables/{game.table}/teams", json={"teams": teams}, headers=game.host)
        assert response.status_code == 200, response.text
    if start:
        game.start(start_body)
    return game


#: The moves of a short turn (a cut, a draw, a discard): ``move_from_menu``'s ``prefer`` for a
#: player who must beat a turn clock, or who is to keep a deal going without ending it soon.
QUICK_MOVES = ("cut", "draw", "discard")


def move_from_menu(
    http: Any, headers: Headers, deal: str, rng: random.Random, prefer: Sequence[str] = ()
) -> bool:
    """One move of the player of ``headers`` chosen at random from his move menu (``GET
    /deals/{id}/moves``; among the moves of the types in ``prefer``, if it lists any) if he
    is to act, sent with the menu's ``next_seq`` and ``expect``; True if it was accepted,
    False if he had no move or the answer was 409 (a bot or a timeout moved between the
    reads). ``http``: an httpx client, or ``tests.e2e.client.Api``."""
    answer: httpx.Response = http.get(f"/deals/{deal}/moves", headers=headers)
    assert answer.status_code == 200, answer.text
    menu = answer.json()
    if not menu["moves"]:
        return False
    preferred = [move for move in menu["moves"] if move["type"] in prefer]
    request = {
        "seq": menu["next_seq"],
        "expect": menu["expect"],
        "command": rng.choice(preferred or menu["moves"]),
    }
    answer = http.post(f"/deals/{deal}/commands", json=request, headers=headers)
    assert answer.status_code in (200, 409), answer.text
    return answer.status_code == 200


def send_with_menu(http: Any, headers: Headers, deal: str, command: dict[str, Any]) -> None:
    """Sends ``command`` (a command body) for the player of ``headers`` with the ``next_seq``
    and ``expect`` of his move menu as it is now, and checks it is accepted."""
    menu = http.get(f"/deals/{deal}/moves", headers=headers).json()
    body = {"seq": menu["next_seq"], "expect": menu["expect"], "command": command}
    answer = http.post(f"/deals/{deal}/commands", json=body, headers=headers)
    assert answer.status_code == 200, answer.text


def canasta_of(client: Any) -> CanastaApp:
    """The application service behind an in-process ``TestClient``."""
    canasta: CanastaApp = client.app.state.canasta
    return canasta


def state_reader(canasta: CanastaApp) -> Callable[[str], DealState]:
    """``state_of(deal_id)`` for ``Game.play_deal`` over an application service."""
    return lambda deal_id: canasta.get_deal(UUID(deal_id)).state


def expectation(deal: Deal) -> dict[str, Any]:
    """What a sender who has seen ``deal`` believes is current: a command's ``expect`` (R-CMD-1)."""
    st = deal.state
    return {
        "game": st.table_id,
        "deal": st.number,
        "step": deal.version,
        "turn": st.turn,
        "phase": st.phase,
    }


#: Where ``free_port`` looks: below Linux's ephemeral ports (32768 and up,
#: /proc/sys/net/ipv4/ip_local_port_range), which the kernel hands to outgoing connections. A
#: port chosen there (by binding to port 0) could be taken as the local end of another test's
#: connection while its server was stopped, and the server, or a relay, could not listen on it
#: again when it restarted (CI: "Address already in use" on a relay's resume). Each test
#: worker (pytest-xdist) looks in a slice of its own, so two workers do not pick the same port.
PORTS = range(20_000, 32_000)
PORT_SLICES = 8


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nobody listens on now, outside the ephemeral range, so
    that a server stopped and started again on it finds it free."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    size = len(PORTS) // PORT_SLICES
    first = PORTS.start + (int(worker) % PORT_SLICES if worker.isdigit() else 0) * size
    for port in random.sample(range(first, first + size), 200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError(f"no free port in {first}..{first + size - 1}")
