"""Live updates as Server-Sent Events, redacted per viewer (R-VIEW-1..4, R-HIST-1).

``GET /deals/{id}/stream`` sends each event of one deal, as ``event_view`` shows it to the
requester; ``GET /tables/{id}/stream`` sends a table's events (seats, teams, start, each deal
opened and recorded, the end), which are public, so that clients learn of new deals.

Wire format, one SSE message per stored event::

    event: CardDiscarded            <- the event's kind
    data: {"step":17,"kind":"CardDiscarded","seat":2,"card":"7H/1"}
    id: 17                          <- the event's step (its version in the aggregate)

At a table with a turn clock, a deal stream's message also holds ``deadline``: when the seat
to act after that event runs out of time (null when nobody is to act, or his turn has timed
out; docs/tables.md, "Turn clock").

Events a viewer may not see at all (the shuffle seed, a stacked deck) are skipped, so ids may
jump; nothing else is. The stream first sends ``retry:`` (the reconnection delay), then
``: heartbeat`` comments when idle (``stream_heartbeat_seconds`` of silence), and after the last event of the deal (``DealScored`` or
``DealAbandoned``) or of the game (``GameEnded`` or ``GameStopped``) a final ``event: end``
whose data is ``{"step": N}`` (the final step), and closes; a table's ``RematchOpened``,
recorded after its game's end, is sent before ``end`` when read with it, and after a
resumption past the end (docs/tables.md). A browser's ``EventSource``
reconnects whenever a stream closes, so a client calls ``close()`` on ``end``.

Heartbeats a browser sees: ``?heartbeat=event`` sends each heartbeat as a message instead of a
comment, ``event: heartbeat`` without ``id`` (the client's ``Last-Event-ID`` stays the last
event's) whose data is ``{"seconds": S}``, ``S`` being ``stream_heartbeat_seconds``: one right
after ``retry:``, then one after every ``S`` seconds of silence. An ``EventSource`` never
shows comments to JavaScript, so a page cannot tell a quiet stream from a connection that
died silently (a laptop's lid closed, a Wi-Fi switch, a NAT that forgot it) without them; the
table page asks for them and resumes a stream that stays silent much longer than ``S``
(docs/web.md). Without the parameter (the default, ``?heartbeat=comment``) the stream is as
it always was: an API client written before it meets no message it does not know.

The OpenAPI document describes one message of each stream (``app.routes.stream_docs``: ``data`` is a
``DealEventView`` or a ``TableEventView``, and ``StreamEnd`` for ``end``); docs/api.md
describes the messages for people.

Resumption: a client sends back the last id it saw as the ``Last-Event-ID`` header (browsers'
``EventSource`` does so by itself on reconnection) or as ``?after=N``; the stream continues with
the first event after that step (the header wins when both are given); a deal's stream given
a step past the deal's, which it never sent, continues after the deal's step. A client that
resumes after the end gets ``event: end`` at once.

No stream polls the store on its own: the process's ``EventHub`` (``app.fanout``) follows
the store once (``LISTEN`` on PostgreSQL, a poll every ``stream_poll_seconds`` on SQLite) and
hands each new event to every open stream of its aggregate. A stream first subscribes, then
reads what it missed from the store (``canasta.events.get(id, gt=last)``), and reads the store
again whenever it finds a step missing, so it never depends on anything kept in the process:
any process sharing the database can serve any stream, whichever process recorded the events.
Each delivered event is redacted and encoded once per kind of viewer (spectators share one
encoding). The settings are ``stream_poll_seconds`` and ``stream_heartbeat_seconds``
(environment ``CANASTA_STREAM_POLL_SECONDS`` / ``CANASTA_STREAM_HEARTBEAT_SECONDS``).
With a read replica (``app.replica``) a stream reads the deal and its events from the replica
once it holds the step the stream resumes after (else from the primary), its follower
reads the new events from the replica too, and a step found missing is read from wherever
holds it (the replica after a short wait, else the primary): the order and the redaction are
the same whichever store answers. A stream signed in by a session cookie stops once the
session is signed out or expired (``SESSION_CHECK_SECONDS``, docs/browsers.md). A stream stops when the client disconnects, and when uvicorn is asked to exit (its ``should_exit`` flag), so that
open streams never hold a shutdown up; clients then reconnect, to this or another process.

The loop every stream runs (subscribe, catch up, send, heartbeats, end) is
``app.routes.stream_loop``; this module holds the routes, what each viewer is shown, and when
a stream ends.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse

from app.application import CanastaApp
from app.deps import Caller, MaybeAccount
from app.fanout import EventHub
from app.replica import DealStore, Reads, ReadsDep, TableStore
from app.routes.deals import ViewAs, follower_of
from app.routes.stream_docs import sse_response
from app.routes.stream_loop import in_stream_thread, sse_stream
from app.schemas_events import DealEventView, TableEventView
from app.sessions import SessionWatch, session_watch
from app.watch import WATCH_DEAL, WATCH_TABLE
from domain.clock import deadline
from domain.deal import Deal
from domain.table import Table
from projections.seat_views import SeatFollower
from projections.visibility import Viewer, event_view

router = APIRouter(tags=["live"])

#: A deal's last event is one of these; so is a game's (a game over may still record its
#: rematch, once: ``RematchOpened`` then ends the table's stream too).
DEAL_FINAL_KINDS = frozenset({"DealScored", "DealAbandoned"})
GAME_FINAL_KINDS = frozenset({"GameEnded", "GameStopped", "RematchOpened"})

#: What a table stream shows of each table event (all of it is public, as ``GET /tables/{id}``
#: shows). A kind not listed here is sent with its step and kind only.
TABLE_FIELDS: dict[str, tuple[str, ...]] = {
    "Created": (
        "host",
        "entry",
        "players",
        "options",
        "target",
        "private",
        "spectators",
        "rematch_of",
        "turn_seconds",
    ),
    "TurnClockSet": ("turn_seconds",),
    "PlayerSeated": ("seat", "player"),
    "TeamsChosen": ("sides",),
    "GameStarted": ("sides", "totals"),
    "DealOpened": ("deal_id", "number", "dealer", "order", "by"),
    "DealRecorded": ("deal_id", "scores", "totals"),
    "GameEnded": ("winners",),
    "GameStopped": ("completed_deals",),
    "SpectatorsSet": ("allowed",),
    "RematchOpened": ("table_id",),
    "MissedTurnsLimitSet": ("limit",),  # absent players (docs/tables.md)
    "SeatLeft": ("seat", "player", "freed"),
    "SeatTakenOver": ("seat", "player", "by", "reason", "since"),
    "SeatTakenBack": ("seat", "player", "since"),
    "SeatGiven": ("seat", "player", "previous", "since"),
}  # InviteRotated: its kind only (the code's hash is never shown)

LastEventId = Annotated[
    int | None,
    Header(
        alias="Last-Event-ID",
        ge=0,
        le=10**9,
        description="the last step the client received; the stream continues after it",
    ),
]
After = Annotated[
    int,
    Query(ge=0, le=10**9, description="continue after this step (Last-Event-ID wins)"),
]
HeartbeatAs = Annotated[
    Literal["comment", "event"],
    Query(
        alias="heartbeat",
        description="how heartbeats are sent: `comment` (`: heartbeat`, the default), or "
        '`event`: `event: heartbeat` messages whose data is {"seconds": S}, the heartbeat '
        "interval, one at the start and one after every S seconds of silence (a browser's "
        "EventSource shows these, never comments: a page may notice a dead connection)",
    ),
]


def table_event_view(event: Any) -> dict[str, Any]:
    """One stored table event as anybody may see it."""
    kind = type(event).__name__
    out: dict[str, Any] = {"step": event.originator_version, "kind": kind}
    # getattr's default: a field added later (``turn_seconds``) is missing from older events.
    out.update({field: getattr(event, field, None) for field in TABLE_FIELDS.get(kind, ())})
    return out


@router.get(
    "/deals/{deal_id}/stream",
    response_class=StreamingResponse,
    responses=sse_response(DealEventView, "a deal's events as the requester may see them"),
    dependencies=[WATCH_DEAL],
)
async def deal_stream(
    deal_id: UUID,
    request: Request,
    store: DealStore,
    reads: ReadsDep,
    account: MaybeAccount,
    last_event_id: LastEventId = None,
    after: After = 0,
    view_as: ViewAs = "me",
    heartbeat: HeartbeatAs = "comment",
) -> StreamingResponse:
    """The deal's events, live, as the requester may see them: a seated player (bearer
    token) gets his own dealt and drawn cards; anybody else, or ``?as=spectator``, the
    spectator's events. Resume with ``Last-Event-ID`` or ``?after=``."""
    start = last_event_id if last_event_id is not None else after
    canasta = await _resumable(reads, store, deal_id, start)
    hub: EventHub = request.app.state.hub
    # What the check that the requester may watch read from the same store a moment ago.
    watched_deal, watched_table = _watched(request, canasta is store)
    if watched_deal is not None and watched_deal.version < start:  # a replica behind then
        watched_deal = None

    def opening() -> tuple[
        Deal, SeatFollower, Callable[[Any], datetime | None] | None, int | None, int
    ]:
        deal = watched_deal if watched_deal is not None else canasta.get_deal(deal_id)
        # Nothing was sent past the deal's step: a later id resumes from there. The follower
        # and the clock fold every event after the step they start from, none may be skipped.
        begin = min(start, deal.version)
        # Each event as the requester could see it then: a seat's player may change (a leave,
        # a seat taken back or given: docs/tables.md), and his private cards go with the seat.
        follower = follower_of(canasta, deal, account, view_as, begin)
        clock = _clock(canasta, deal, begin, watched_table)
        final = final_step(canasta, hub, deal_id, DEAL_FINAL_KINDS)
        return deal, follower, clock, final, begin

    # What opening the stream reads, in one worker thread of the streams' own (a thread
    # hand-off costs as much as a read, and the commands' threads are not the streams' to take).
    deal, follower, clock, final, start = await in_stream_thread(opening)
    seating = deal.state

    def viewer_of_event(event: Any) -> object:
        """Who the requester was for this event and, at a table with a turn clock, the
        deadline after it (both folded from every event in order)."""
        viewer = follower.advance(event)
        return viewer if clock is None else (viewer, clock(event))

    def show(event: Any, key: object) -> dict[str, Any] | None:
        viewer, when = key if isinstance(key, tuple) else (key, None)
        assert isinstance(viewer, Viewer)
        shown = event_view(event, viewer, seating)
        if clock is not None and shown is not None:  # each message has its deadline
            shown["deadline"] = when
        return shown

    return sse_stream(
        request,
        reads,
        canasta,
        deal_id,
        start,
        final,
        viewer_of_event,
        show,
        DEAL_FINAL_KINDS,
        heartbeat_events=heartbeat == "event",
        signed_in=_session_check(request, account),
    )


def _session_check(request: Request, account: Caller | None) -> SessionWatch | None:
    """The stream's session, if a session cookie signed it in (``app.sessions``)."""
    if account is None:
        return None
    return session_watch(request.app.state.canasta, account.name, account.session, account.token)


async def _resumable(reads: Reads, store: CanastaApp, aggregate_id: UUID, start: int) -> CanastaApp:
    """Where a stream resuming after step ``start`` reads: the replica only once it holds
    that step (a stream folds what it sends onto the state at ``start``)."""
    if store is reads.replica and start > 0:
        return await reads.store_for(aggregate_id, start)
    return store


def _watched(request: Request, same_store: bool) -> tuple[Deal | None, Table | None]:
    """The deal and table ``app.watch`` read for this request, if it read them from the
    store the route reads (``same_store``)."""
    if not same_store:
        return None, None
    state = request.state
    return getattr(state, "watched_deal", None), getattr(state, "watched_table", None)


def _clock(
    canasta: CanastaApp, deal: Deal, start: int, table: Table | None = None
) -> Callable[[Any], datetime | None] | None:
    """The turn clock's deadline after each event of the deal from step ``start + 1`` on,
    given the events in order (docs/tables.md): the deal as it was at ``start`` folds each
    event it is given, and its deadline is read from the recorded facts. None at a table
    without a clock (its messages have no ``deadline``). ``table``: the deal's table, if it
    was just read."""
    table_id = UUID(deal.state.table_id)
    if table is None or table.id != table_id:
        table = canasta.get_table(table_id)
    turn_seconds = table.turn_seconds
    if turn_seconds is None:
        return None
    folded: list[Any] = [
        canasta.get_deal(deal.id, version=min(start, deal.version)) if start >= 1 else None
    ]

    def after(event: Any) -> datetime | None:
        if folded[0] is not None and event.originator_version <= folded[0].version:
            return deadline(folded[0].turn_since, turn_seconds, folded[0].state)
        folded[0] = event.mutate(folded[0])
        return deadline(folded[0].turn_since, turn_seconds, folded[0].state)

    return after


@router.get(
    "/tables/{table_id}/stream",
    response_class=StreamingResponse,
    responses=sse_response(TableEventView, "a table's events"),
    dependencies=[WATCH_TABLE],
)
async def table_stream(
    table_id: UUID,
    request: Request,
    store: TableStore,
    reads: ReadsDep,
    account: MaybeAccount,
    last_event_id: LastEventId = None,
    after: After = 0,
    heartbeat: HeartbeatAs = "comment",
) -> StreamingResponse:
    """The table's events, live: seats, teams, the start, each deal opened (with its id)
    and recorded (with its scores), the end of the game. All public; no token needed."""
    start = last_event_id if last_event_id is not None else after
    canasta = await _resumable(reads, store, table_id, start)
    hub: EventHub = request.app.state.hub
    _deal, watched_table = _watched(request, canasta is store)

    def opening() -> int | None:
        if watched_table is None:
            canasta.get_table(table_id)  # 404 unless it is a table
        return final_step(canasta, hub, table_id, GAME_FINAL_KINDS, start)

    final = await in_stream_thread(opening)
    return sse_stream(
        request,
        reads,
        canasta,
        table_id,
        start,
        final,
        lambda event: "table",
        lambda event, _: table_event_view(event),
        GAME_FINAL_KINDS,
        heartbeat_events=heartbeat == "event",
        signed_in=_session_check(request, account),
    )


def final_step(
    canasta: CanastaApp,
    hub: EventHub,
    aggregate_id: UUID,
    final_kinds: frozenset[str],
    start: int | None = None,
) -> int | None:
    """The step of the stream's final event, if it has been recorded (as far as the
    process's follower has read, when it holds the aggregate's history: a final event
    recorded after that comes to the stream like any other). ``start``, for a stream after
    whose final event something may still come (a table's: its ``RematchOpened``): where it
    resumes. Resumed at or after the final event the follower holds, it asks the store: it
    would end at once, and a rematch recorded since (its 201 answered, the follower not there
    yet) would never reach the client that resumed to get it (docs/tables.md)."""
    held = hub.newest_held(aggregate_id)
    ends_at_once = (
        start is not None
        and held is not None
        and type(held).__name__ in final_kinds
        and held.originator_version <= start
    )
    newest = (
        [held]
        if held is not None and not ends_at_once
        else list(canasta.events.get(aggregate_id, desc=True, limit=1))
    )
    if newest and type(newest[0]).__name__ in final_kinds:
        step: int = newest[0].originator_version
        return step
    return None
