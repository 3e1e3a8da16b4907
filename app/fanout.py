"""One follower of the event store per process, fanning new events out to the live streams.

Before this, every open stream polled the store on its own, so spectators cost database
queries in proportion to their number. Now ``EventHub`` reads the store's notification log
once per process:

- on PostgreSQL it holds one connection of its own that ``LISTEN``s on the events table's
  channel (the library ``NOTIFY``s it on every insert) and reads the new notifications when
  woken, or after ``poll_seconds`` at the latest (a safety net, e.g. after a dropped
  connection), but not twice within ``read_interval`` seconds (the commits of that time are
  read in one query); on SQLite and in memory it looks every ``poll_seconds``;
- while streams are open and there is no replica, a read is one query: the new
  notifications themselves (the store's head is read only to skip ahead when no stream is
  open, or to know what the replica must have replayed);
- each new event whose aggregate has an open stream in this process is decoded once and put
  on the queue of every such stream (``Subscription``), in the event loop the stream runs in.

The database's work thus depends on the events written, not on the streams open: one
notification read per wake-up per process, plus each stream's own read of the events it
missed when it opens (``after`` / ``Last-Event-ID``), and again only if it ever finds a gap.
A stream never trusts the hub blindly: it keeps the last step it sent and reads the store
for any step it finds missing (``EventHub`` guarantees neither order across a reconnection of
its listener nor that a wake-up is never lost), so resumption, ordering and secrecy rest on
the store exactly as before.

With a read replica (``app.replica``, docs/scaling.md) the follower is still woken by the
primary (a hot standby cannot ``LISTEN``: notifications are not replicated) and reads the
primary's head, one query per wake-up; it then reads the new notifications from the replica
once the replica has replayed them, waiting up to ``read_replica_wait_seconds``, and from the
primary if it has not by then. Both hold the same log (the replica a prefix of it: ids follow
commit order, and a standby replays commits in order), so the events go out in the same order
whichever was read.

Each delivered event (``Delivered``) carries a small cache of its encodings per kind of
viewer, so a thousand spectators of one deal cost one redaction and one JSON encoding of
each event, not a thousand.

The follower also keeps the whole history of the aggregates it saw begin (their step 1)
while streams were open in the process, the ``HISTORY`` most recently written of them
(``Subscription.history``). A stream that opens on one of them (a spectator moving on to a
game's next deal, as every spectator of it does at once) takes its catch-up from there, with
the encodings already made for the others, instead of reading the store: the history holds
every event of the aggregate up to the follower's position, exactly what the catch-up read
must hold. Anything else (an aggregate begun before the follower started, or pushed out of
the history) is read from the store as before.

The follower also tells the process of every bearer token revoked by any process
(``Token.Revoked``, docs/api.md, "Replacing a token"), so that a token the process remembers
(``AccountService.known_token``) is forgotten without a store read per request, and of every
browser session closed (``Session.Closed``: signed out, or closed with the account's tokens),
so that a live stream signed in by it ends before it sends anything recorded after that. The server
starts it at start-up (``start``), streams or not: with no stream open, each wake-up that
finds the head moved also reads the revocations up to it (one query, filtered by topic), and
it reads at most every ``poll_seconds`` rather than every ``read_interval``.
``tokens_fresh()`` says whether its last complete read began less than ``TOKEN_BOUND``
seconds ago (``app.token_freshness``: past it, the process reads each token from the store
until the follower catches up; the lag is logged and counted).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, cast
from uuid import UUID

import psycopg
from eventsourcing.persistence import InterfaceError, OperationalError
from psycopg.sql import SQL, Identifier

from app.application import CanastaApp
from app.infra.projection_runner.leases import postgres_connector
from app.replica import Reads
from app.services.accounts import TOKEN_REVOKED_TOPIC
from app.services.sessions import SESSION_CLOSED_TOPIC
from app.settings import MEMORY, Settings
from app.token_freshness import TOKEN_BOUND, TokenFreshness

#: A read of the follower that took this long (seconds) is followed by another at once.
SLOW_READ = TOKEN_BOUND / 4

log = logging.getLogger(__name__)

#: Most notifications read at once by the follower.
BATCH = 500

#: How many aggregates' whole histories the follower keeps (the most recently written).
HISTORY = 256

#: The longest the follower waits between two looks at the store, whatever
#: ``stream_poll_seconds`` says (it may be up to 10 s): a quiet store's follower must still
#: begin a complete read within ``TOKEN_BOUND``, or the process would trust no token it
#: remembers between two reads.
LONGEST_WAIT = TOKEN_BOUND / 4


class Delivered:
    """One new event of a followed aggregate, shared by every stream that shows it; decoded
    when a stream first shows it (the follower keeps histories of aggregates that no stream
    may ever open)."""

    __slots__ = ("_decode", "_event", "_note", "encodings", "step")

    def __init__(self, note: Any, decode: Callable[[Any], Any]) -> None:
        self._note = note
        self._decode = decode
        self._event: Any = None
        self.step: int = note.originator_version
        #: Encoded messages, by the stream's viewer key (see ``app.routes.stream``).
        self.encodings: dict[object, bytes | None] = {}

    @property
    def event(self) -> Any:
        if self._event is None:  # two threads may both decode it: the same event, harmless
            self._event = self._decode(self._note)
            self._note = None
        return self._event


class Tick:
    """A stream's own wake-up on its queue (``Subscription.tick_every``): time to look whether
    its client left, the server is stopping, or a heartbeat is due."""


TICK = Tick()


class Subscription:
    """The queue of one open stream: the new events of one aggregate, in store order (and
    the stream's ticks, if it asks for them)."""

    def __init__(self, hub: EventHub, aggregate_id: UUID, loop: asyncio.AbstractEventLoop):
        self.hub = hub
        self.aggregate_id = aggregate_id
        self.loop = loop
        self.queue: asyncio.Queue[Delivered | Tick] = asyncio.Queue()
        self._ticker: asyncio.TimerHandle | None = None
        #: The follower's position when the stream subscribed: every later notification of
        #: the aggregate comes on the queue, so the stream's catch-up read must hold the log
        #: up to here at least (a replica may not yet: ``Reads.replica_log``).
        self.position = 0
        #: Every event of the aggregate up to ``position``, from its first, if the follower
        #: holds them (see the module's documentation); else None: read the store.
        self.history: list[Delivered] | None = None

    def tick_every(self, seconds: float) -> None:
        """Put ``TICK`` on the queue every ``seconds`` until ``close()``; call it in the
        stream's event loop. One timer a second per stream, rather than a timeout armed and
        cancelled at every event it waits for (each a heap entry of the loop's)."""

        def tick() -> None:
            self.queue.put_nowait(TICK)
            self._ticker = self.loop.call_later(seconds, tick)

        self._ticker = self.loop.call_later(seconds, tick)

    def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        self.hub._unsubscribe(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EventHub:
    """The process's follower of the store (see the module's documentation).

    Started by the first ``subscribe``; ``close()`` stops it (the application's shutdown).
    ``reads`` counts the notification reads that found new events (the tests look at it).
    """

    def __init__(
        self,
        canasta: CanastaApp,
        poll_seconds: float,
        connect: Callable[[], psycopg.Connection[Any]] | None = None,
        channel: str = "",
        reads: Reads | None = None,
        read_interval: float = 0.0,
    ) -> None:
        """``reads``: where the new events are read from once the primary says they exist
        (its replica, when it has one: ``Reads.replica_log``)."""
        self.canasta = canasta
        self.read_from = reads
        self.poll_seconds = min(poll_seconds, LONGEST_WAIT)
        self.read_interval = read_interval
        self._last_read = 0.0
        self._connect = connect if channel else None
        self._channel = channel
        self._lock = threading.Lock()
        self._subscribers: dict[UUID, set[Subscription]] = {}
        self._position: int | None = None
        #: Whole histories of aggregates begun while the follower ran with streams open
        #: (least recently written first), up to ``_position``.
        self._history: OrderedDict[UUID, list[Delivered]] = OrderedDict()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.reads = 0
        self._freshness = TokenFreshness()

    @classmethod
    def for_settings(
        cls, canasta: CanastaApp, settings: Settings, reads: Reads | None = None
    ) -> EventHub:
        postgres = settings.database_url not in (None, MEMORY)
        channel = getattr(canasta.recorder, "channel_name", "") if postgres else ""
        connect = None
        if channel:
            pool = canasta.factory.datastore.pool  # type: ignore[attr-defined]
            connect = postgres_connector(pool, "canasta streams")
        return cls(
            canasta,
            settings.stream_poll_seconds,
            connect,
            channel,
            reads,
            read_interval=settings.stream_read_interval_ms / 1000,
        )

    # --- streams ---------------------------------------------------------------------------
    def subscribe(self, aggregate_id: UUID, loop: asyncio.AbstractEventLoop) -> Subscription:
        """A queue, in ``loop``, of the aggregate's events recorded from now on. Call it
        before reading what came before, so that nothing falls between the two; call it in
        a worker thread (the first call reads the store's head)."""
        sub = Subscription(self, aggregate_id, loop)
        with self._lock:
            self._start_locked()
            self._subscribers.setdefault(aggregate_id, set()).add(sub)
            sub.position = self._position or 0
            history = self._history.get(aggregate_id)
            sub.history = None if history is None else list(history)
        return sub

    def newest_held(self, aggregate_id: UUID) -> Any | None:
        """The aggregate's newest event as of the follower's position, if the follower holds
        its whole history (a history is never empty: it begins with step 1); else None."""
        with self._lock:
            history = self._history.get(aggregate_id)
            newest = None if history is None else history[-1]
        return None if newest is None else newest.event

    def _unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            subs = self._subscribers.get(sub.aggregate_id)
            if subs is not None:
                subs.discard(sub)
                if not subs:
                    del self._subscribers[sub.aggregate_id]

    @property
    def streams(self) -> int:
        """Open subscriptions in this process."""
        with self._lock:
            return sum(len(subs) for subs in self._subscribers.values())

    # --- the follower ------------------------------------------------------------------------
    def start(self) -> None:
        """Start following the store now (the server, before it answers requests: the
        tokens' revocations), and tell the application whether it is up to date."""
        with self._lock:
            self._start_locked()
        self.canasta.follow_tokens(self.tokens_fresh)

    def tokens_fresh(self) -> bool:
        """Whether the follower's last complete read began less than ``TOKEN_BOUND`` ago."""
        return self._freshness.fresh()

    def _start_locked(self) -> None:
        if self._thread is not None or self._stopping.is_set():
            return
        began = time.monotonic()
        self._position = self.canasta.recorder.max_notification_id() or 0
        self._freshness.read_to_head(began)
        self._thread = threading.Thread(target=self._run, name="canasta-event-hub", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stopping.set()
        self._wake.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=10)

    def _run(self) -> None:
        conn: psycopg.Connection[Any] | None = None
        failing = False  # the listener's connection broke, and no new one listens yet
        while not self._stopping.is_set():
            try:
                if self._connect is not None and conn is None:
                    conn = self._listen()
                    if failing:
                        log.info("event hub: listening again")
                        failing = False
                if conn is not None:  # the commits NOTIFYd meanwhile come in the same read
                    self._stopping.wait(self._last_read + self._interval() - time.monotonic())
                    self._last_read = time.monotonic()
                self._read_new()
                if conn is not None:
                    self._wait_for_notify(conn)
                else:
                    self._wake.wait(self.poll_seconds)
                    self._wake.clear()
            except (psycopg.Error, OperationalError, InterfaceError) as exc:
                # the database went away (the listener's connection broke): poll, reconnect
                if not failing:  # once, not at every try (docs/operations.md)
                    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                    log.warning("event hub: %s; reconnecting every %gs", reason, self.poll_seconds)
                failing = True
                if conn is not None:
                    conn.close()
                conn = None
                self._stopping.wait(self.poll_seconds)
            except Exception:
                log.exception("event hub: reading new events failed; trying again")
                with self._lock:
                    self._history.clear()  # a note may have been passed over: start again
                self._stopping.wait(self.poll_seconds)
        if conn is not None:
            conn.close()

    def _interval(self) -> float:
        """The least time between two reads: ``read_interval`` while streams are open; with
        none, only revocations are looked for, and ``poll_seconds`` is soon enough."""
        with self._lock:
            streams = bool(self._subscribers)
        return self.read_interval if streams else max(self.read_interval, self.poll_seconds)

    def _listen(self) -> psycopg.Connection[Any]:
        assert self._connect is not None
        conn = self._connect()
        conn.execute(SQL("LISTEN {}").format(Identifier(self._channel)))
        return conn

    def _wait_for_notify(self, conn: psycopg.Connection[Any]) -> None:
        """Until a NOTIFY, ``poll_seconds``, or close(); a burst of NOTIFYs is one wake-up."""
        if list(conn.notifies(timeout=self.poll_seconds, stop_after=1)):
            list(conn.notifies(timeout=0))

    def _read_new(self) -> None:
        self.tokens_fresh()  # a lag nobody asked about yet is logged all the same
        for _ in range(2):
            began = time.monotonic()
            if not self._read_to_head():
                return
            self._freshness.read_to_head(began)
            # A read that took long (the database slow, a stall) vouches only for what was
            # committed when it began, a moment short of the bound: read once more at once,
            # or the tokens would go stale again before the next wake-up (a lag logged and
            # counted twice for one stall).
            if time.monotonic() - began < SLOW_READ:
                return

    def _read_to_head(self) -> bool:
        """Read the new notifications; True once it has read up to the store's head."""
        recorder = self.canasta.recorder
        decode = self.canasta.mapper.to_domain_event
        while not self._stopping.is_set():
            start = (self._position or 0) + 1
            with self._lock:
                streams = bool(self._subscribers)
            source = self.canasta
            if not streams or self.read_from is not None:  # else one query: the new ones
                head = recorder.max_notification_id() or 0
                if head < start:
                    return True
                if not streams:
                    self._revocations(start, head)
                with self._lock:
                    if not self._subscribers:
                        # Nobody to tell: only move to the head, read BEFORE looking at the
                        # subscribers, so a stream that subscribes meanwhile reads everything
                        # up to it itself (its catch-up read comes after its subscription, and
                        # its ``position`` says how far that read must reach). The histories
                        # would have holes: they start again.
                        self._position = head
                        self._history.clear()
                        return True
                    # a stream came meanwhile: the batch below reads them again (harmless)
                source = self._source(head)
            batch = source.recorder.select_notifications(start, BATCH)
            if not batch:
                return True
            self.reads += 1
            self._deliver(batch, decode)
            if len(batch) < BATCH:
                return True
        return False

    def _revocations(self, start: int, head: int) -> None:
        """Tell the application of the tokens revoked and the sessions closed from ``start``
        to ``head``."""
        while start <= head:
            page = self.canasta.recorder.select_notifications(
                start, BATCH, stop=head, topics=[TOKEN_REVOKED_TOPIC, SESSION_CLOSED_TOPIC]
            )
            self._tell(page)
            if len(page) < BATCH:
                return
            start = page[-1].id + 1

    def _tell(self, notes: Sequence[Any]) -> None:
        """Tell the application of the tokens revoked and the sessions closed in ``notes``."""
        self.canasta.tokens_revoked(
            cast("UUID", note.originator_id) for note in notes if note.topic == TOKEN_REVOKED_TOPIC
        )
        self.canasta.sessions_closed(
            cast("UUID", note.originator_id) for note in notes if note.topic == SESSION_CLOSED_TOPIC
        )

    def _deliver(self, batch: Sequence[Any], decode: Callable[[Any], Any]) -> None:
        """Each notification of ``batch`` (in order) into the history and onto the queue of
        every stream of its aggregate."""
        # One hand-over per event loop for the whole batch (waking a loop from another
        # thread costs a system call): each loop then puts each event on its streams.
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[Subscription, Delivered]]] = {}
        self._tell(batch)  # before any event recorded after them reaches a stream
        for note in batch:
            # The position, the history and the subscribers together: a stream that
            # subscribes meanwhile gets every note after its ``position`` on its queue, and
            # its ``history`` up to it.
            aggregate_id = cast("UUID", note.originator_id)
            with self._lock:
                self._position = note.id
                item = self._remember_locked(note, decode)
                subs = list(self._subscribers.get(aggregate_id, ()))
            if not subs:
                continue
            if item is None:
                item = Delivered(note, decode)
            for sub in subs:
                by_loop.setdefault(sub.loop, []).append((sub, item))
        for loop, deliveries in by_loop.items():
            with contextlib.suppress(RuntimeError):  # that loop is closed: it is leaving
                loop.call_soon_threadsafe(_hand_over, deliveries)

    def _remember_locked(self, note: Any, decode: Callable[[Any], Any]) -> Delivered | None:
        """Add ``note`` to its aggregate's history, if the follower keeps it (it saw its
        step 1); the history's entry for it, or None."""
        aggregate_id = note.originator_id
        step = note.originator_version
        history = self._history.get(aggregate_id)
        if step == 1:
            history = self._history[aggregate_id] = []
            if len(self._history) > HISTORY:
                self._history.popitem(last=False)
        elif history is None:
            return None
        elif history[-1].step != step - 1:  # never (the log is read whole, in order): forget
            del self._history[aggregate_id]
            return None
        else:
            self._history.move_to_end(aggregate_id)
        item = Delivered(note, decode)
        history.append(item)
        return item

    def _source(self, head: int) -> CanastaApp:
        """Where to read the notifications up to ``head`` from: the replica once it has
        replayed them (``Reads.replica_log``), else the primary."""
        if self.read_from is not None:
            replica = self.read_from.replica_log(head)
            if replica is not None:
                return replica
        return self.canasta


def _hand_over(deliveries: list[tuple[Subscription, Delivered]]) -> None:
    """In a stream's event loop: each delivered event onto its stream's queue, in order."""
    for sub, item in deliveries:
        sub.queue.put_nowait(item)
