"""Request ids, log lines and the metrics of every request (docs/operations.md).

``Observe`` is an ASGI middleware outside every other part of the application (the command
lane, the body limit and CORS included). For each HTTP request it:

- takes the request's id from ``X-Request-ID`` when the client sent a sane one (1 to 128
  characters among letters, digits and ``-_.:/+=@``), else makes one (32 hex digits:
  16 random ones of the process, then a counter), and
  returns it in the answer's ``X-Request-ID``;
- keeps it in a context variable for the request's task (and the threads it starts), so
  that every log line written while the request runs carries it: the server's own and
  uvicorn's access line;
- records the metrics of ``app.metrics``: the time to the answer's status line by route
  template, the answer's status, the command's outcome on ``POST /deals/{id}/commands``
  (by the answer: 200 accepted, or answered again when the body says ``"replayed":true``;
  otherwise refused, by the error code of the body), and the live streams open.

``configure_logging`` puts one handler on the root logger, for the server's loggers and
uvicorn's: JSON objects, one a line (``CANASTA_LOG_FORMAT=json``), or plain text.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import secrets
import sys
import time
from collections.abc import Iterable
from typing import Any, TextIO

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from starlette.routing import Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import metrics
from app.command_lane import PATH as COMMAND_PATH
from app.log_lines import (
    REQUEST_ID,
    HiddenInvites,
    JsonFormatter,
    RequestIdFilter,
    TextFormatter,
)
from app.readiness import measured_lag
from app.readiness import router as readiness_router
from app.settings import Settings

__all__ = ["REQUEST_ID", "JsonFormatter", "Observe", "RequestIdFilter", "TextFormatter"]

HEADER = b"x-request-id"
SANE_ID = re.compile(r"[A-Za-z0-9_.:/+=@-]{1,128}")

COMMAND_ROUTE = "/deals/{deal_id}/commands"
#: The methods counted by name (any other is ``OTHER``).
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_REPLAYED_END = b'"replayed":true}'
_EVENT_STREAM = b"text/event-stream"


#: New ids: 16 random hex digits of this process, then a counter (16 hex digits): unique
#: across processes and restarts, and much cheaper than a uuid4 per request.
_PREFIX = secrets.token_hex(8)
_counter = itertools.count(1)


def request_id_of(headers: list[tuple[bytes, bytes]]) -> str:
    """The client's ``X-Request-ID`` if sane, else a new id."""
    for name, value in headers:
        if name == HEADER:
            text = value.decode("latin-1")
            if SANE_ID.fullmatch(text):
                return text
            break
    return f"{_PREFIX}{next(_counter):016x}"


def route_template(scope: Scope) -> str:
    """The template of the route that answered (``/deals/{deal_id}``), never the raw path."""
    route = scope.get("route")
    if route is not None:
        return str(route.path)
    if scope["method"] == "POST" and COMMAND_PATH.fullmatch(scope["path"]):
        return COMMAND_ROUTE  # answered by the command lane, below the routing
    if "app_root_path" in scope:  # a mount answered (the web pages' files): its prefix
        return str(scope["root_path"])[len(scope["app_root_path"]) :] + "/{path}"
    # No route in this scope: a HEAD (answered as a GET in a copy of the scope), a 405, or
    # nothing at all: the routes are matched again.
    probe = {**scope, "method": "GET" if scope["method"] == "HEAD" else scope["method"]}
    router = getattr(scope.get("app"), "router", None)
    return _match(getattr(router, "routes", ()), probe) or metrics.UNMATCHED


def _match(routes: Iterable[Any], probe: Scope) -> str | None:
    """The template of the first route that matches ``probe`` fully, else of the first that
    matches its path only (a 405); routers included without a prefix are looked into."""
    partial: str | None = None
    for candidate in routes:
        included = getattr(candidate, "original_router", None)  # FastAPI's included router
        if included is not None:
            path = _match(included.routes, probe)
            if path is not None:
                return path
            continue
        match, _ = candidate.matches(probe)
        if match == Match.NONE or getattr(candidate, "path", None) is None:
            continue
        path = str(candidate.path) + ("/{path}" if isinstance(candidate, Mount) else "")
        if match == Match.FULL:
            return path
        partial = partial or path
    return partial


def _error_code(body: bytes) -> str:
    try:
        code = json.loads(body)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return "unknown"
    return code if isinstance(code, str) and len(code) <= 64 else "unknown"


class Observe:
    """See the module's docstring. ``record``: whether metrics are recorded."""

    def __init__(self, app: ASGIApp, record: bool = True) -> None:
        self.app = app
        self.record = record
        # Label children, looked up once (bounded: routes, methods and statuses are).
        self._timers: dict[tuple[str, str], Any] = {}
        self._answers: dict[tuple[str, str, int], Any] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        rid = request_id_of(scope["headers"])
        REQUEST_ID.set(rid)  # never reset: each request has its own task (and context)
        echo = (HEADER, rid.encode("latin-1"))
        if not self.record:

            async def send_with_id(message: Message) -> None:
                if message["type"] == "http.response.start":
                    message = {**message, "headers": [*message.get("headers", ()), echo]}
                await send(message)

            await self.app(scope, receive, send_with_id)
            return

        status = 0
        command = False  # a command's answer: its outcome is counted at its body's end
        body = b""
        stream: str | None = None

        async def observed(message: Message) -> None:
            nonlocal status, command, body, stream
            kind = message["type"]
            if kind == "http.response.start":
                headers = [*message.get("headers", ()), echo]
                message = {**message, "headers": headers}
                status = message["status"]
                route = route_template(scope)
                self._observe(scope, route, status, time.perf_counter() - started)
                command = route == COMMAND_ROUTE and scope["method"] == "POST"
                if (
                    status == 200
                    and scope["method"] == "GET"
                    and any(
                        name == b"content-type" and value.startswith(_EVENT_STREAM)
                        for name, value in headers
                    )
                ):
                    stream = route
                    metrics.OPEN_STREAMS.labels(route).inc()
            elif kind == "http.response.body" and command:
                chunk = message.get("body", b"")
                if status != 200 and len(body) < 4096:
                    body += chunk
                if not message.get("more_body", False):
                    command = False
                    self._count_command(status, chunk, body)
            await send(message)

        try:
            await self.app(scope, receive, observed)
        except BaseException:
            if status == 0:  # no answer yet: the server answers 500 (app.errors)
                route = route_template(scope)
                self._observe(scope, route, 500, time.perf_counter() - started)
                if route == COMMAND_ROUTE and scope["method"] == "POST":
                    metrics.COMMANDS_REFUSED.labels("internal").inc()
            raise
        finally:
            if stream is not None:
                metrics.OPEN_STREAMS.labels(stream).dec()

    def _observe(self, scope: Scope, route: str, status: int, seconds: float) -> None:
        method = scope["method"]
        if method not in METHODS:  # the client chooses it: keep the label's values bounded
            method = "OTHER"
        key = (method, route)
        timer = self._timers.get(key)
        if timer is None:
            timer = self._timers[key] = metrics.REQUEST_SECONDS.labels(method, route)
        timer.observe(seconds)
        answers = self._answers.get((method, route, status))
        if answers is None:
            answers = self._answers[method, route, status] = metrics.RESPONSES.labels(
                method, route, str(status)
            )
        answers.inc()

    @staticmethod
    def _count_command(status: int, last_chunk: bytes, body: bytes) -> None:
        if status == 200:
            if last_chunk.endswith(_REPLAYED_END):
                metrics.COMMANDS_REPLAYED.inc()
            else:
                metrics.COMMANDS_ACCEPTED.inc()
        else:
            metrics.COMMANDS_REFUSED.labels(_error_code(body)).inc()


# --- log lines ------------------------------------------------------------------------------


class _StderrHandler(logging.StreamHandler[TextIO]):
    """Writes to ``sys.stderr`` as it is at each line (a test runner swaps it)."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


_handler: logging.Handler | None = None

#: The loggers ``log_level`` sets (modules log under their names: ``app.bot_runner``...).
SERVER_LOGGERS = ("app", "canasta", "bots", "projections", "domain")
_levels_set: dict[str, int] = {}  # the level configure_logging gave each of them


def configure_logging(log_format: str, level: str) -> None:
    """One handler on the root logger (idempotent), in ``log_format`` (``json`` or
    ``text``); the server's loggers (``SERVER_LOGGERS``) at ``level``, other libraries'
    at the root's (warnings). uvicorn's loggers keep their levels
    (``--log-level``) and write through the same handler."""
    global _handler
    if _handler is None:
        _handler = _StderrHandler()
        _handler.addFilter(RequestIdFilter())
        _handler.addFilter(HiddenInvites())
    _handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    root = logging.getLogger()
    if _handler not in root.handlers:
        root.addHandler(_handler)
    for name in SERVER_LOGGERS:
        logger = logging.getLogger(name)
        # A level somebody else gave the logger since (a test's log capture, say) stays.
        if logger.level in (logging.NOTSET, _levels_set.get(name)):
            logger.setLevel(level.upper())
            _levels_set[name] = logger.level
    for name in ("uvicorn", "uvicorn.access", "uvicorn.error"):
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.propagate = True


# --- installation ---------------------------------------------------------------------------


def install(api: FastAPI, settings: Settings) -> None:
    """The middleware (add it after every other middleware: it must be the outermost),
    ``GET /ready`` and ``GET /metrics``; and the log lines' format."""
    configure_logging(settings.log_format, settings.log_level)
    if settings.metrics:
        metrics.warn_if_alone()
    api.add_middleware(Observe, record=settings.metrics)
    api.include_router(readiness_router)

    @api.get("/metrics", include_in_schema=False)
    async def metrics_route(request: Request) -> Response:
        """Prometheus's text exposition (``app.metrics``); 404 with ``CANASTA_METRICS=false``."""
        if not settings.metrics:
            return Response(status_code=404)
        try:
            head, lags = await measured_lag(request)
        except Exception as exc:
            logging.getLogger(__name__).warning("metrics: the event store failed: %r", exc)
            head, lags = None, {}
        hub = getattr(request.app.state, "hub", None)
        if hub is not None:  # a follower stuck with no request asking: noticed now
            hub.tokens_fresh()
        families = list(metrics.store_gauges(head, lags))
        body, content_type = await run_in_threadpool(metrics.exposition, families)
        return Response(body, media_type=content_type)
