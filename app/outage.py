"""PostgreSQL gone away (docs/operations.md, "When PostgreSQL goes away"): a request that
needs the database while it does not answer gets 503 ``database_unavailable`` with
``Retry-After``, within ``CANASTA_DATABASE_WAIT_SECONDS`` (the recorders try a query again
within that time only: ``app.infra.library.within_wait``), never a 500 and a traceback in
the log. Nothing was recorded for it, but in one case: a connection lost during a COMMIT
leaves its outcome unknown to the server. Sending the same request again is right either
way: a command's events and its command log entry are one transaction, and a command sent
again under the same sequence number is answered from the store if it was recorded (R-CMD-1;
an ``Idempotency-Key``'s request likewise: ``app.idempotency``).

An ASGI middleware around the routes, the command lane and the ``Idempotency-Key``
middleware. The log says it once: the first refusal is one warning line; while the
refusals go on, one line every ``LOG_EVERY_SECONDS`` counts them. The database's return
is in the log of the process's own followers (``liveness: recorded again``, ``event hub:
listening again``).
"""

from __future__ import annotations

import json
import logging
import threading
import time

import psycopg
from eventsourcing.persistence import InterfaceError, OperationalError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.application import error_body

log = logging.getLogger("canasta.api")

#: What a query raises when the database does not answer, or the connection broke (the
#: pool's ``PoolTimeout`` is a ``psycopg.OperationalError``).
DATABASE_ERRORS = (
    OperationalError,
    InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
)
#: Seconds a client is asked to wait before it sends again.
RETRY_AFTER_SECONDS = 2
#: At most one log line in this many seconds while requests are refused.
LOG_EVERY_SECONDS = 10.0

MESSAGE = (
    "the database does not answer: send the same request again shortly (a command under the"
    " same sequence number: if it was recorded after all, its answer comes back)"
)


def unavailable_body() -> bytes:
    return json.dumps(error_body("database_unavailable", MESSAGE)).encode()  # 503


class DatabaseOutage:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._lock = threading.Lock()
        self._logged_at: float | None = None  # the last line's time, while refusals go on
        self._refused = 0  # refusals since that line

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except DATABASE_ERRORS as exc:
            self._note(scope, exc, started)
            if started:  # a live stream: its connection ends, the client resumes
                return
            await send(
                {
                    "type": "http.response.start",
                    "status": 503,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"retry-after", str(RETRY_AFTER_SECONDS).encode()),
                        (b"cache-control", b"no-store"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": unavailable_body()})

    def _note(self, scope: Scope, exc: BaseException, started: bool) -> None:
        now = time.monotonic()
        with self._lock:
            self._refused += 1
            quiet = self._logged_at is not None and now - self._logged_at < LOG_EVERY_SECONDS
            if quiet:
                return
            first = self._logged_at is None or now - self._logged_at >= 2 * LOG_EVERY_SECONDS
            count, self._refused, self._logged_at = self._refused, 0, now
        what = "a live stream ended" if started else "answered 503 database_unavailable"
        reason = str(exc).splitlines()[0] if str(exc) else ""
        if first:
            log.warning(
                "the database does not answer: %s %s %s (%s: %s); the requests that need it "
                "are answered 503 until it does",
                scope.get("method"),
                scope.get("path"),
                what,
                type(exc).__name__,
                reason,
            )
        else:
            log.warning(
                "the database still does not answer: %d requests answered 503 in the last "
                "%g s (%s: %s)",
                count,
                LOG_EVERY_SECONDS,
                type(exc).__name__,
                reason,
            )
