"""HTTP/1.1 clients of the load generator: blocking and asyncio, keep-alive."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any
from urllib.parse import urlsplit

# --- the load generator -------------------------------------------------------------------


class HttpResponse:
    """Status and body of one answer, whichever client fetched it."""

    __slots__ = ("content", "status_code")

    def __init__(self, status_code: int, content: bytes) -> None:
        self.status_code = status_code
        self.content = content

    def json(self) -> Any:
        return json.loads(self.content)

    @property
    def text(self) -> str:
        return self.content.decode(errors="replace")

    def raise_for_status(self) -> None:
        if not 200 <= self.status_code < 300:
            raise RuntimeError(f"HTTP {self.status_code}: {self.text[:300]}")


def request_bytes(
    host: str, port: int, method: str, path: str, body: Any, headers: dict[str, str] | None
) -> bytes:
    """One HTTP/1.1 request on a keep-alive connection, JSON body if any."""
    data = b"" if body is None else json.dumps(body).encode()
    head = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", f"Content-Length: {len(data)}"]
    if body is not None:
        head.append("Content-Type: application/json")
    head.extend(f"{k}: {v}" for k, v in (headers or {}).items())
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


def parse_response(buffer: bytes) -> tuple[HttpResponse, bytes] | None:
    """The first whole answer in ``buffer`` and what follows it, or None if it is not all
    there yet. Reads what this server sends: a status line, headers with Content-Length,
    a body."""
    head_end = buffer.find(b"\r\n\r\n")
    if head_end < 0:
        return None
    lines = buffer[:head_end].split(b"\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    end = head_end + 4 + length
    if len(buffer) < end:
        return None
    status = int(lines[0].split(b" ", 2)[1])
    return HttpResponse(status, buffer[head_end + 4 : end]), buffer[end:]


class RawClient:
    """HTTP/1.1 written and read directly on one blocking keep-alive socket (the replay
    and the idle probes; the load itself uses ``AsyncRawClient``): a third of
    ``http.client``'s CPU per request."""

    def __init__(self, base: str, timeout: float = 60) -> None:
        self.timeout = timeout
        parts = urlsplit(base)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.sock: socket.socket | None = None
        self.buffer = b""

    def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> HttpResponse:
        message = request_bytes(self.host, self.port, method, path, body, headers)
        for attempt in (1, 2):
            if self.sock is None:
                self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.buffer = b""
            try:
                self.sock.sendall(message)
                return self._read()
            except OSError:
                # A keep-alive connection the server closed: reconnect once. Sending a
                # command twice is safe: the same seq gets the first answer (R-CMD-1).
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _read(self) -> HttpResponse:
        while (parsed := parse_response(self.buffer)) is None:
            self._receive()
        response, self.buffer = parsed
        return response

    def _receive(self) -> None:
        assert self.sock is not None
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionResetError("the server closed the connection")
        self.buffer += chunk

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


class AsyncRawClient(asyncio.Protocol):
    """HTTP/1.1 on one keep-alive connection, for the load generator's event loop: the
    request is written straight to the transport and the answer parsed as its bytes arrive.
    Its receive time is taken when its last byte arrives, before any other game's work."""

    def __init__(self, base: str) -> None:
        parts = urlsplit(base)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.transport: asyncio.Transport | None = None
        self.buffer = b""
        self.waiter: asyncio.Future[tuple[HttpResponse, float]] | None = None

    # -- asyncio.Protocol --
    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.waiter is None or self.waiter.done():
            return
        parsed = parse_response(self.buffer)
        if parsed is not None:
            response, self.buffer = parsed
            self.waiter.set_result((response, time.perf_counter()))

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(
                exc or ConnectionResetError("the server closed the connection")
            )

    # -- requests --
    async def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[HttpResponse, float]:
        """The answer and the time its last byte arrived."""
        message = request_bytes(self.host, self.port, method, path, body, headers)
        loop = asyncio.get_running_loop()
        for attempt in (1, 2):
            if self.transport is None:
                self.buffer = b""
                transport, _ = await loop.create_connection(lambda: self, self.host, self.port)
                self.transport = transport
            assert self.transport is not None
            self.waiter = loop.create_future()
            try:
                self.transport.write(message)
                return await asyncio.wait_for(self.waiter, 60)
            except OSError:
                # A keep-alive connection the server closed: reconnect once. Sending a
                # command twice is safe: the same seq gets the first answer (R-CMD-1).
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
            self.transport = None
