"""The soak benchmark's load (``benchmarks.soak``): what an operator's server meets for weeks.

- **Games of four people** (``SoakGame``, the server benchmark's ``Driver``: the acting
  seat's next legal command over one keep-alive connection, open loop) at classic tables:
  the host stops the game after its first deal, but one game in ``full_every`` is played to
  its end (5,000 points: five to seven deals). When one ends, its host
  reads the scores, a replay of its last deal at a random step and its audit (as the
  auditor), then opens the rematch (every other game) or a new table, with an
  ``Idempotency-Key``; every ``--new-players-every`` games the four players register again
  (new accounts, new tokens).
- **Practice players** (``practice_player``): a new account signs a browser session in
  (``POST /sessions``, the cookie), starts a practice table against three random bots
  (``POST /tables/practice`` with an ``Idempotency-Key``), plays his seat from the move menu
  (``GET /deals/{id}/moves``) with the cookie, stops the game after its first deal (one in
  ten played to the end, opening each next deal) and signs out; a share of them (``--abandon``) walk away mid-game, as people
  do (the table plays on without them, its bots waiting for them).
- **Spectators** (``spectator``): read the lobby, open a playing table's or deal's live
  stream anonymously, read it for a few seconds or to its end, close it.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import httpx

from app.autoplay import menu_choice
from benchmarks.server.driver import Driver
from domain.table import PLAYING

AUDITOR = "soak-auditor"


@dataclass
class Tally:
    """What the load did, for the report; ``games`` is the timeline's measure."""

    games: int = 0
    deals: int = 0
    practice_games: int = 0
    abandoned: int = 0
    registrations: int = 0
    sessions: int = 0
    idempotency_keys: int = 0
    streams: int = 0
    replays: int = 0
    audits: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    samples: list[str] = field(default_factory=list)

    def error(self, what: str, detail: str = "") -> None:
        self.errors[what] = self.errors.get(what, 0) + 1
        if detail and len(self.samples) < 10:
            self.samples.append(f"{what}: {detail[:300]}")


def key_header(tally: Tally) -> dict[str, str]:
    tally.idempotency_keys += 1
    return {"Idempotency-Key": str(uuid.uuid4())}


@dataclass
class SoakGame(Driver):
    """A game of four people (see the module's documentation)."""

    tally: Tally = field(default_factory=Tally)
    full_every: int = 10
    auditor: dict[str, str] = field(default_factory=dict)
    new_players_every: int = 10
    played: int = 0
    deals_here: int = 0  # deals played at the current table

    async def new_game(self) -> None:
        """After the first: the finished game's reads, then its rematch or a new table."""
        finished = self.table_id
        if not finished:
            await self._open_table()
            return
        self.tally.games += 1
        self.played += 1
        self.deals_here = 0
        await self._after_game(finished)
        if self.played % self.new_players_every == 0:
            self.names.clear()
            self.headers.clear()
            self.name_prefix = f"{self.name_prefix.split('-')[0]}-{self.played}-"
            await self.register()
            self.tally.registrations += 4
            self.seqs.clear()
            await self._open_table()
        elif self.played % 2:
            r = await self.post(
                f"/tables/{finished}/rematch", None, {**self.headers[0], **key_header(self.tally)}
            )
            r.raise_for_status()
            self.table_id = r.json()["id"]
            await self._start()
        else:
            await self._open_table()

    async def _open_table(self) -> None:
        host = {**self.headers[0], **key_header(self.tally)}
        body = {"entry": "classic", "players": 4}
        r = await self.post("/tables", body, host)
        r.raise_for_status()
        self.table_id = r.json()["id"]
        for seat in range(4):
            r = await self.post(
                f"/tables/{self.table_id}/seats", {"seat": seat}, self.headers[seat]
            )
            r.raise_for_status()
        await self._start()

    async def _start(self) -> None:
        r = await self.post(
            f"/tables/{self.table_id}/start", None, {**self.headers[0], **key_header(self.tally)}
        )
        r.raise_for_status()
        await self.load_deal(UUID(r.json()["deal"]))

    async def _after_game(self, table_id: str) -> None:
        r = await self.get(f"/tables/{table_id}/scores", self.headers[1])
        if r.status_code != 200:
            self.tally.error(f"scores {r.status_code}", r.text)
        if self.deal_id is None or self.mirror is None:
            return
        step = self.rng.randint(1, self.mirror.version)
        r = await self.get(f"/deals/{self.deal_id}/replay?step={step}", self.headers[2])
        self.tally.replays += 1
        if r.status_code != 200:
            self.tally.error(f"replay {r.status_code}", r.text)
        if self.auditor:
            r = await self.get(f"/audit/deals/{self.deal_id}", self.auditor)
            self.tally.audits += 1
            if r.status_code != 200:
                self.tally.error(f"audit {r.status_code}", r.text)

    async def next_deal(self) -> None:
        """A deal ended: the host stops the game after its first deal, but in one game of
        ``full_every``, played to its end (5000 points: five to seven deals)."""
        self.tally.deals += 1
        self.deals_here += 1
        if self.played % self.full_every == self.full_every - 1:
            await super().next_deal()
            return
        started = time.perf_counter()
        self.deals_finished += 1
        r = await self.post(
            f"/tables/{self.table_id}/stop", None, {**self.headers[0], **key_header(self.tally)}
        )
        if r.status_code != 200:  # ended by this deal already
            self.tally.error(f"stop {r.status_code}", r.text)
        await self.new_game()
        self.ready_at = time.perf_counter()
        self.between_deals.append((self.ready_at, self.ready_at - started))


async def register(client: httpx.AsyncClient, name: str, tally: Tally) -> str:
    r = await client.post("/players", json={"name": name})
    r.raise_for_status()
    tally.registrations += 1
    return str(r.json()["token"])


async def practice_player(
    base: str, index: int, stop_at: float, tally: Tally, abandon: float, seed: int
) -> None:
    """One person after another at practice tables (see the module's documentation)."""
    rng = random.Random(seed)
    game = 0
    while time.monotonic() < stop_at:
        game += 1
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            try:
                await _practice_game(
                    client, f"p{index}-{game}-{seed}", stop_at, tally, abandon, rng
                )
            except (httpx.HTTPError, KeyError, ValueError) as exc:
                tally.error(f"practice: {type(exc).__name__}", repr(exc))
                await asyncio.sleep(1)


async def _practice_game(
    client: httpx.AsyncClient,
    name: str,
    stop_at: float,
    tally: Tally,
    abandon: float,
    rng: random.Random,
) -> None:
    token = await register(client, name, tally)
    r = await client.post("/sessions", headers={"Authorization": f"Bearer {token}"})
    r.raise_for_status()
    tally.sessions += 1
    csrf = {"X-Canasta-CSRF": "1"}  # the cookie signs the rest in (docs/browsers.md)
    body = {"entry": "classic", "players": 4, "bot": "random"}
    r = await client.post("/tables/practice", json=body, headers={**csrf, **key_header(tally)})
    r.raise_for_status()
    table, deal = r.json()["table"], r.json()["deal"]
    leave_at = rng.randint(5, 40) if rng.random() < abandon else None
    full = rng.random() < 0.1  # played to its end; the others stopped after a deal
    moves = 0
    while time.monotonic() < stop_at:
        r = await client.get(f"/deals/{deal}/moves")
        if r.status_code == 401:  # the session expired (--session-seconds): sign in again
            r = await client.post("/sessions", headers={"Authorization": f"Bearer {token}"})
            r.raise_for_status()
            tally.sessions += 1
            continue
        if r.status_code != 200:
            tally.error(f"moves {r.status_code}", r.text)
            await asyncio.sleep(0.5)
            continue
        menu = r.json()
        if menu["moves"]:
            if leave_at is not None and moves >= leave_at:
                tally.abandoned += 1
                return  # walks away: the table stays in play, its bots waiting for him
            move = menu["moves"][menu_choice([m["type"] for m in menu["moves"]], rng)]
            request = {"seq": menu["next_seq"], "expect": menu["expect"], "command": move}
            r = await client.post(f"/deals/{deal}/commands", json=request, headers=csrf)
            if r.status_code != 200:
                tally.error(f"practice command {r.status_code}", r.text)
            moves += 1
            continue
        if menu["phase"] != "over":
            await asyncio.sleep(0.1)  # a bot's turn
            continue
        tally.deals += 1
        view = (await client.get(f"/tables/{table}")).json()
        if view["status"] == PLAYING and not full:
            await client.post(f"/tables/{table}/stop", headers={**csrf, **key_header(tally)})
            view["status"] = "stopped"
        if view["status"] == PLAYING:
            r = await client.post(f"/tables/{table}/deals", headers=csrf)
            if r.status_code == 201:
                deal = r.json()["deal"]
            else:  # opened meanwhile by the bots' runner (never: he is present): read it
                await asyncio.sleep(0.2)
                deal = (await client.get(f"/tables/{table}")).json()["deals"][-1]
            continue
        tally.games += 1
        tally.practice_games += 1
        await client.get(f"/tables/{table}/scores")
        await client.delete("/sessions", headers=csrf)
        return


async def spectator(base: str, stop_at: float, tally: Tally, seed: int) -> None:
    """Lobby, then a live stream for a few seconds (see the module's documentation)."""
    rng = random.Random(seed)
    host, port = base.removeprefix("http://").split(":")
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        while time.monotonic() < stop_at:
            r = await client.get("/tables", params={"status": "playing", "limit": 50})
            tables: list[dict[str, Any]] = r.json() if r.status_code == 200 else []
            if not tables:
                await asyncio.sleep(1)
                continue
            chosen = rng.choice(tables)
            if rng.random() < 0.5:
                path = f"/tables/{chosen['id']}/stream"
            else:
                view = (await client.get(f"/tables/{chosen['id']}")).json()
                if not view.get("deals"):
                    continue
                path = f"/deals/{view['deals'][-1]}/stream"
            try:
                await watch_stream(host, int(port), path, rng.uniform(1, 6))
                tally.streams += 1
            except (OSError, asyncio.IncompleteReadError) as exc:
                tally.error(f"stream: {type(exc).__name__}", repr(exc))
                await asyncio.sleep(0.5)


async def watch_stream(host: str, port: int, path: str, seconds: float) -> None:
    """Read a live stream for ``seconds`` (or to its ``end``), then close the connection."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n".encode()
        )
        until = time.monotonic() + seconds
        while (left := until - time.monotonic()) > 0:
            try:
                async with asyncio.timeout(left):
                    data = await reader.read(65536)
            except TimeoutError:
                return
            if not data or b"event: end\n" in data:
                return
    finally:
        writer.close()
