"""Request bodies above ``CANASTA_MAX_BODY_BYTES`` get 413 ``body_too_large`` before they are
read whole or parsed.

An ASGI middleware, outside every other part of the application: a declared
``Content-Length`` above the limit is refused before any byte of the body is read; a body
without one (chunked) is read up to the limit, and refused as soon as it passes it. A body
within the limit is handed on unchanged. Nothing reaches a route, so nothing changes.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.application import said_body
from domain.refusals import said


def replayed(messages: list[Message], receive: Receive) -> Receive:
    """``receive`` for the next application: the messages already read, then the rest."""
    pending = list(messages)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    break  # the server refuses it; not ours to judge
                if declared > self.max_bytes:
                    await self._refuse(send)
                    return
        messages: list[Message] = []
        size = 0
        while True:  # counted as it streams in: a chunked body declares no length
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.max_bytes:
                await self._refuse(send)
                return
            if not message.get("more_body", False):
                break
        await self.app(scope, replayed(messages, receive), send)

    async def _refuse(self, send: Send) -> None:
        words = said("limits.body_too_large", max_bytes=self.max_bytes)
        data = json.dumps(said_body("body_too_large", words)).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-length", str(len(data)).encode()),
                    (b"content-type", b"application/json"),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": data})
