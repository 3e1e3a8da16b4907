"""A TCP relay in front of a real server, which a test can cut as a network or a stopped
server cuts it: ``Relay(host, port)`` listens on a port of its own and forwards every
connection to ``host:port``; ``cut()`` closes its listening socket and every connection it
carries, so that the client's open connections break and new ones are refused, as when the
PostgreSQL server behind it stops; ``resume()`` listens on the same port again, as the
server does when it starts again. Used to stop "the replica" of one test without stopping
the standby that every test worker shares (tests/support/replica.py).

``Relay(host, port, refused=BAD_GATEWAY)`` stands in front of a web server as a reverse proxy
(nginx) does: while the server is down (its port refuses connections), every request gets the
proxy's own ``502 Bad Gateway`` (counted in ``refusals``) instead of a refused connection. A
browser's ``EventSource`` given such an answer gives up for good instead of retrying (the HTML
standard's "fail the connection"), which a page must survive (tests/web/test_restart.py).

``stall()`` makes every open connection die silently, as a laptop's lid closed and opened, a
Wi-Fi switch, or a NAT or proxy that forgets an idle connection without a FIN or RST: the
relay keeps both ends open but forwards nothing more on them (what comes is dropped), so
neither the browser nor the server learns that the connection is gone. New connections are
carried as before (the network is back) (tests/web/test_silent_drop.py)."""

from __future__ import annotations

import contextlib
import socket
import threading
from urllib.parse import urlsplit, urlunsplit

from tests.support.http import free_port

#: What nginx answers while the server behind it is down.
BAD_GATEWAY = (
    b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n"
    b"Connection: close\r\n\r\nBad Gateway"
)


class Relay:
    def __init__(self, host: str, port: int, *, refused: bytes | None = None) -> None:
        self.target = (host, port)
        self.refused = refused  # answered, once the request is read, when the target refuses
        self.refusals = 0
        self._sockets: set[socket.socket] = set()
        self._stalled: set[socket.socket] = set()  # what comes from these is dropped
        self._lock = threading.Lock()
        self.port = free_port()  # outside the ephemeral ports: ``resume`` listens on it again
        self._listen()

    def _listen(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self.port = self._listener.getsockname()[1]
        self._cut = False
        threading.Thread(
            target=self._accept, args=(self._listener,), name="relay-accept", daemon=True
        ).start()

    def resume(self) -> None:
        """Listen again on the same port, as the server does when it starts again."""
        self._listen()

    @classmethod
    def to_url(cls, url: str) -> tuple[Relay, str]:
        """A relay to the server of the database URL ``url``, and the URL through it."""
        parts = urlsplit(url)
        relay = cls(parts.hostname or "127.0.0.1", parts.port or 5432)
        netloc = f"{parts.username}@127.0.0.1:{relay.port}" if parts.username else None
        return relay, urlunsplit(parts._replace(netloc=netloc or f"127.0.0.1:{relay.port}"))

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                if self.refused is not None:
                    self.refusals += 1
                    threading.Thread(target=self._refuse, args=(client,), daemon=True).start()
                else:
                    client.close()
                continue
            with self._lock:
                if self._cut:
                    client.close()
                    upstream.close()
                    return
                self._sockets.update((client, upstream))
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _refuse(self, client: socket.socket) -> None:
        """The proxy's own answer, after the request (as a proxy reads it first)."""
        assert self.refused is not None
        with contextlib.suppress(OSError):
            client.settimeout(5)
            client.recv(65536)
            client.sendall(self.refused)
        client.close()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                if source not in self._stalled:
                    sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def stall(self) -> None:
        """Forward nothing more on the connections open now, and close none of them."""
        with self._lock:
            self._stalled |= self._sockets

    def cut(self) -> None:
        """Stop listening (new connections are refused) and break every open connection."""
        with self._lock:
            self._cut = True
            sockets, self._sockets = self._sockets, set()
            self._stalled = set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        self._listener.close()
        for s in sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()
