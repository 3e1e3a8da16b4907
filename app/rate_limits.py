"""Per-client limits: request rates and concurrent live streams, answered with 429.

An ASGI middleware outside everything but CORS (so that a refusal is cheap: nothing is read,
parsed, routed or looked up in the store, and a browser still reads the answer). Each request
falls in one class:

- *registration*: ``POST /players`` (a new account) and ``POST /sessions`` (a browser signs in),
  counted per client address always: a token must not buy more accounts;
- *commands*: every other request that may change something (any method but GET, HEAD and
  OPTIONS), the command lane's ``POST /deals/{id}/commands`` included (this middleware sits
  outside it), and the dry runs;
- *reads*: GET and HEAD, the opening of a live stream included;

and ``/health``, ``/ready``, ``/metrics`` and OPTIONS (CORS preflights) are never counted.
Commands and reads are counted per player when the request's bearer token is one this process
already knows (``app.auth.known_account``: in memory, no I/O), otherwise per client address (an
anonymous spectator, a browser signed in by its cookie, a token not yet seen here, a made-up
or revoked token: rotating made-up tokens buys nothing; every token, while this process's
follower of the store lags: docs/api.md, "Replacing a token"). A client address is the one uvicorn reports:
behind a reverse proxy, ``X-Forwarded-For`` as trusted by uvicorn's ``--forwarded-allow-ips``
(``FORWARDED_ALLOW_IPS``); an IPv6 address counts for its /64 network, which one subscriber
holds whole.

Each class has a list of limits (``limits`` notation, ``"20/second;600/minute"``), counted by
``limits``' fixed-window strategy (a window opens at a client's first request and lasts the
limit's period) in this process's memory (``ProcessCounters``): with several workers each
process counts alone (docs/operations.md, "Limits"). A request over a limit gets 429
``rate_limited`` with ``Retry-After`` (seconds until the window that refused it ends).

Live streams (``GET /deals/{id}/stream``, ``GET /tables/{id}/stream``) are also capped by how
many one client holds open at once in this process: per credential (bearer token or session
cookie) when the request sends one, per address otherwise; one more gets 429
``too_many_streams`` with ``Retry-After``. A stream whose credential the route then refuses
ends at once, so a made-up credential holds nothing.

Off: ``CANASTA_RATE_LIMITS=false`` (the middleware is not installed), or per limit (an empty
list of rates, a stream cap of 0). In-process callers (the bot runner, ``canasta`` commands)
never pass through HTTP and are never limited.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
import time
from functools import lru_cache

from limits import RateLimitItem, parse_many, storage, strategies
from starlette.types import ASGIApp, Receive, Scope, Send

from app.application import CanastaApp, said_body
from app.auth import bearer_token, known_account
from app.sessions import session_key
from app.settings import Settings
from domain.refusals import said

REGISTRATION = "registration"
COMMANDS = "commands"
READS = "reads"

#: Requests that are never counted: probes, metrics, CORS preflights.
EXEMPT_PATHS = frozenset({"/health", "/ready", "/metrics"})
REGISTRATION_PATHS = frozenset({"/players", "/sessions"})
STREAM_PATH = re.compile(r"/(?:deals|tables)/[^/]+/stream")
SAFE_METHODS = frozenset({"GET", "HEAD"})
#: ``Retry-After`` of a stream over the cap: a client must first close one of its streams.
STREAM_RETRY_SECONDS = 5

#: How often the counters of ended windows are dropped (a sweep of them all).
SWEEP_SECONDS = 60.0


class ProcessCounters(storage.Storage):
    """The counters of ``limits``' fixed windows, in this process's memory, for the event loop.

    The library's own ``MemoryStorage`` starts a thread every 10 ms while requests come and
    sweeps every counter in it each time (100 sweeps a second, over as many counters as there
    are clients); here a window's counter is dropped when its key is next counted, and every
    ``SWEEP_SECONDS`` one sweep drops those of clients gone quiet. No locks: only the event
    loop counts."""

    STORAGE_SCHEME = None

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}
        self.expirations: dict[str, float] = {}
        self.next_sweep = time.time() + SWEEP_SECONDS

    @property
    def base_exceptions(self) -> type[Exception]:
        return ValueError

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        now = time.time()
        if now >= self.next_sweep:
            self._sweep(now)
        if self.expirations.get(key, 0.0) <= now:  # a new window
            self.expirations[key] = now + expiry
            self.counts[key] = amount
            return amount
        count = self.counts[key] + amount
        self.counts[key] = count
        return count

    def get(self, key: str) -> int:
        if self.expirations.get(key, 0.0) <= time.time():
            return 0
        return self.counts[key]

    def get_expiry(self, key: str) -> float:
        return self.expirations.get(key, time.time())

    def check(self) -> bool:
        return True

    def reset(self) -> int | None:
        cleared = len(self.counts)
        self.counts.clear()
        self.expirations.clear()
        return cleared

    def clear(self, key: str) -> None:
        self.counts.pop(key, None)
        self.expirations.pop(key, None)

    def _sweep(self, now: float) -> None:
        for key in [key for key, end in self.expirations.items() if end <= now]:
            del self.expirations[key], self.counts[key]
        self.next_sweep = now + SWEEP_SECONDS


@lru_cache(maxsize=4096)
def address_key(host: str) -> str:
    """What an address counts as: itself, or its /64 network for IPv6."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host  # a test client's made-up name, a Unix socket
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return host


def parse_rates(setting: str) -> list[RateLimitItem]:
    """A setting's limits; none for an empty one."""
    return parse_many(setting) if setting.strip() else []


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return "addr:" + address_key(client[0]) if client else "addr:unknown"


def credentials(scope: Scope) -> tuple[str | None, str | None]:
    """The bearer token and the session cookie's key, as the routes read them: the first
    ``Authorization`` header (``HTTPBearer``), the cookie as ``app.sessions.session_key``."""
    token = None
    for name, value in scope["headers"]:
        if name == b"authorization":
            token = bearer_token(value.decode("latin-1"))
            break
    return token, session_key(scope)


class ClientLimits:
    """The middleware (installed by ``app.main`` when ``CANASTA_RATE_LIMITS`` is on)."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.limiter = strategies.FixedWindowRateLimiter(ProcessCounters())
        self.rates: dict[str, list[RateLimitItem]] = {
            REGISTRATION: parse_rates(settings.rate_limit_registration),
            COMMANDS: parse_rates(settings.rate_limit_commands),
            READS: parse_rates(settings.rate_limit_reads),
        }
        self.max_streams_per_token = settings.max_streams_per_token
        self.max_streams_per_address = settings.max_streams_per_address
        self.open_streams: dict[str, int] = {}  # per credential or address, in this process

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in EXEMPT_PATHS:
            await self.app(scope, receive, send)
            return
        method = scope["method"]
        if method in SAFE_METHODS:
            kind = READS
        elif method == "OPTIONS":
            await self.app(scope, receive, send)
            return
        elif method == "POST" and scope["path"] in REGISTRATION_PATHS:
            kind = REGISTRATION
        else:
            kind = COMMANDS
        address = client_address(scope)
        token, cookie = credentials(scope)
        limits = self.rates[kind]
        if limits:
            who = address
            if kind != REGISTRATION and token is not None:
                canasta: CanastaApp | None = getattr(scope["app"].state, "canasta", None)
                name = known_account(canasta, token) if canasta is not None else None
                if name is not None:
                    who = "player:" + name
            key = kind + "/" + who
            for rate in limits:
                if not self.limiter.hit(rate, key):
                    await self._refuse_rate(scope, send, kind, key, rate)
                    return
        if kind == READS and STREAM_PATH.fullmatch(scope["path"]):
            await self._stream(scope, receive, send, address, token, cookie)
            return
        await self.app(scope, receive, send)

    async def _refuse_rate(
        self, scope: Scope, send: Send, kind: str, key: str, rate: RateLimitItem
    ) -> None:
        reset = self.limiter.get_window_stats(rate, key).reset_time
        retry = max(1, math.ceil(reset - time.time()))
        words = said(
            "limits.rate",
            requests="registrations" if kind == REGISTRATION else kind,
            per="player" if "/player:" in key else "client address",
            amount=rate.amount,
            seconds=rate.get_expiry(),
            retry=retry,
        )
        data = json.dumps(said_body("rate_limited", words)).encode()
        await answer_429(send, data, retry, close=scope["method"] not in SAFE_METHODS)

    async def _stream(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        address: str,
        token: str | None,
        cookie: str | None,
    ) -> None:
        if token is not None:
            who, cap = "token:" + token, self.max_streams_per_token
        elif cookie is not None:
            who, cap = "session:" + cookie, self.max_streams_per_token
        else:
            who, cap = address, self.max_streams_per_address
        if cap <= 0:
            await self.app(scope, receive, send)
            return
        held = self.open_streams.get(who, 0)
        if held >= cap:
            per = "client address" if who == address else "player"
            words = said("limits.streams", held=held, per=per, cap=cap)
            data = json.dumps(said_body("too_many_streams", words)).encode()
            await answer_429(send, data, STREAM_RETRY_SECONDS, close=False)
            return
        self.open_streams[who] = held + 1
        try:
            await self.app(scope, receive, send)
        finally:
            left = self.open_streams[who] - 1
            if left:
                self.open_streams[who] = left
            else:
                del self.open_streams[who]


async def answer_429(send: Send, data: bytes, retry_after: int, *, close: bool) -> None:
    """429 with its JSON error body and ``Retry-After``; ``close``: the request may have a
    body, left unread, so the connection is closed after the answer."""
    headers = [
        (b"content-length", str(len(data)).encode()),
        (b"content-type", b"application/json"),
        (b"retry-after", str(retry_after).encode()),
    ]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": data})
