"""Machinery of the secrecy tests (tests/api/test_secrecy.py; R-VIEW-1..4, R-SEAT-4).

- ``DealLedger``: what each viewer may see of one deal, step by step, computed on the test
  side from the stored events (``canasta.events.get(deal_id)``). A card is *public* from the
  step it is turned up, discarded, melded or added, laid as a red three, or taken as a pile's
  top card; it is *own* to a seat from the step it is dealt to him, drawn by him or taken by
  him in a pile (and stays his: once public it is visible to all anyway). A card is *secret*
  to a viewer at a step when it is neither public nor his own then. The shuffle seed is
  secret to every non-auditor, always; the stock order is covered card by card (every card
  in the stock is secret to everybody).
- ``discover_get_endpoints``: every GET operation of the app's OpenAPI schema, with its
  parameters, so that endpoints added later are swept without touching these tests.
- ``probes_for``: the concrete requests (path and query values) for one endpoint.
- ``fetch``: one GET through the ``TestClient``; a streaming answer (Server-Sent Events or
  anything not JSON) is read until the viewer has been sent the deal's latest step, until
  it ends by itself, or until it stays silent for a moment, never for ever.
- ``find_leaks``: every secret card (the notation of docs/rules/common.md) and every form of a seed in a body,
  an SSE stream, an error message or a log line. Inside a JSON object that carries an integer
  ``step`` (an event, a replay, a view) the secret set *at that step* applies, which is at
  least the set of cards secret now (what is public or own never becomes secret again).
"""

from __future__ import annotations

import base64
import contextlib
import json
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from fastapi.testclient import TestClient

from domain.state import DealState
from tests.support.openapi import sse_messages

#: A card in the project's notation (docs/rules/common.md): rank and suit (or joker) and the deck number.
CARD_TOKEN = re.compile(r"\b(?:10|[2-9AJQK])[SHDC]/\d\b|\b[BL]J/\d\b")

#: Deal events whose content nobody but an auditor may see at all (R-VIEW-4).
SECRET_EVENT_KINDS = frozenset({"DeckShuffled", "DeckStacked"})

#: Reading a stream: give up after this long without a byte, and after this long in all.
STREAM_IDLE_SECONDS = 0.6
STREAM_TOTAL_SECONDS = 5.0

#: Parameter names that carry a step (a deal event's version): the value given is a step.
STEP_NAMES = ("step", "version", "at")
#: Parameter names meaning "after this step" (resumption).
AFTER_NAMES = ("after", "since", "from", "last-event-id", "last_event_id")


def card_tokens(text: str) -> list[str]:
    return CARD_TOKEN.findall(text)


def seed_forms(seed_hex: str) -> list[str]:
    """Ways a seed could be written out: hex (any case), base64, or a quarter of its hex."""
    raw = bytes.fromhex(seed_hex)
    forms = [seed_hex.lower(), seed_hex.upper()]
    forms += [seed_hex.lower()[i : i + 16] for i in range(0, len(seed_hex), 16)]
    forms.append(base64.b64encode(raw).decode().rstrip("="))
    forms.append(base64.urlsafe_b64encode(raw).decode().rstrip("="))
    return forms


# --- what each viewer may see ------------------------------------------------------------------


class DealLedger:
    """Public and own cards of one deal after each step, from its stored events."""

    def __init__(self, deal_id: UUID, table_id: str, number: int, deck: Iterable[str]) -> None:
        self.deal_id = deal_id
        self.table_id = table_id
        self.number = number
        self.deck = frozenset(deck)
        self.version = 0
        self.order: list[int] = []
        self.player_ids: list[str] = []
        self.kinds: dict[int, str] = {}
        self.seeds: list[str] = []
        self.stacked: list[list[str]] = []
        #: how each card reached a hand (for failure messages)
        self.origin: dict[str, str] = {}
        #: cards dealt to, and drawn by, each seat (positive checks)
        self.dealt: dict[int, list[str]] = {}
        self.drawn: dict[int, list[str]] = {}
        self._public: set[str] = set()
        self._own: dict[int, set[str]] = {}
        self._public_at: dict[int, frozenset[str]] = {}
        self._own_at: dict[int, dict[int, frozenset[str]]] = {}
        self._secret_cache: dict[tuple[int | None, int], frozenset[str]] = {}

    def sync(self, canasta: Any) -> None:
        """Fold the events stored since the last call."""
        for event in canasta.events.get(self.deal_id, gt=self.version or None):
            self._fold(event)

    def _fold(self, event: Any) -> None:
        kind = type(event).__name__
        step = int(event.originator_version)
        assert step == self.version + 1, f"deal {self.deal_id}: step {step} after {self.version}"
        self.version = step
        self.kinds[step] = kind
        if kind == "Started":
            self.order = list(event.order)
            self.player_ids = list(event.player_ids)
        elif kind == "DeckShuffled":
            self.seeds.append(event.seed)
        elif kind == "DeckStacked":
            self.stacked.append(list(event.order))
        elif kind == "CardsDealt":
            for seat, card in event.cards:
                self._own.setdefault(seat, set()).add(card)
                self.dealt.setdefault(seat, []).append(card)
                self.origin[card] = f"dealt to seat {seat} at step {step}"
        elif kind == "CardsDrawn":
            self._own.setdefault(event.seat, set()).update(event.cards)
            self.drawn.setdefault(event.seat, []).extend(event.cards)
            for card in event.cards:
                self.origin[card] = f"drawn by seat {event.seat} at step {step}"
        elif kind == "PonytailPickedUp":  # face down until now; then his own (R-PT-PONY-1)
            self._own.setdefault(event.seat, set()).update(event.cards)
            for card in event.cards:
                self.origin[card] = f"in seat {event.seat}'s ponytail, picked up at step {step}"
        elif kind in ("RedThreeLaid", "CardDiscarded", "CardTurnedUp"):
            self._public.add(event.card)
        elif kind == "PileTaken":
            self._public.add(event.top)
            self._own.setdefault(event.seat, set()).update(event.cards)
        elif kind in ("MeldLaid", "MeldExtended"):
            self._public.update(event.cards)
        self._public_at[step] = frozenset(self._public)
        self._own_at[step] = {seat: frozenset(cards) for seat, cards in self._own.items()}

    def _step(self, step: int | None) -> int:
        if step is None or not 1 <= step <= self.version:
            return self.version
        return step

    def public(self, step: int | None = None) -> frozenset[str]:
        return self._public_at.get(self._step(step), frozenset())

    def own(self, seat: int | None, step: int | None = None) -> frozenset[str]:
        if seat is None:
            return frozenset()
        return self._own_at.get(self._step(step), {}).get(seat, frozenset())

    def seat_of(self, viewer: Viewer) -> int | None:
        """The seat whose cards ``viewer`` may see in this deal (None: a spectator's view;
        a player sitting this deal out sees what a spectator sees, R-SEAT-4)."""
        return viewer.room_seat if viewer.room_seat in self.order else None

    def secret(self, seat: int | None, step: int | None = None) -> frozenset[str]:
        """Cards secret at ``step`` (default: now) to a viewer with that seat (None: any
        viewer who plays no hand in this deal)."""
        at = self._step(step)
        key = (seat, at)
        found = self._secret_cache.get(key)
        if found is None:
            found = self.deck - self.public(at) - self.own(seat, at)
            self._secret_cache[key] = found
        return found

    def last_public_step(self) -> int:
        """The latest step whose event every viewer is shown (not the seed or deck order)."""
        return max((s for s, k in self.kinds.items() if k not in SECRET_EVENT_KINDS), default=0)

    def why_secret(self, card: str, seat: int | None, st: DealState | None) -> str:
        """Where ``card`` is and why a viewer with ``seat`` may not see it (for messages)."""
        where = "in no known place"
        if st is not None:
            if card in st.stock:
                where = f"in the stock ({len(st.stock) - st.stock.index(card)} from the top)"
            elif card in st.deck:
                where = "in the undealt deck"
            else:
                for s, hand in enumerate(st.hands):
                    if card in hand:
                        where = f"in the hand of seat {s}"
        origin = self.origin.get(card, "never dealt or drawn")
        viewer = "a viewer with no hand in this deal" if seat is None else f"seat {seat}"
        return (
            f"{card} is {where} ({origin}); it was never turned up, discarded, melded or laid "
            f"and is not a card of {viewer}"
        )


@dataclass(frozen=True)
class Viewer:
    """Someone looking at the game: a seated player, a registered account with no seat, or
    an anonymous spectator (no token)."""

    label: str
    name: str | None = None
    token: str | None = None
    room_seat: int | None = None

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def described_in(self, ledger: DealLedger) -> str:
        if self.room_seat is not None and self.room_seat not in ledger.order:
            return f"{self.label} (sitting out deal {ledger.number})"
        return self.label


# --- endpoints from the OpenAPI schema ------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    name: str
    where: str  # "path", "query" or "header"
    required: bool
    type: str | None
    enum: tuple[Any, ...] | None
    default: Any


@dataclass(frozen=True)
class Endpoint:
    path: str
    params: tuple[Param, ...]
    content_types: tuple[str, ...]

    @property
    def streaming(self) -> bool:
        return any("event-stream" in t or "jsonl" in t or "ndjson" in t for t in self.content_types)

    @property
    def audit(self) -> bool:
        return "audit" in self.path.strip("/").split("/")

    @property
    def deal_param(self) -> Param | None:
        return next((p for p in self.params if p.where == "path" and "deal" in p.name), None)

    @property
    def table_param(self) -> Param | None:
        return next(
            (
                p
                for p in self.params
                if p.where == "path" and ("table" in p.name or "game" in p.name)
            ),
            None,
        )


def _schema_facts(schema: Mapping[str, Any]) -> tuple[str | None, tuple[Any, ...] | None]:
    if "enum" in schema:
        return schema.get("type"), tuple(schema["enum"])
    for option in schema.get("anyOf", []) + schema.get("oneOf", []):
        if option.get("type") != "null":
            return _schema_facts(option)
    return schema.get("type"), None


def discover_get_endpoints(openapi: Mapping[str, Any]) -> list[Endpoint]:
    """Every GET operation of the schema."""
    endpoints = []
    for path, operations in sorted(openapi["paths"].items()):
        op = operations.get("get")
        if op is None:
            continue
        params = []
        for raw in op.get("parameters", []):
            schema = raw.get("schema", {})
            kind, enum = _schema_facts(schema)
            params.append(
                Param(
                    name=raw["name"],
                    where=raw["in"],
                    required=bool(raw.get("required", False)),
                    type=kind,
                    enum=enum,
                    default=schema.get("default"),
                )
            )
        content: set[str] = set()
        for response in op.get("responses", {}).values():
            content.update(response.get("content", {}))
        endpoints.append(Endpoint(path, tuple(params), tuple(sorted(content))))
    return endpoints


@dataclass(frozen=True)
class Probe:
    """One concrete GET: what to ask and what it is about."""

    endpoint: Endpoint
    url: str
    query: dict[str, Any]
    headers: dict[str, str]
    ledger: DealLedger | None  # the deal the path names, if any
    target_step: int | None  # for streams: the step after which all has been sent
    base: bool = True  # the plain request; False: one parameter set to another value

    @property
    def resumes_after(self) -> int:
        """The step a stream is asked to resume after (0: from the start)."""
        values = [v for k, v in self.query.items() if k.lower() in AFTER_NAMES]
        values += [v for k, v in self.headers.items() if k.lower() in AFTER_NAMES]
        return max((int(v) for v in values), default=0)

    @property
    def label(self) -> str:
        extra = "&".join(f"{k}={v}" for k, v in self.query.items())
        hdr = "".join(f" [{k}: {v}]" for k, v in self.headers.items())
        return f"GET {self.url}{'?' + extra if extra else ''}{hdr}"


class UnknownParameter(AssertionError):
    pass


@dataclass
class SweepContext:
    table_id: str
    table_version: int
    ledgers: list[DealLedger]  # the table's deals, oldest first
    players: int
    names: list[str]  # every account involved (seated players and outsiders)
    rng: random.Random
    all_deals: bool = True  # every deal of the table, or only the current one
    variants: bool = True  # also each optional parameter's other values, one at a time


def _path_values(param: Param, ctx: SweepContext, ledger: DealLedger | None) -> list[str]:
    name = param.name.lower()
    if "deal" in name:
        assert ledger is not None
        return [str(ledger.deal_id)]
    if "table" in name or "game" in name:
        return [ctx.table_id]
    if "seat" in name:
        return [str(s) for s in range(ctx.players)]
    if any(w in name for w in ("player", "name", "account", "user")):
        return list(ctx.names)
    if any(w == name for w in STEP_NAMES):
        return [str(ledger.version if ledger else ctx.table_version)]
    raise UnknownParameter(
        f"the secrecy sweep does not know how to fill path parameter {param.name!r}; "
        "teach tests/api/secrecy_support._path_values about it so the endpoint is covered"
    )


def _query_values(
    param: Param, ctx: SweepContext, ledger: DealLedger | None
) -> tuple[list[Any], list[Any]]:
    """(values for the base request, further values tried one at a time)."""
    name = param.name.lower()
    now = ledger.version if ledger is not None else ctx.table_version
    earlier = ctx.rng.randint(1, max(now, 1))
    if param.enum:
        values = list(param.enum)
        if not param.required:
            return [], [v for v in values if v != param.default]
        return values[:1], values[1:]
    if name in STEP_NAMES:
        return ([now] if param.required else []), [earlier]
    if name in AFTER_NAMES:
        return ([0] if param.required else []), [earlier]
    if "seat" in name:
        seats = list(range(ctx.players))
        return (seats[:1], seats[1:]) if param.required else ([], seats)
    if not param.required:
        return [], []
    if param.type == "integer":
        return [now], [earlier]
    if param.type == "boolean":
        return [False], [True]
    raise UnknownParameter(
        f"the secrecy sweep does not know how to fill required {param.where} parameter "
        f"{param.name!r}; teach tests/api/secrecy_support._query_values about it"
    )


def probes_for(endpoint: Endpoint, ctx: SweepContext) -> list[Probe]:
    """The requests that cover ``endpoint`` in this sweep."""
    if endpoint.deal_param is not None:
        ledgers: list[DealLedger | None] = list(ctx.ledgers if ctx.all_deals else ctx.ledgers[-1:])
    else:
        ledgers = [ctx.ledgers[-1] if ctx.ledgers else None]
    probes = []
    for ledger in ledgers:
        about = ledger if endpoint.deal_param is not None else None
        urls = [endpoint.path]
        for param in endpoint.params:
            if param.where != "path":
                continue
            values = _path_values(param, ctx, ledger)
            urls = [u.replace("{" + param.name + "}", v) for u in urls for v in values]
        base: dict[tuple[str, str], Any] = {}
        extra: list[tuple[tuple[str, str], Any]] = []
        for param in endpoint.params:
            if param.where == "path":
                continue
            if param.where not in ("query", "header"):
                if param.required:
                    raise UnknownParameter(f"{param.where} parameter {param.name!r}")
                continue
            first, more = _query_values(param, ctx, ledger)
            if first:
                base[(param.where, param.name)] = first[0]
            if ctx.variants:
                extra += [((param.where, param.name), v) for v in more]
        variants = [base] + [{**base, key: value} for key, value in extra]
        if endpoint.deal_param is not None and ledger is not None:
            target = ledger.last_public_step()
        elif endpoint.table_param is not None:
            target = ctx.table_version
        else:
            target = None
        for url in urls:
            for i, variant in enumerate(variants):
                query = {n: v for (w, n), v in variant.items() if w == "query"}
                headers = {n: str(v) for (w, n), v in variant.items() if w == "header"}
                probes.append(Probe(endpoint, url, query, headers, about, target, i == 0))
    return probes


# --- reading responses -------------------------------------------------------------------------


@dataclass
class Fetched:
    status: int
    content_type: str
    text: str
    header_text: str
    streamed: bool = False
    ended: bool = True  # a stream that ended by itself
    complete: bool = True  # a stream that ended or sent its ``target_step``

    def json(self) -> Any:
        return json.loads(self.text)

    @property
    def is_json(self) -> bool:
        return "json" in self.content_type and "jsonl" not in self.content_type


_SSE_ID = re.compile(r"^id: ?(\d+)\s*$", re.MULTILINE)


def fetch(
    client: TestClient,
    url: str,
    *,
    query: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    target_step: int | Callable[[], int | None] | None = None,
    idle_seconds: float = STREAM_IDLE_SECONDS,
    total_seconds: float = STREAM_TOTAL_SECONDS,
) -> Fetched:
    """GET ``url``. A streaming answer is read until it ends, until an SSE ``id`` reaches
    ``target_step``, or until a watchdog thread closes it (which cancels the server's
    generator) after ``idle_seconds`` of silence or ``total_seconds`` in all.

    ``target_step`` may be a function, for a stream read while the deal is played on: it
    answers None until the caller knows the step to wait for (the stream may have sent it
    already by then)."""
    with client.stream("GET", url, params=dict(query or {}), headers=dict(headers or {})) as r:
        ctype = r.headers.get("content-type", "")
        header_text = "\n".join(f"{k}: {v}" for k, v in r.headers.items())
        if ("json" in ctype and "jsonl" not in ctype) or r.status_code != 200:
            r.read()
            return Fetched(r.status_code, ctype, r.text, header_text)
        chunks: list[bytes] = []
        started = time.monotonic()
        last_byte = [started]
        last_id = [-1]  # the highest SSE id read so far
        finished = threading.Event()
        cut_off = threading.Event()
        reached_target = threading.Event()

        def target() -> int | None:
            return target_step() if callable(target_step) else target_step

        def watchdog() -> None:
            while not finished.wait(0.005):
                now = time.monotonic()
                goal = target()
                if goal is not None and last_id[0] >= goal:
                    reached_target.set()
                    r.close()
                    return
                if now - last_byte[0] > idle_seconds or now - started > total_seconds:
                    cut_off.set()
                    r.close()
                    return

        guard = threading.Thread(target=watchdog, daemon=True, name=f"watchdog {url}")
        guard.start()
        ended = reached = False
        tail = ""
        try:
            for chunk in r.iter_bytes():
                chunks.append(chunk)
                last_byte[0] = time.monotonic()
                tail = (tail + chunk.decode(errors="replace"))[-4096:]
                ids = _SSE_ID.findall(tail)
                if ids:
                    last_id[0] = max(last_id[0], *(int(i) for i in ids))
                goal = target()
                if goal is not None and last_id[0] >= goal:
                    reached = True
                    break
            else:
                ended = not (cut_off.is_set() or reached_target.is_set())
        except Exception:  # closed by the watchdog: what was read is what counts
            pass
        finally:
            finished.set()
            guard.join(total_seconds)
        reached = reached or reached_target.is_set()
        r.close()
        text = b"".join(chunks).decode(errors="replace")
        return Fetched(
            r.status_code, ctype, text, header_text, True, ended, complete=ended or reached
        )


# --- finding leaks -----------------------------------------------------------------------------

#: The cards secret to a viewer at a step (None: now).
SecretAt = Callable[[int | None], frozenset[str]]


@dataclass(frozen=True)
class Leak:
    card: str  # a card, or "seed <hex>"
    step: int | None  # the step whose secret set it broke (None: now)
    context: str


def _snippet(text: str, token: str, width: int = 90) -> str:
    i = text.find(token)
    if i < 0:
        return text[: 2 * width]
    return text[max(0, i - width) : i + len(token) + width]


def _walk(node: Any, step: int | None, secret_at: SecretAt, found: list[Leak]) -> None:
    if isinstance(node, dict):
        s = node.get("step")
        if isinstance(s, int) and not isinstance(s, bool):
            step = s
        for key, value in node.items():
            _walk(key, step, secret_at, found)
            _walk(value, step, secret_at, found)
    elif isinstance(node, list):
        for item in node:
            _walk(item, step, secret_at, found)
    elif isinstance(node, str):
        tokens = card_tokens(node)
        if tokens:
            secret = secret_at(step)
            for token in tokens:
                if token in secret:
                    found.append(Leak(token, step, _snippet(node, token)))


def find_leaks(
    text: str,
    *,
    secret_at: SecretAt,
    seeds: Iterable[str],
    is_json: bool = False,
    is_sse: bool = False,
    exempt: frozenset[str] = frozenset(),
) -> list[Leak]:
    """Every secret card and seed in ``text``. ``exempt``: cards the viewer himself wrote
    in the request being answered (an echo of his own input reveals nothing)."""

    def at(step: int | None) -> frozenset[str]:
        return secret_at(step) - exempt

    found: list[Leak] = []
    for seed in seeds:
        for form in seed_forms(seed):
            if form in text:
                found.append(Leak(f"seed {seed}", None, _snippet(text, form)))
    now = at(None)
    for token in card_tokens(text):
        if token in now:
            found.append(Leak(token, None, _snippet(text, token)))
    if is_json:
        with contextlib.suppress(ValueError):
            _walk(json.loads(text), None, at, found)
    if is_sse:
        for message in sse_messages(text):
            fields = message.fields
            step = int(fields["id"]) if fields.get("id", "").isdigit() else None
            try:
                data = json.loads(fields.get("data", ""))
            except ValueError:
                data = fields.get("data", "")
            _walk(data, step, at, found)
    unique: dict[tuple[str, int | None], Leak] = {}
    for leak in found:
        unique.setdefault((leak.card, leak.step), leak)
    return list(unique.values())


def request_cards(body: Any) -> frozenset[str]:
    """The cards named anywhere in a request body."""
    return frozenset(card_tokens(json.dumps(body)))


# --- commands ------------------------------------------------------------------------------------


@dataclass
class Sequencer:
    """Each sender's command sequence numbers at the table (R-CMD-1)."""

    last: dict[str, int] = field(default_factory=dict)

    def next(self, name: str) -> int:
        self.last[name] = self.last.get(name, 0) + 1
        return self.last[name]
