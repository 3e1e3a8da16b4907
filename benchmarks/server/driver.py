"""One game driven over HTTP by a task of the load generator's event loop."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from app.schemas import command_body
from benchmarks.server.http_client import AsyncRawClient, HttpResponse
from benchmarks.server.mirror import Mirror, Reader
from domain.legal import legal_command, seat_to_act
from domain.table import PLAYING
from projections.visibility import Viewer, event_view


@dataclass
class Planned:
    """One command a game is about to send."""

    seat: int
    command: Any
    body: dict[str, Any]
    path: str
    headers: dict[str, str]
    cpu: float


@dataclass
class Driver:
    """One game, played over one keep-alive connection by a task of the load generator's
    event loop (one thread for all games, as wrk does: no game waits for a thread switch
    to send a command or to see its answer)."""

    index: int
    base: str
    reader: Reader
    seed: int
    views: bool
    name_prefix: str = "g"
    names: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    table_id: str = ""
    deal_id: UUID | None = None
    mirror: Mirror | None = None
    seqs: dict[tuple[str, int], int] = field(default_factory=dict)
    # (end time, latency s, status, s of it before the game could send it) of every POST
    # /deals/{id}/commands: open loop, the part of the latency between the command's due time
    # and the end of the deal's or game's set-up (``ready_at``), if it fell due during one
    commands: list[tuple[float, float, int, float]] = field(default_factory=list)
    ready_at: float = 0.0  # when the last set-up between deals ended (perf_counter)
    # (send time, s) open loop: how late after its due time each command was sent
    lateness: list[tuple[float, float]] = field(default_factory=list)
    # (end time, latency s, status) of every GET /deals/{id} (--views)
    view_gets: list[tuple[float, float, int]] = field(default_factory=list)
    # (end time, latency s) of every deal or game set-up step between deals
    between_deals: list[tuple[float, float]] = field(default_factory=list)
    # (end time, CPU s) spent on move choice, mirror update and answer check
    mirror_cpu: list[tuple[float, float]] = field(default_factory=list)
    # (end time, wall s) of the store read loading each deal's mirror
    mirror_loads: list[tuple[float, float]] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    mismatches: int = 0
    accepted: int = 0  # 200 answers so far (progress)
    deals_finished: int = 0
    games_finished: int = 0
    game_ends: list[float] = field(default_factory=list)  # when each game ended (s)
    error_samples: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.client = AsyncRawClient(self.base)

    async def get(self, path: str, headers: dict[str, str] | None = None) -> HttpResponse:
        return (await self.client.request("GET", path, headers=headers))[0]

    async def post(
        self, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> HttpResponse:
        return (await self.client.request("POST", path, body, headers))[0]

    # -- set-up --
    async def register(self) -> None:
        for seat in range(4):
            name = f"{self.name_prefix}{self.index}s{seat}"
            r = await self.post("/players", {"name": name})
            r.raise_for_status()
            self.names.append(name)
            self.headers.append({"Authorization": f"Bearer {r.json()['token']}"})

    async def new_game(self) -> None:
        """Create a classic 4-player table, seat the four players, start the game."""
        host = self.headers[0]
        r = await self.post("/tables", {"entry": "classic", "players": 4}, host)
        r.raise_for_status()
        self.table_id = r.json()["id"]
        for seat in range(4):
            r = await self.post(
                f"/tables/{self.table_id}/seats", {"seat": seat}, self.headers[seat]
            )
            r.raise_for_status()
        r = await self.post(f"/tables/{self.table_id}/start", None, host)
        r.raise_for_status()
        await self.load_deal(UUID(r.json()["deal"]))

    async def load_deal(self, deal_id: UUID) -> None:
        """Read the deal from the store into the mirror, in a worker thread: the store
        read blocks, and the other games go on meanwhile."""
        started = time.perf_counter()
        self.deal_id = deal_id
        self.mirror = Mirror(
            await asyncio.get_running_loop().run_in_executor(None, self.reader.deal, deal_id)
        )
        end = time.perf_counter()
        self.mirror_loads.append((end, end - started))

    async def next_deal(self) -> None:
        """The deal is over: the host starts the next one, or a new game if this one ended."""
        started = time.perf_counter()
        self.deals_finished += 1
        r = await self.get(f"/tables/{self.table_id}")
        r.raise_for_status()
        if r.json()["status"] == PLAYING:
            r = await self.post(f"/tables/{self.table_id}/deals", None, self.headers[0])
            r.raise_for_status()
            await self.load_deal(UUID(r.json()["deal"]))
        else:
            self.games_finished += 1
            self.game_ends.append(started)
            await self.new_game()
        end = time.perf_counter()
        self.between_deals.append((end, end - started))
        self.ready_at = end

    # -- play --
    async def run(
        self, stop_at: float, interval: float | None = None, first_at: float = 0.0
    ) -> None:
        """Closed loop (``interval`` None): the next command as soon as the answer is in.
        Open loop: one command every ``interval`` seconds from ``first_at`` on, whatever the
        answers' delays; each latency is then measured from the time the command was due,
        so a server that falls behind cannot hide it (no coordinated omission). The next
        deal is set up as soon as a deal ends, between two slots: when that takes longer
        than the time left, the next command goes out late and its latency shows it."""
        due = first_at
        try:
            if interval is None and first_at > time.perf_counter():
                await asyncio.sleep(first_at - time.perf_counter())
            while time.perf_counter() < stop_at:
                if interval is None:
                    await self.step()
                    continue
                wait = due - time.perf_counter()
                if wait > 0:
                    await asyncio.sleep(wait)
                await self.step(due)
                due += interval
        except Exception as exc:  # recorded, reported; the other games go on
            self.errors[f"driver crashed: {type(exc).__name__}"] += 1
            self.error_samples.append(repr(exc)[:300])

    def plan(self) -> Planned | None:
        """The acting seat's next legal command, or None if the mirrored deal is over."""
        started = time.thread_time()
        deal = self.mirror
        assert deal is not None and self.deal_id is not None
        st = deal.state
        seat = seat_to_act(st)
        if seat is None:
            return None
        command = legal_command(st, seat, self.rng)
        key = (self.table_id, seat)
        self.seqs[key] = seq = self.seqs.get(key, 0) + 1
        expect = {
            "game": self.table_id,
            "deal": st.number,
            "step": deal.version,
            "turn": st.turn,
            "phase": st.phase,
        }
        body = {"seq": seq, "expect": expect, "command": command_body(command)}
        path = f"/deals/{self.deal_id}"
        return Planned(seat, command, body, path, self.headers[seat], time.thread_time() - started)

    async def step(self, due: float | None = None) -> None:
        planned = self.plan()
        if planned is None:  # over (seen after a resync): set up the next deal, then play it
            await self.next_deal()
            planned = self.plan()
            if planned is None:
                return
        if self.views:
            # What a real client would do first: look at the table as the acting player.
            started = time.perf_counter()
            r, end = await self.client.request("GET", planned.path, headers=planned.headers)
            self.view_gets.append((end, end - started, r.status_code))
            if r.status_code == 200:
                view = r.json()
                planned.body["expect"] = {
                    "game": view["table"],
                    "deal": view["number"],
                    "step": view["step"],
                    "turn": view["turn"],
                    "phase": view["phase"],
                }
        sent = time.perf_counter()
        started = sent if due is None else due
        # (The last set-up, if any, ended before this send: ``ready_at`` <= ``sent``.)
        unready = 0.0 if due is None else max(0.0, self.ready_at - due)
        if due is not None:  # how late the load generator itself sent it
            self.lateness.append((sent, max(0.0, sent - due)))
        try:
            r, end = await self.client.request(
                "POST", planned.path + "/commands", planned.body, planned.headers
            )
        except (TimeoutError, OSError) as exc:
            end = time.perf_counter()
            self.commands.append((end, end - started, 0, unready))
            self.errors[f"transport: {type(exc).__name__}"] += 1
            await self.resync()
            return
        self.commands.append((end, end - started, r.status_code, unready))
        if r.status_code == 200:
            self.accepted += 1
        else:
            self.errors[f"HTTP {r.status_code}"] += 1
            if len(self.error_samples) < 5:
                name = self.names[planned.seat]
                self.error_samples.append(f"{name} {planned.body}: {r.status_code} {r.text[:300]}")
            await self.resync()
            return
        if not self.settle(planned, r.json()):
            self.mismatches += 1
            await self.resync()
        elif seat_to_act(self.mirror.state) is None:  # type: ignore[union-attr]
            await self.next_deal()  # that command ended the deal

    def settle(self, planned: Planned, answer: dict[str, Any]) -> bool:
        """Apply the accepted command to the mirror; whether the server's answer (its step
        and its events, redacted for the sender) is what the mirror says."""
        started = time.thread_time()
        deal = self.mirror
        assert deal is not None
        new_events = deal.execute(planned.seat, planned.command)
        viewer = Viewer.player(planned.seat)
        mine = [v for e in new_events if (v := event_view(e, viewer, deal.state)) is not None]
        same = bool(
            answer["step"] == deal.version and json.loads(json.dumps(mine)) == answer["events"]
        )
        cpu = planned.cpu + time.thread_time() - started
        self.mirror_cpu.append((time.perf_counter(), cpu))
        return same

    async def resync(self) -> None:
        assert self.deal_id is not None
        await self.load_deal(self.deal_id)

    def close(self) -> None:
        self.client.close()

    def new_run(self, reader: Reader) -> None:
        """Go on with this game in another run: its deal, mirror and sequence numbers stay;
        what the last run measured goes (the next run reconnects on its own event loop)."""
        self.reader = reader
        for measured in (
            self.commands,
            self.lateness,
            self.view_gets,
            self.between_deals,
            self.mirror_cpu,
            self.mirror_loads,
            self.game_ends,
            self.error_samples,
        ):
            measured.clear()
        self.errors.clear()
        self.mismatches = self.accepted = self.deals_finished = self.games_finished = 0


async def watch_own_loop(stalls: list[tuple[float, float]], until: float) -> None:
    """Note when the load generator's own event loop ran more than 10 ms late (busy, or
    its process not given a core): the latencies measured then include that delay."""
    while time.perf_counter() < until:
        before = time.perf_counter()
        await asyncio.sleep(0.002)
        late = time.perf_counter() - before - 0.002
        if late > 0.010:
            stalls.append((time.perf_counter(), late))


def event_loop_runner() -> Callable[[Any], Any]:
    """``run(coroutine)`` on uvloop when installed (it is, with uvicorn[standard]): about
    half of asyncio's own CPU per socket event, left to the server."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run

    def run(coroutine: Any) -> Any:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(coroutine)

    return run
