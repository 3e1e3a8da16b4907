"""``python -m benchmarks.rate_limits``: the CPU the per-client limits add to a command.

Two applications over in-memory stores, one with the limits on (``app/rate_limits.py``, the
default rates, raised so that nothing is refused: the cost of counting, not of refusing) and one
with them off, each with a started table whose cutter has cut. The same request, the cutter's
``POST /deals/{id}/commands`` again (a retry, which the command lane answers from the process's
memory: the cheapest command there is, so the limits' share is at its largest), is sent straight
to each ASGI application, no network and no HTTP client, in alternating rounds; the process's
CPU time per request is reported for each, and the difference.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from contextlib import ExitStack
from typing import Any, cast

from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.main import create_app
from app.rate_limits import ClientLimits
from app.settings import Settings
from domain import commands as c
from tests.support.http import open_table


def prepared(limits: bool, stack: ExitStack) -> tuple[TestClient, dict[str, Any], bytes]:
    """A started app (its ``TestClient``, whose event loop runs the measurement) and one
    command's request (scope, body), to send again and again."""
    settings = Settings(
        database_url="memory",
        run_bots=False,
        rate_limits=limits,
        rate_limit_commands="1000000/second;100000000/minute",
    )
    client = stack.enter_context(TestClient(create_app(settings)))
    game = open_table(client)
    cutter = game.names[client.get(f"/deals/{game.deal_id}").json()["cutter"]]
    body = game.request(cutter, c.Cut(n=10), 1)
    headers = game.headers[cutter]
    data = json.dumps(body).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": f"/deals/{game.deal_id}/commands",
        "raw_path": f"/deals/{game.deal_id}/commands".encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"bench"),
            (b"authorization", headers["Authorization"].encode()),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(data)).encode()),
        ],
        "client": ("198.51.100.7", 50000),
        "server": ("bench", 80),
        "state": {},
    }
    return client, scope, data


async def send_many(api: ASGIApp, scope: dict[str, Any], data: bytes, count: int) -> float:
    """CPU seconds per request over ``count`` requests."""
    statuses: list[int] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": data, "more_body": False}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    began = time.process_time()
    for _ in range(count):
        await api(dict(scope), receive, send)
    spent = time.process_time() - began
    assert set(statuses) == {200}, set(statuses)
    return spent / count


def measure(rounds: int, count: int) -> dict[str, list[float]]:
    """CPU seconds per command of each app, in rounds that alternate between them."""
    per_request: dict[str, list[float]] = {"limits on": [], "limits off": []}
    with ExitStack() as stack:
        apps = {name: prepared(name == "limits on", stack) for name in per_request}
        for _ in range(rounds + 1):  # the first round warms up (and the cut is accepted)
            for name, (client, scope, data) in apps.items():
                assert client.portal is not None
                spent = client.portal.call(send_many, client.app, scope, data, count)
                per_request[name].append(spent)
    return {name: values[1:] for name, values in per_request.items()}


def middleware_alone(count: int) -> float:
    """CPU seconds per request of ``ClientLimits`` itself, over an app that does nothing:
    the same request, its token known to the process (counted per player, two rates)."""
    with ExitStack() as stack:
        client, scope, _ = prepared(True, stack)
        api = cast(FastAPI, client.app)
        scope = {**scope, "app": api}  # what FastAPI gives its middleware

        async def receive() -> Message:
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            return None

        async def nothing(scope: Scope, receive: Receive, send: Send) -> None:
            return None

        async def run(app: ASGIApp) -> float:
            began = time.process_time()
            for _ in range(count):
                await app(dict(scope), receive, send)
            return time.process_time() - began

        limits = ClientLimits(nothing, api.state.settings)
        portal = client.portal
        assert portal is not None
        spent = [portal.call(run, limits) - portal.call(run, nothing) for _ in range(5)]
    return statistics.median(spent) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--requests", type=int, default=500, help="per round and app")
    args = parser.parse_args()
    alone = middleware_alone(20_000) * 1e6
    print(f"the limits' middleware alone: {alone:.1f} µs CPU per request")
    per_request = measure(args.rounds, args.requests)
    medians = {name: statistics.median(values) * 1e6 for name, values in per_request.items()}
    for name, value in medians.items():
        print(f"{name}: {value:.1f} µs CPU per command (median of {args.rounds} rounds)")
    print(f"difference: {medians['limits on'] - medians['limits off']:.1f} µs per command")


if __name__ == "__main__":
    main()
