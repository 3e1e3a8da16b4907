"""Browser sessions over HTTP: the session cookie and the CSRF rule (R-CMD-2).

A web page signs in with ``POST /sessions`` (the bearer token in the ``Authorization`` header)
and gets the cookie ``canasta_session``: a random session key (not the token), ``HttpOnly`` (no
script reads it), ``SameSite=Strict`` (a browser sends it only with requests from this site's
own pages), ``Path=/``, ``Max-Age`` the session's lifetime (``CANASTA_SESSION_MAX_AGE_SECONDS``),
and ``Secure`` when the request came over HTTPS (the scheme uvicorn reports: TLS of its own, or
``X-Forwarded-Proto`` from a trusted proxy). ``DELETE /sessions`` signs out: the session is
closed in the store and the cookie cleared.

Who is calling is decided in one place, ``app.deps.optional_account``: a request with an
``Authorization: Bearer`` header is that token's account, and its cookie is ignored; otherwise
a request with the cookie is the session's account. A request that changes something (any
method but GET, HEAD and OPTIONS) and is signed in by the cookie must carry the header
``X-Canasta-CSRF`` (any non-empty value; ``1`` will do), which a cross-site form cannot send
and a cross-origin script can send only where CORS allows it: without it, 403
``csrf_header_required`` before anything is read or changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fastapi.concurrency import run_in_threadpool
from starlette.requests import HTTPConnection, Request
from starlette.types import Scope

from app.application import CanastaApp
from app.auth import well_formed
from domain.accounts import token_hash, token_id
from domain.errors import Forbidden

COOKIE = "canasta_session"
COOKIE_BYTES = COOKIE.encode()
CSRF_HEADER = "X-Canasta-CSRF"
CSRF_CODE = "csrf_header_required"
#: Methods that change nothing: they need no CSRF header.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_https(request: Request) -> bool:
    """The request came over HTTPS, as the server reports it (``scope["scheme"]``)."""
    return request.url.scheme == "https"


def session_cookie(key: str, max_age: int, *, secure: bool) -> str:
    """The ``Set-Cookie`` value that signs a browser in (``max_age`` 0: signs it out)."""
    cookie = f"{COOKIE}={key}; Max-Age={max_age}; Path=/; HttpOnly; SameSite=Strict"
    return cookie + "; Secure" if secure else cookie


def session_key(scope: Scope) -> str | None:
    """The session cookie's key exactly as the routes read it (``Request.cookies``: every
    ``Cookie`` header in order, the last ``canasta_session`` winning; an empty one is none),
    for the middleware that must know who a request is before the routes do (the rate
    limits' stream caps, ``Idempotency-Key``). Read any other way, a request could be counted
    as one session and served as another: ``canasta_session=<made up>; canasta_session=``
    would be a fresh "session" to count for every stream, and an anonymous spectator to
    serve."""
    if not any(name == b"cookie" and COOKIE_BYTES in value for name, value in scope["headers"]):
        return None  # the common case, without parsing
    return HTTPConnection(scope).cookies.get(COOKIE) or None


def check_csrf(request: Request) -> None:
    """A cookie-authenticated request that changes something must carry ``X-Canasta-CSRF``."""
    if request.method not in SAFE_METHODS and not request.headers.get(CSRF_HEADER, "").strip():
        raise Forbidden(CSRF_CODE, "session.csrf", header=CSRF_HEADER)


async def session_account(canasta: CanastaApp, key: str) -> str | None:
    """The account an open session key signs in, or None (unknown, expired, signed out or
    malformed); read from the store in the threadpool."""
    if not well_formed(key):
        return None
    return await run_in_threadpool(canasta.session_name, key)


@dataclass(frozen=True)
class SessionWatch:
    """A live stream signed in by a session cookie (``app.routes.stream``): whether this
    process knows the session closed (``closed_here``, no I/O, asked before every write:
    closed here, or read closed by the store's follower, as when the account's tokens were
    replaced on another process) and whether
    it still signs its player in (``signs_in``, a read of the primary store, where sessions
    are kept: signed out by another process, or expired)."""

    closed_here: Callable[[], bool]
    signs_in: Callable[[], bool]


def session_watch(
    canasta: CanastaApp, name: str, key: str | None, token: str | None = None
) -> SessionWatch | None:
    """The ``SessionWatch`` of a request signed in as ``name`` by the session ``key``, or by
    the bearer ``token`` (revoked: ``POST /me/token``, ``canasta revoke-token``; known in
    memory, through the store's follower, read from the store only while it lags); None
    when neither signed it in."""
    if key is not None:
        return SessionWatch(
            lambda: canasta.closed_here(key), lambda: canasta.session_name(key) == name
        )
    if token is not None:
        tid = token_id(token_hash(token))
        return SessionWatch(
            lambda: canasta.revoked_here(tid), lambda: canasta.token_signs_in(token, name)
        )
    return None
