"""What the metrics and request ids cost a command (docs/operations.md, "Metrics").

Plays the same random legal commands through the whole ASGI application in this process
(``POST /deals/{id}/commands``: the observability middleware, the body limit, the command
lane, the decision, the save), once with ``CANASTA_METRICS`` on and once off, alternating
blocks so that a slower minute of a shared machine hits both alike, and prints the CPU time
per command of each (``time.process_time`` around each request only: choosing the command
is not counted). The store is in memory, with no read models or bots in the background, so
the difference is the middleware's. Also times the middleware alone around an application
that answers at once.

    python -m benchmarks.metrics_overhead [--commands 3000] [--block 250]

Run it once plain and once with ``PROMETHEUS_MULTIPROC_DIR`` set to an empty directory to
see the multiprocess mode's cost (values written to memory-mapped files).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any
from uuid import UUID

from fastapi import FastAPI

from app.main import create_app
from app.observability import Observe
from app.schemas import command_body
from app.settings import Settings
from benchmarks.asgi import AsgiClient
from domain.legal import legal_command, seat_to_act
from tests.support.http import expectation


async def call(app: Any, method: str, path: str, body: Any = None, token: str = "") -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response, _ = await AsgiClient(app).request(method, path, body, headers)
    return response.status_code, json.loads(response.content) if response.content else None


class Player:
    def __init__(self, api: FastAPI, metrics: bool, data_dir: Path) -> None:
        self.api = api
        self.metrics = metrics
        self.rng = random.Random(7)
        self.tokens: list[str] = []
        self.seqs = [0, 0, 0, 0]
        self.cpu: list[float] = []
        self.games = 0

    async def set_up(self) -> None:
        app = self.api
        self.games += 1
        self.tokens, self.seqs = [], [0, 0, 0, 0]
        for i in range(4):
            name = f"p{self.games}x{i}{self.metrics}"
            status, body = await call(app, "POST", "/players", {"name": name})
            assert status == 201, body
            self.tokens.append(body["token"])
        status, body = await call(app, "POST", "/tables", {"players": 4}, self.tokens[0])
        assert status == 201, body
        self.table = body["id"]
        for seat, token in enumerate(self.tokens):
            status, body = await call(
                app, "POST", f"/tables/{self.table}/seats", {"seat": seat}, token
            )
            assert status == 200, body
        status, body = await call(app, "POST", f"/tables/{self.table}/start", None, self.tokens[0])
        assert status == 201, body
        self.deal = body["deal"]

    async def play(self, commands: int) -> None:
        canasta = self.api.state.canasta
        for _ in range(commands):
            deal = canasta.get_deal(UUID(self.deal))
            seat = seat_to_act(deal.state)
            if seat is None:
                status, body = await call(
                    self.api, "POST", f"/tables/{self.table}/deals", None, self.tokens[0]
                )
                if status != 201:  # the game is over: another table
                    await self.set_up()
                else:
                    self.deal = body["deal"]
                continue
            self.seqs[seat] += 1
            request = {
                "seq": self.seqs[seat],
                "expect": expectation(deal),
                "command": command_body(legal_command(deal.state, seat, self.rng)),
            }
            began = time.process_time()
            status, body = await call(
                self.api, "POST", f"/deals/{self.deal}/commands", request, self.tokens[seat]
            )
            self.cpu.append(time.process_time() - began)
            assert status == 200, body


async def middleware_alone(rounds: int) -> tuple[float, float]:
    """Microseconds of CPU per request of an application that answers at once, without and
    with ``Observe`` around it (a POST on the command's route, as the lane answers it)."""
    answer = b'{"step":12,"events":[],"replayed":false}'

    async def bare(scope: Any, receive: Any, send: Any) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-length", b"40"), (b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": answer})

    observed = Observe(bare, record=True)
    path = "/deals/7f0c4a4e-2f7b-4d36-9a53-2b8c1a3e0d11/commands"
    results = []
    for app in (bare, observed):
        began = time.process_time()
        for _ in range(rounds):
            await call(app, "POST", path, {"seq": 1})
        results.append((time.process_time() - began) / rounds * 1e6)
    return results[0], results[1]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commands", type=int, default=3000)
    parser.add_argument("--block", type=int, default=250)
    args = parser.parse_args()
    players = {}
    contexts = []
    for metrics in (True, False):
        data_dir = Path(tempfile.mkdtemp())
        settings = Settings(
            database_url="memory",
            data_dir=data_dir,
            metrics=metrics,
            read_models="off",
            run_bots=False,
            rate_limits=False,  # one client sending as fast as the app answers
            gc_gen0_threshold=0,
        )
        api = create_app(settings)
        context = api.router.lifespan_context(api)
        await context.__aenter__()
        contexts.append(context)
        players[metrics] = Player(api, metrics, data_dir)
        await players[metrics].set_up()
    done = 0
    while done < args.commands:
        for metrics in (True, False):
            await players[metrics].play(args.block)
        done += args.block
    for context in contexts:
        await context.__aexit__(None, None, None)
    for metrics in (True, False):
        cpu = players[metrics].cpu[args.block :]  # the first block warms up
        print(
            f"metrics {'on ' if metrics else 'off'}: {len(cpu)} commands, CPU per command "
            f"mean {statistics.mean(cpu) * 1e6:.0f} µs, median {statistics.median(cpu) * 1e6:.0f} µs"
        )
    on, off = (statistics.mean(players[m].cpu[args.block :]) for m in (True, False))
    print(f"difference: {(on - off) * 1e6:+.0f} µs per command ({(on / off - 1) * 100:+.1f}%)")
    bare, observed = await middleware_alone(20000)
    print(
        f"middleware alone: {bare:.1f} µs without, {observed:.1f} µs with "
        f"({observed - bare:+.1f} µs per request)"
    )


if __name__ == "__main__":
    asyncio.run(main())
