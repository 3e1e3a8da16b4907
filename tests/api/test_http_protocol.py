"""How the deployed server writes its answers (app/http_protocol.py): uvicorn as
deploy/systemd/canasta-web.service starts it sends each answer's head and body in one piece
(one TCP segment on loopback, where uvicorn alone sends two), the same bytes as uvicorn
alone, and a streamed answer's head still arrives at once. Real HTTP through uvicorn, read
from a raw keep-alive socket; the segments are the client socket's own count (TCP_INFO)."""

from __future__ import annotations

import re
import socket
import struct
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.api.conftest import Server
from tests.support.http import open_table

SERVICE = Path(__file__).resolve().parents[2] / "deploy" / "systemd" / "canasta-web.service"
#: ``struct tcp_info``'s ``tcpi_data_segs_in`` (linux/tcp.h, since Linux 4.6): the segments
#: this socket received that carried data.
DATA_SEGS_IN = 152


def deployed_http() -> str | None:
    """The ``--http`` of the deployed server's uvicorn command, if it has one."""
    exec_start = next(
        line for line in SERVICE.read_text().splitlines() if line.startswith("ExecStart=")
    )
    found = re.search(r"--http[ =](\S+)", exec_start)
    return found.group(1) if found else None


def data_segments(sock: socket.socket) -> int:
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    count: int = struct.unpack_from("I", info, DATA_SEGS_IN)[0]
    return count


def connect(server: Server) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def exchange(sock: socket.socket, request: bytes) -> tuple[bytes, bytes]:
    """Send ``request`` and read one whole answer (Content-Length): its head and body."""
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)\r\ncontent-length: (\d+)", head).group(1))  # type: ignore[union-attr]
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        body += chunk
    assert len(body) == length
    return head, body


def get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()


def answers(server: Server, paths: list[str]) -> tuple[list[tuple[bytes, bytes]], int]:
    """The answers to ``paths`` on one keep-alive connection, and the data segments read."""
    with connect(server) as sock:
        got = [exchange(sock, get(path)) for path in paths]
        return got, data_segments(sock)


def shape(head: bytes) -> tuple[bytes, list[bytes]]:
    """A head's status line and its headers' names (values such as the date and a request's
    id differ from one answer to the next)."""
    status, *headers = head.split(b"\r\n")
    return status, [line.split(b":", 1)[0].lower() for line in headers]


def test_each_answer_arrives_in_one_piece_with_the_same_bytes(
    uvicorn_server: Callable[..., Server],
) -> None:
    http = deployed_http()
    assert http is not None, "deploy/systemd/canasta-web.service runs uvicorn without --http"
    deployed = uvicorn_server(http=http)
    plain = uvicorn_server(http=None)
    with httpx.Client(base_url=deployed.url, timeout=30) as client:
        game = open_table(client)
    # A JSON answer, a refusal, a page of some kilobytes, a game's table: each on one
    # connection, one after another. (A file's answer, such as the lobby's page at /, is
    # read from the disk after its head is written: its head leaves alone, as before.)
    paths = ["/health", "/no-such-page", "/rules", f"/tables/{game.table}", "/health"]

    got, segments = answers(deployed, paths)
    assert segments == len(paths), "each answer's head and body came in one segment"
    for (head, _body), path in zip(got, paths, strict=True):
        assert head.startswith(b"HTTP/1.1 "), path
        assert re.search(rb"(?i)\r\nx-content-type-options: nosniff", head), path
    assert got[0][1] == got[-1][1] == b'{"status":"ok"}'
    assert got[1][0].startswith(b"HTTP/1.1 404 ")

    # uvicorn alone: the same answers (the table's differs only by its store), in two pieces.
    alone, alone_segments = answers(plain, paths[:3])
    assert alone_segments == 2 * 3
    for (head, body), (alone_head, alone_body) in zip(got[:3], alone, strict=True):
        assert shape(head) == shape(alone_head)
        assert len(body) == len(alone_body)
    assert [body for _, body in got[:2]] == [body for _, body in alone[:2]]


def test_a_streamed_answer_s_head_arrives_before_its_messages(
    uvicorn_server: Callable[..., Server],
) -> None:
    server = uvicorn_server(http=deployed_http())
    with httpx.Client(base_url=server.url, timeout=30) as client:
        game = open_table(client)
    with connect(server) as sock:
        sock.sendall(get(f"/deals/{game.deal}/stream"))
        data = b""
        while b"retry:" not in data:
            chunk = sock.recv(65536)
            assert chunk, "the server closed the stream"
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ")
    assert re.search(rb"(?i)\r\ncontent-type: text/event-stream", head)
    assert b"retry: 1000" in body
