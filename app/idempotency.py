"""``Idempotency-Key``: a retried request that changes something is done once (docs/api.md,
"Retrying safely").

The IETF httpapi draft "The Idempotency-Key HTTP Header Field", as Stripe's API has it: a
client that sends the same key again with the same request (a timeout, a dropped connection,
a double tap) gets the first answer back, status and body, with ``Idempotent-Replayed:
true``, and nothing is done again. The same key with another body is refused, 422
``idempotency_key_reused``; a retry while the first request is still being processed, 409
``idempotency_key_in_progress`` (``Retry-After: 1``). A key holds for
``CANASTA_IDEMPOTENCY_KEY_SECONDS`` (24 h by default). Without the header nothing changes.

An ASGI middleware in front of the routes of ``ROUTES`` (every route that changes something,
but ``POST /deals/{id}/commands``, whose sequence numbers do this already (R-CMD-1), its dry
run, which changes nothing, the sign-in and sign-out, and ``POST /me/token``, whose retry
with the bearer token it replaced is refused anyway: that token is revoked). A key is scoped
to its caller (the account of the bearer token or the session cookie; nobody for ``POST
/players``), the method and the path: the same key from another account, or on another
route or table, is another key. A request whose caller the route will refuse (an unknown token, a cookie
without the CSRF header, no credentials where one is needed) is handed on untouched.

Only a success (2xx) is stored: a refusal changed nothing, so its key is freed and a retry
runs again. The keys live in the database (``app.infra.idempotency_store``), one row per key
under a unique primary key, so that two processes given the same key at once do the request
once. The database holds neither the key nor the answer in clear: the row's id is a hash of
the caller, route and key, and the answer (which may hold a new account's token or a
private table's invite code) is encrypted with AES-GCM under another hash of them: only a
client that knows the key can have it back.

A request whose process dies before it answers leaves its key held: a retry gets 409 until
``STALE_CLAIM_SECONDS`` have passed, and then runs again (whether the first one did its
work before dying cannot be known from here).

A request that met a database outage (503 ``database_unavailable``, ``app.outage``) before
it sent anything to be recorded (``app.infra.writes``) recorded nothing for certain: its key
is freed, so that the client's retry runs at once when the database is back. The key cannot
be freed while the database is away, so ``Releases`` frees it as soon as the database
answers again (tried every ``RELEASE_EVERY_SECONDS``), and a retry that reaches the same
process first frees it itself. One whose save of events had begun may have been recorded
(the connection may have broken during the COMMIT, after it landed): its key stays held, a
retry gets 409 until the claim is stale, as for a process that died. So does one that
failed otherwise (a 500, a cancelled request) after its save began; before, it is freed.

A success whose answer could not be stored (``IdempotencyStore.finish`` failed: the database
went away just after the work) is answered all the same, and ``Releases`` stores the answer
as soon as the store takes it (a retry that reaches this process first stores it itself):
until then a retry gets 409, then the first answer.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from typing import Any

import anyio.to_thread
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.application import error_body, said_body
from app.auth import account_name, bearer_token
from app.idempotency_keys import (
    HEADER,
    KEY_PATTERN,
    MAX_KEY,
    MIN_KEY,
    STALE_CLAIM_SECONDS,
    BadKey,
    Claimed,
    InProgress,
    Outcome,
    Replay,
    Reused,
    claim,
    derive,
    fingerprint,
    parse_key,
    seal,
    unseal,
)
from app.infra.idempotency_store import IdempotencyStore
from app.infra.writes import watched
from app.limits import replayed
from app.outage import DATABASE_ERRORS
from app.sessions import CSRF_HEADER, session_account, session_key
from domain.refusals import said

log = logging.getLogger("canasta.api")

REPLAYED = "Idempotent-Replayed"
#: The error codes (docs/rules/common.md).
KEY_REUSED = "idempotency_key_reused"
IN_PROGRESS = "idempotency_key_in_progress"
#: How often a key left held by a database outage is tried again to be freed.
RELEASE_EVERY_SECONDS = 0.2
#: How often a key is tried again after an error that is not the database's absence.
SETTLE_AFTER_ERROR_SECONDS = 5.0
#: Expired keys are deleted at most this often per process.
PURGE_EVERY_SECONDS = 60.0

#: The routes that take the header: (method, path template).
ROUTES: frozenset[tuple[str, str]] = frozenset(
    {
        ("POST", "/players"),
        ("POST", "/tables"),
        ("POST", "/tables/practice"),
        ("PUT", "/tables/{table_id}/clock"),
        ("POST", "/tables/{table_id}/seats"),
        ("PUT", "/tables/{table_id}/teams"),
        ("POST", "/tables/{table_id}/start"),
        ("POST", "/tables/{table_id}/deals"),
        ("POST", "/tables/{table_id}/stop"),
        ("POST", "/tables/{table_id}/invite"),
        ("PUT", "/tables/{table_id}/spectators"),
        ("POST", "/tables/{table_id}/rematch"),
        ("POST", "/tables/{table_id}/leave"),
        ("POST", "/tables/{table_id}/seats/{seat}/give"),
        ("PUT", "/tables/{table_id}/missed-turns"),
    }
)
#: The routes a caller without credentials may send a key to (the others refuse him).
ANONYMOUS = frozenset({("POST", "/players")})


def _error(status: int, body: dict[str, Any], extra: list[tuple[bytes, bytes]]) -> list[Message]:
    data = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
        *extra,
    ]
    return [
        {"type": "http.response.start", "status": status, "headers": headers},
        {"type": "http.response.body", "body": data},
    ]


#: Each route's path pattern (Starlette's, as the router compiles it).
_PATTERNS = [(method, template, compile_path(template)[0]) for method, template in sorted(ROUTES)]


def covered(scope: Scope) -> tuple[str, str] | None:
    """The (method, path template) of the route the request goes to, if it takes a key."""
    for method, template, pattern in _PATTERNS:
        if method == scope["method"] and pattern.match(scope["path"]):
            return method, template
    return None


class Releases:
    """What this process still owes the keys' store for requests that ended while it could
    not be written: the key of a request that met a database outage having recorded nothing,
    to be freed (``add``: ``IdempotencyStore.release``, which frees it only if the same
    request still holds it), and the answer of a request that succeeded but could not be
    stored, to be stored (``keep``: ``IdempotencyStore.finish``, likewise). A thread tries
    every ``RELEASE_EVERY_SECONDS`` until the store takes it: a key to free until its claim
    is stale anyway, an answer until the key expires (a retry that took the key over
    meanwhile keeps its own answer). A retry that reaches this process first settles its
    key itself (``settle``). The thread runs only while there is something to settle."""

    def __init__(self, store: IdempotencyStore) -> None:
        self._store = store
        # key_id -> (claim, give up at, the answer to store: (status, sealed), or None: free)
        self._keys: dict[str, tuple[str, float, tuple[int, str] | None]] = {}
        self._lock = threading.Lock()
        self._running = False
        self._logged: set[str] = set()

    def add(self, key_id: str, claim: str, claimed_at: float) -> None:
        """Free the key once the database answers."""
        self._owe(key_id, (claim, claimed_at + STALE_CLAIM_SECONDS, None))

    def keep(self, key_id: str, claim: str, expires_at: float, status: int, sealed: str) -> None:
        """Store the answer once the store takes it."""
        self._owe(key_id, (claim, expires_at, (status, sealed)))

    def _owe(self, key_id: str, owed: tuple[str, float, tuple[int, str] | None]) -> None:
        with self._lock:
            self._keys[key_id] = owed
            if self._running:
                return
            self._running = True
        threading.Thread(target=self._run, name="idempotency-releases", daemon=True).start()

    def settle(self, key_id: str) -> bool:
        """Free ``key_id``, or store its answer, now if it waits here (a retry came): True if
        it did. Raises what the store raises (while the database is away)."""
        with self._lock:
            held = self._keys.get(key_id)
        if held is None:
            return False
        claim, _until, answer = held
        if answer is None:
            self._store.release(key_id, claim)
        else:
            self._store.finish(key_id, claim, *answer)
        with self._lock:
            if self._keys.get(key_id) == held:
                del self._keys[key_id]
            self._logged.discard(key_id)
        return True

    def _run(self) -> None:
        while True:
            with self._lock:
                now = time.time()
                for key_id in [k for k, (_, until, _) in self._keys.items() if until < now]:
                    del self._keys[key_id]  # a retry takes it over anyway
                    self._logged.discard(key_id)
                if not self._keys:
                    self._running = False
                    return
                key_id = next(iter(self._keys))
            try:
                self.settle(key_id)
            except DATABASE_ERRORS:
                time.sleep(RELEASE_EVERY_SECONDS)
            except Exception:  # not an outage: a defect, tried again less often
                if key_id not in self._logged:
                    self._logged.add(key_id)
                    log.exception("idempotency: cannot settle a key yet (tried again)")
                time.sleep(SETTLE_AFTER_ERROR_SECONDS)


class Idempotency:
    """The middleware (see the module's docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._next_purge = 0.0
        self._releases: Releases | None = None

    def releases(self, store: IdempotencyStore) -> Releases:
        if self._releases is None:
            self._releases = Releases(store)
        return self._releases

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        headers: dict[str, str] = {}  # the first of each, as the routes read them
        for name, value in scope["headers"]:
            headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
        raw = headers.get(HEADER.lower())
        route = covered(scope) if raw is not None else None
        if raw is None or route is None:
            await self.app(scope, receive, send)
            return
        try:
            key = parse_key(raw)
        except BadKey as exc:
            await _send(send, _error(422, error_body("malformed", str(exc)), []))
            return
        caller = await self._caller(scope["app"].state.canasta, headers, session_key(scope), route)
        if caller is None:  # the route refuses it (401, 403): nothing to keep
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")
        key_id, secret = derive(caller, scope["method"], scope["path"], key)
        store: IdempotencyStore = scope["app"].state.idempotency
        ttl = float(scope["app"].state.settings.idempotency_key_seconds)
        now = time.time()
        purge = now >= self._next_purge
        if purge:
            self._next_purge = now + PURGE_EVERY_SECONDS

        releases = self.releases(store)

        def decide() -> Outcome:
            if purge:
                store.purge(now)
            # held by a request of this process that met an outage having recorded nothing,
            # or whose answer could not be stored: freed (this retry runs) or stored (it gets
            # the answer) first, before its claim may be taken for stale
            with contextlib.suppress(Exception):  # still refused: the claim says in progress
                releases.settle(key_id)
            return claim(store, key_id, fingerprint(body), now, ttl)

        outcome = await anyio.to_thread.run_sync(decide)
        if isinstance(outcome, Reused):
            words = said("idempotency.reused")
            await _send(send, _error(422, said_body(KEY_REUSED, words), []))
        elif isinstance(outcome, InProgress):
            words = said("idempotency.in_progress")
            await _send(send, _error(409, said_body(IN_PROGRESS, words), [(b"retry-after", b"1")]))
        elif isinstance(outcome, Replay):
            status, content_type, data = unseal(secret, key_id, outcome.sealed)
            start: Message = {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", content_type.encode("latin-1")),
                    (b"content-length", str(len(data)).encode()),
                    (REPLAYED.lower().encode(), b"true"),
                ],
            }
            await _send(send, [start, {"type": "http.response.body", "body": data}])
        else:
            held = (key_id, secret, outcome, now)
            await self._first(scope, replayed(messages, receive), send, held, now + ttl)

    async def _first(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        held: tuple[str, bytes, Claimed, float],
        expires_at: float,
    ) -> None:
        """Run the request, keep its answer if it succeeded (else free the key, unless it may
        have recorded something), answer."""
        key_id, secret, claimed, claimed_at = held
        store: IdempotencyStore = scope["app"].state.idempotency
        answer: list[Message] = []

        async def keep(message: Message) -> None:
            answer.append(message)

        with watched() as writes:
            try:
                await self.app(scope, receive, keep)
            except DATABASE_ERRORS:
                # 503 database_unavailable (app.outage), at once: the key is freed when the
                # database answers again if nothing was sent to be recorded; else the
                # outcome is unknown and the key stays held (the module's docstring)
                if not writes.sent:
                    self.releases(store).add(key_id, claimed.claim, claimed_at)
                raise
            except BaseException:
                # any other failure (a defect: 500 internal; a cancelled request): freed if
                # nothing was sent to be recorded; else it may have been, and the key stays
                # held as after an outage (the module's docstring)
                if writes.sent:
                    _log_held(scope)
                else:
                    await anyio.to_thread.run_sync(store.release, key_id, claimed.claim)
                raise
        start = next((m for m in answer if m["type"] == "http.response.start"), None)
        status = int(start["status"]) if start is not None else 500
        if status >= 500 and writes.sent:
            _log_held(scope)
            await _send(send, answer)
            return
        if 200 <= status < 300 and start is not None:
            content_type = next(
                (v.decode("latin-1") for k, v in start.get("headers", []) if k == b"content-type"),
                "application/json",
            )
            body = b"".join(m.get("body", b"") for m in answer if m["type"] == "http.response.body")
            sealed = seal(secret, key_id, status, content_type, body)
            try:
                await anyio.to_thread.run_sync(store.finish, key_id, claimed.claim, status, sealed)
            except Exception as exc:
                # the work is done: answer it even so, and store the answer as soon as the
                # store takes it; until then a retry is told 409 in progress, then gets it
                log.warning(
                    "idempotency: could not store the answer of %s %s yet (%s: %s): it is "
                    "stored when the database takes it, retries meanwhile get 409 %s",
                    scope["method"],
                    scope["path"],
                    type(exc).__name__,
                    exc,
                    IN_PROGRESS,
                )
                self.releases(store).keep(key_id, claimed.claim, expires_at, status, sealed)
        else:
            await anyio.to_thread.run_sync(store.release, key_id, claimed.claim)
        await _send(send, answer)

    @staticmethod
    async def _caller(
        canasta: Any, headers: dict[str, str], session: str | None, route: tuple[str, str]
    ) -> str | None:
        """Whose key it is: ``account:<name>`` for a bearer token or a session cookie the
        route will accept, ``anonymous`` where the route takes no credentials; None when the
        route will refuse the request."""
        token = bearer_token(headers.get("authorization"))
        if token is not None:
            name = await account_name(canasta, token)
            return None if name is None else f"account:{name}"
        if session is not None:
            if not headers.get(CSRF_HEADER.lower(), "").strip():
                return None
            name = await session_account(canasta, session)
            return None if name is None else f"account:{name}"
        return "anonymous" if route in ANONYMOUS else None


def _log_held(scope: Scope) -> None:
    log.warning(
        "idempotency: %s %s failed after it began to save: it may have been recorded, so its "
        "key stays held (retries get 409 %s until the claim is %.0f s old)",
        scope["method"],
        scope["path"],
        IN_PROGRESS,
        STALE_CLAIM_SECONDS,
    )


async def _send(send: Send, messages: list[Message]) -> None:
    for message in messages:
        await send(message)


def store_for(canasta: Any, memory: bool) -> IdempotencyStore:
    """The keys' store of the application's database (``app.main``'s start-up)."""
    if memory:
        return IdempotencyStore.in_memory()
    return IdempotencyStore.for_datastore(canasta.factory.datastore)


#: The header's OpenAPI parameter, on every operation of ``ROUTES``.
PARAMETER: dict[str, Any] = {
    "name": HEADER,
    "in": "header",
    "required": False,
    "schema": {
        "type": "string",
        "minLength": MIN_KEY,
        "maxLength": MAX_KEY,
        "pattern": KEY_PATTERN,
    },
    "description": "A key of your own (a random UUID) for this one request: a retry with "
    "the same key and body within 24 h gets the first answer back (with "
    f"{REPLAYED}: true) and does nothing again; another body under the key: 422 "
    f"{KEY_REUSED}; the first still being processed: 409 {IN_PROGRESS} (docs/api.md, "
    '"Retrying safely").',
}


#: The header's refusals, as the OpenAPI document names them on the operations that take it.
REFUSALS = (
    (
        "409",
        IN_PROGRESS,
        f"a request with this {HEADER} is still being processed: send it "
        "again after Retry-After seconds",
    ),
    ("422", KEY_REUSED, f"this {HEADER} came with another body: a new request needs a new key"),
)
ERROR_SCHEMA = "#/components/schemas/ErrorOut"


def document(paths: dict[str, Any]) -> None:
    """Add the header to the OpenAPI operations of ``ROUTES``, ``Idempotent-Replayed`` to
    their success answers, and the header's refusals to their 409 and 422 answers (those of
    the other operations do not name them: they ignore the header)."""
    for method, path in sorted(ROUTES):
        operation = paths.get(path, {}).get(method.lower())
        if operation is None:
            continue
        parameters = operation.setdefault("parameters", [])
        if not any(p.get("name") == HEADER for p in parameters):
            parameters.append(PARAMETER)
        for status, code, meaning in REFUSALS:
            answer = operation["responses"].setdefault(status, {"description": ""})
            answer.setdefault("content", {"application/json": {"schema": {"$ref": ERROR_SCHEMA}}})
            if code not in answer["description"]:
                said = answer["description"]
                answer["description"] = (
                    f"{said}; {code}: {meaning}" if said else f"{code}: {meaning}"
                )
        for status, answer in operation["responses"].items():
            if status.startswith("2"):
                answer.setdefault("headers", {})[REPLAYED] = {
                    "description": f"true: the stored answer to an earlier request with this "
                    f"{HEADER}; nothing was done again",
                    "schema": {"type": "string", "enum": ["true"]},
                }
