"""The loop of a live stream (``app.routes.stream`` describes the protocol): subscribe to the
process's ``EventHub``, read what was missed from the store (or the replica), send each event
as its viewer sees it (encoded once per viewer for all the process's streams), heartbeats
when idle, ``end`` after the final event; stop when the client leaves, the session that
signed the stream in ends, or uvicorn exits."""

from __future__ import annotations

import asyncio
import json
import signal
import time
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, TypeVar
from uuid import UUID

import anyio
import anyio.to_thread
from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.responses import StreamingResponse
from fastapi.sse import format_sse_event

from app.application import CanastaApp
from app.fanout import Delivered, EventHub, Subscription
from app.metrics import STREAM_CATCHUPS
from app.outage import DATABASE_ERRORS
from app.replica import Reads
from app.sessions import SessionWatch

T = TypeVar("T")

#: Reconnection delay suggested to ``EventSource`` clients (``retry:``), in milliseconds.
RETRY_MILLISECONDS = 1000
#: Store reads of all streams of one process that may run at once (worker threads): streams
#: never take more than this many threads (and database connections) from commands.
POLL_THREADS = 4
#: A waiting stream looks at least this often whether its client left or the server exits.
WAKE_SECONDS = 1.0
#: A stream signed in by a session cookie reads at most this often whether the session still
#: signs its player in: one signed out (or expired) ends the stream within about this long.
SESSION_CHECK_SECONDS = 2.0


async def in_stream_thread(work: Callable[[], T]) -> T:
    """``work()`` in a worker thread of the streams' own limiter (``POLL_THREADS``)."""
    return await anyio.to_thread.run_sync(work, limiter=_poll_limiter())


def sse_stream(
    request: Request,
    reads: Reads,
    canasta: CanastaApp,
    aggregate_id: UUID,
    after: int,
    final: int | None,
    viewer_of_event: Callable[[Any], object],
    show: Callable[[Any, object], dict[str, Any] | None],
    final_kinds: frozenset[str],
    *,
    heartbeat_events: bool = False,
    signed_in: SessionWatch | None = None,
) -> StreamingResponse:
    """``viewer_of_event(event)``: who the requester is for this event (it is given every
    event in order, so it may follow the requester's seat); ``show(event, viewer)``: the
    event as that viewer sees it. Each delivered event is shown and encoded once per viewer,
    for every stream of this process. ``final``: the step of the final event if it was
    recorded when the stream opened (``final_step``). ``heartbeat_events``: heartbeats as
    ``event: heartbeat`` messages, one at the start too (``?heartbeat=event``), else as
    comments. ``signed_in``: for a stream signed in by a session cookie, its session (or by a
    bearer token, the token): the stream closes, before it sends anything more, once the
    session is closed (the token revoked) as this process knows (asked before every write)
    or no longer signs its player in (signed out elsewhere, expired: read at most every
    ``SESSION_CHECK_SECONDS``; a token's revocation elsewhere is known through the store's
    follower, ``app.fanout``); the client's reconnection is then answered as any new
    request, a spectator's or 401."""
    heartbeat = _seconds(request, "stream_heartbeat_seconds")
    beat = (
        format_sse_event(event="heartbeat", data_str=json.dumps({"seconds": heartbeat}))
        if heartbeat_events
        else format_sse_event(comment="heartbeat")
    )
    hub: EventHub = request.app.state.hub

    def read(last: int, source: CanastaApp = canasta) -> Sequence[Any]:
        return list(source.events.get(aggregate_id, gt=last or None))

    def encode(event: Any, viewer: object) -> bytes | None:
        shown = show(event, viewer)
        if shown is None:
            return None
        data = json.dumps(jsonable_encoder(shown), separators=(",", ":"))
        return format_sse_event(
            data_str=data, event=shown["kind"], id=str(event.originator_version)
        )

    def message(item: Any) -> bytes | None:
        """An event's message; a delivered event's is encoded once per viewer."""
        if not isinstance(item, Delivered):
            return encode(item, viewer_of_event(item))
        viewer = viewer_of_event(item.event)
        if viewer not in item.encodings:
            item.encodings[viewer] = encode(item.event, viewer)
        return item.encodings[viewer]

    async def messages() -> AsyncIterator[bytes]:
        last = after
        yield format_sse_event(retry=RETRY_MILLISECONDS)
        if final is not None and after >= final:  # resumed after the end
            yield _end(final)
            return
        if heartbeat_events:  # the interval, and that the stream is open
            yield beat
        limiter = _poll_limiter()
        loop = asyncio.get_running_loop()
        # Subscribed before the catch-up read: an event recorded in between is in one or
        # both, and a step already sent is never sent again.
        on_replica = canasta is reads.replica

        def subscribe_and_read() -> tuple[Subscription, Sequence[Any]]:
            sub = hub.subscribe(aggregate_id, loop)
            if sub.history is not None:  # the follower holds it all: no read (app/fanout.py)
                STREAM_CATCHUPS.labels("memory").inc()
                return sub, [item for item in sub.history if item.step > last]
            STREAM_CATCHUPS.labels("store").inc()
            try:
                return sub, ([] if on_replica else read(last))
            except BaseException:
                sub.close()
                raise

        sub, batch = await anyio.to_thread.run_sync(subscribe_and_read, limiter=limiter)
        sub.tick_every(min(WAKE_SECONDS, heartbeat))
        session_due = time.monotonic() + SESSION_CHECK_SECONDS

        async def session_ended(*, idle: bool = False) -> bool:
            nonlocal session_due
            if signed_in is None:
                return False
            if signed_in.closed_here():
                return True
            if time.monotonic() < session_due:
                return False
            session_due = time.monotonic() + SESSION_CHECK_SECONDS
            try:
                return not await anyio.to_thread.run_sync(signed_in.signs_in, limiter=limiter)
            except DATABASE_ERRORS:
                # The database does not answer (docs/operations.md, "When PostgreSQL goes
                # away"): nobody can sign out or revoke a token meanwhile, and nothing new can
                # be recorded to send; a waiting stream stays open and asks again later. With
                # events to send it closes (the client's reconnection is asked as any request).
                return not idle

        try:
            if on_replica and sub.history is None:
                # the replica once it holds what the hub has passed
                held = await reads.replica_log_async(sub.position, limiter)
                source = canasta if held is not None else reads.primary
                batch = await anyio.to_thread.run_sync(read, last, source, limiter=limiter)
            quiet_since = time.monotonic()
            while True:
                ended = False
                chunk: list[bytes] = []
                for item in batch:
                    step = item.step if isinstance(item, Delivered) else item.originator_version
                    if step <= last:
                        continue
                    last = step
                    shown = message(item)
                    if shown is not None:
                        chunk.append(shown)
                    event = item.event if isinstance(item, Delivered) else item
                    ended = ended or type(event).__name__ in final_kinds
                if chunk and await session_ended():
                    return
                if chunk:  # what came together goes out together: one write
                    yield b"".join(chunk)
                    quiet_since = time.monotonic()
                if ended:  # after the whole batch: a rematch recorded after the end is sent too
                    yield _end(last)
                    return
                batch = []
                # Woken by new events, or by the stream's tick (at least every WAKE_SECONDS).
                items = [await sub.queue.get()]
                while not sub.queue.empty():
                    items.append(sub.queue.get_nowait())
                if server_is_exiting():
                    return
                delivered = [item for item in items if isinstance(item, Delivered)]
                if not delivered:
                    # Idle: has the client gone? (While events flow, the response notices a
                    # client gone when it writes.) Is a heartbeat due?
                    if await request.is_disconnected() or await session_ended(idle=True):
                        return
                    if time.monotonic() - quiet_since >= heartbeat:
                        yield beat
                        quiet_since = time.monotonic()
                    continue
                if delivered[0].step > last + 1:  # a gap: the store has what is missing
                    # (with a replica: once it holds it, else the primary, which does)
                    source = canasta
                    if canasta is reads.replica:
                        source = await reads.store_for(aggregate_id, delivered[0].step - 1)
                    batch = await anyio.to_thread.run_sync(read, last, source, limiter=limiter)
                batch = [*batch, *delivered]
        finally:
            sub.close()

    return StreamingResponse(
        messages(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def _end(last: int) -> bytes:
    return format_sse_event(data_str=json.dumps({"step": last}), event="end")


def _seconds(request: Request, name: str) -> float:
    """A stream setting (``Settings.stream_poll_seconds`` / ``stream_heartbeat_seconds``)."""
    return float(getattr(request.app.state.settings, name))


_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = (
    weakref.WeakKeyDictionary()
)


def _poll_limiter() -> anyio.CapacityLimiter:
    """The capacity limiter of the stream reads of this event loop (one per process)."""
    loop = asyncio.get_running_loop()
    limiter = _limiters.get(loop)
    if limiter is None:
        limiter = _limiters[loop] = anyio.CapacityLimiter(POLL_THREADS)
    return limiter


def server_is_exiting() -> bool:
    """True once the uvicorn server of this process has been asked to exit.

    uvicorn waits for open responses to finish before it shuts the application down, and it
    does not tell a streaming response that it is stopping; its signal handler (installed in
    the main thread) is the bound method ``Server.handle_exit``, whose ``should_exit`` flag is
    read here. Nothing is patched; under any other server this is always False.
    """
    handler = signal.getsignal(signal.SIGTERM)
    server = getattr(handler, "__self__", None)
    return bool(getattr(server, "should_exit", False))
