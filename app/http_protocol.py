"""uvicorn's httptools protocol, writing each answer's head and body in one piece.

uvicorn writes an answer's status line and headers (``http.response.start``) and then its
body (``http.response.body``) as two ``transport.write`` calls: two ``send`` system calls
and two TCP segments for every answer, each of which the kernel delivers to the client
there and then (on loopback, in the sender's own time). ``CoalescingHttpToolsProtocol``
holds the head until the next write of the same connection, or until the event loop's
current round ends (``call_soon``), whichever comes first, and writes the two together:
the same bytes in the same order, one system call for an answer sent at once (every JSON
answer), and a streamed answer's head still leaves before the loop waits for anything.

Run it with ``uvicorn app.main:app --http app.http_protocol:CoalescingHttpToolsProtocol``
(deploy/systemd/canasta-web.service; docs/performance.md, "5 December 2026").
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

#: uvicorn's ``--http`` for this protocol (deploy/, the benchmarks' servers).
UVICORN_HTTP = "app.http_protocol:CoalescingHttpToolsProtocol"

_HEAD_START = b"HTTP/"
_HEAD_END = b"\r\n\r\n"


class CoalescingTransport:
    """A transport's ``write`` that holds a response head for the next write.

    Every other attribute is the wrapped transport's. ``close`` writes what is held
    first; ``abort`` drops it with the connection."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held + bytes(data))
        elif isinstance(data, bytes) and data.startswith(_HEAD_START) and data.endswith(_HEAD_END):
            self._held = data
            self._loop.call_soon(self.flush)
        else:
            self._transport.write(data)

    def flush(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if not self._transport.is_closing():
                self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class CoalescingHttpToolsProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` on a ``CoalescingTransport``."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(CoalescingTransport(transport, self.loop))  # type: ignore[arg-type]
