"""``HEAD`` wherever ``GET`` is answered (RFC 9110, 9.3.2), without a second route per path.

FastAPI's routes declared with ``@router.get`` answer ``GET`` only: a ``HEAD`` got 405. This
ASGI middleware hands a ``HEAD`` request to the application as a ``GET`` and sends the client
the answer's status and headers (``content-length`` and ``content-type`` included) without
its body. Once the head is sent, the application's ``receive`` reports the client as gone, so
a live stream (``/…/stream``) ends instead of producing events nobody reads.

A 405 answer's ``Allow`` header (``app.errors``) names ``HEAD`` wherever it names ``GET``. The
OpenAPI document is unchanged: ``HEAD`` is implied by ``GET`` in HTTP.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        done = False

        async def head_receive() -> Message:
            if done:
                return {"type": "http.disconnect"}
            return await receive()

        async def head_send(message: Message) -> None:
            nonlocal done
            if done:
                return
            if message["type"] == "http.response.start":
                await send(message)
            elif message["type"] == "http.response.body":
                # The first part of the body ends the answer (a stream's too): no body for HEAD.
                done = True
                await send({"type": "http.response.body", "body": b"", "more_body": False})

        await self.app({**scope, "method": "GET"}, head_receive, head_send)
