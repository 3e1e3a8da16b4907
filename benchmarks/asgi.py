"""An ASGI application called in process, as a benchmark's client: no sockets, no HTTP
parsing (``benchmarks.command_path``, ``benchmarks.metrics_overhead``)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from benchmarks.server.http_client import HttpResponse


class AsgiClient:
    """``AsyncRawClient``'s interface over an ASGI application called in process."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[HttpResponse, float]:
        data = b"" if body is None else json.dumps(body).encode()
        raw = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
        if body is not None:
            raw.append((b"content-type", b"application/json"))
        raw.append((b"content-length", str(len(data)).encode()))
        raw.append((b"host", b"bench"))
        path, _, query = path.partition("?")
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": query.encode(),
            "root_path": "",
            "headers": raw,
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 80),
            "state": {},
        }
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": data, "more_body": False}
            await asyncio.Event().wait()  # a client that stays connected
            raise AssertionError  # pragma: no cover

        status = 0
        chunks: list[bytes] = []

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, send)
        return HttpResponse(status, b"".join(chunks)), time.perf_counter()

    def close(self) -> None:
        pass


class Lifespan:
    """Runs the ASGI app's lifespan (start-up, then shutdown) as uvicorn does."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.started = asyncio.Event()
        self.stopped = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Lifespan:
        async def send(message: dict[str, Any]) -> None:
            if message["type"].startswith("lifespan.startup"):
                self.started.set()
            elif message["type"].startswith("lifespan.shutdown"):
                self.stopped.set()
            if message["type"].endswith(".failed"):
                raise RuntimeError(message.get("message"))

        self.task = asyncio.create_task(
            self.app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}},
                     self.inbox.get, send)
        )  # fmt: skip
        await self.inbox.put({"type": "lifespan.startup"})
        await self.started.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.inbox.put({"type": "lifespan.shutdown"})
        await self.stopped.wait()
        assert self.task is not None
        await self.task
