"""A reverse proxy in front of a test server, as nginx stands in front of one in production:
every connection is relayed to the server, and while the server is down (its port refuses
connections) the proxy answers ``502 Bad Gateway`` itself, as nginx does. A browser's
``EventSource`` given such an answer gives up for good instead of retrying (the HTML
standard's "fail the connection"), which a page must survive.

``with Proxy(server_port) as proxy:`` listens on ``proxy.url`` until the block ends."""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType

BAD_GATEWAY = (
    b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n"
    b"Connection: close\r\n\r\nBad Gateway"
)


class Proxy:
    def __init__(self, backend_port: int) -> None:
        self.backend_port = backend_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.bad_gateways = 0  # answers given while the server was down
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        try:
            backend = socket.create_connection(("127.0.0.1", self.backend_port), timeout=5)
        except OSError:
            self.bad_gateways += 1
            with contextlib.suppress(OSError):
                client.recv(65536)  # the request, as a proxy reads it before answering
                client.sendall(BAD_GATEWAY)
            client.close()
            return
        backend.settimeout(None)
        threading.Thread(target=_pipe, args=(backend, client), daemon=True).start()
        _pipe(client, backend)

    def __enter__(self) -> Proxy:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._closed.set()
        self.listener.close()
        self._thread.join(timeout=5)


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    """Copy ``source`` to ``sink`` until either side ends; then close both (the other
    direction's copy ends with them)."""
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()
