"""The application's wiring: the event store, transcoding, snapshots, the aggregate cache and
its reads, group commit, and saving every event of a command in one transaction.

The services (``accounts``, ``tables``, ``commands``) load aggregates through ``_get`` and
``_read``, let them decide, and save them with ``_save`` or ``_commit``; a concurrent writer
makes the save fail and the command is refused as a lost race (409 ``race_lost``) with nothing
recorded.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from copy import deepcopy
from typing import Any, Protocol, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Snapshot
from eventsourcing.persistence import IntegrityError, JSONTranscoder, Transcoding
from eventsourcing.utils import get_topic

from app.infra.group_commit import GroupCommit, Pending
from app.infra.library import cache_reader, record_batch
from app.infra.liveness import Alive, liveness_for
from app.infra.writes import note_write
from app.signing import Keyring
from domain.clock import TURN_SECONDS_MIN
from domain.deal import Deal
from domain.errors import RACE_LOST, Conflict, NotFound
from domain.shuffle import SEED_BYTES
from domain.state import OVER, DealState
from domain.table import Table

logger = logging.getLogger(__name__)

#: The refusal's key when an aggregate of this kind is not in the store (``_get``'s ``what``).
MISSING = {"table": "table.not_found", "deal": "deal.not_found"}


class RandomSource(Protocol):
    """Where chance comes from; its results are recorded in events (R-DEAL-1/3)."""

    def seed(self) -> bytes: ...

    def choice(self, seats: Sequence[int]) -> int: ...


class SystemRandom:
    """The operating system's cryptographic random source."""

    def seed(self) -> bytes:
        return secrets.token_bytes(SEED_BYTES)

    def choice(self, seats: Sequence[int]) -> int:
        return seats[secrets.randbelow(len(seats))]


class DealStateAsDict(Transcoding):
    """Lets the event store snapshot a deal's state (plain values inside)."""

    type = DealState
    name = "deal_state"

    def encode(self, obj: DealState) -> dict[str, Any]:
        return obj.to_dict()

    def decode(self, data: dict[str, Any]) -> DealState:
        return DealState.from_dict(data)


def _fold(aggregate: Any, events: Any) -> Any:
    """Projector for replays: each stored event folds itself into the aggregate.

    Same as the library's ``project_aggregate`` without its per-event runtime protocol
    check, which costs more than the fold itself on Python 3.11.
    """
    for event in events:
        aggregate = event.mutate(aggregate)
    return aggregate


#: Environment key (``CANASTA_COMMIT_BATCH_MAX``): most commands saved in one transaction;
#: 1 saves each command in its own transaction, in the calling thread.
COMMIT_BATCH_MAX = "COMMIT_BATCH_MAX"
DEFAULT_COMMIT_BATCH_MAX = 64
#: Environment key (``CANASTA_COMMIT_LINGER_MS``): under load, how long the committer waits
#: for more commands before writing a transaction (0: never waits).
COMMIT_LINGER_MS = "COMMIT_LINGER_MS"
DEFAULT_COMMIT_LINGER_MS = 2.0
A = TypeVar("A")  # an aggregate class (``_stored``)

#: Events read per page when the store's log is searched for one kind (``_recorded``).
LOG_PAGE = 1000
#: How long the service may be silent before that is an outage (``Settings.outage_seconds``).
OUTAGE_SECONDS = 10.0


def remember(seen: OrderedDict[Any, None], key: Any, most: int) -> None:
    """Add ``key`` to ``seen`` as its newest; past ``most`` keys, the oldest is forgotten."""
    seen[key] = None
    seen.move_to_end(key)
    if len(seen) > most:
        seen.popitem(last=False)


class AppCore(Application[UUID]):
    """The eventsourcing application the services share (see ``app.application``)."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        random: RandomSource | None = None,
        allow_stacked_decks: bool = False,
        keys: Keyring | None = None,
        turn_seconds_min: int = TURN_SECONDS_MIN,
        outage_seconds: float = OUTAGE_SECONDS,
    ) -> None:
        """``keys``: the server's signing key and published keys (``app.signing``): the
        current key signs each table's record of a finished deal (``domain.seal``), the audit
        verifies with them; None records them unsigned and audits no signature."""
        super().__init__(env=env)
        self.keys = keys
        # The library deep-copies a cached aggregate outside the lock under which another
        # thread may be fast-forwarding that same object; reads of one aggregate id are
        # serialised here so that no thread copies a half-updated aggregate. (Process-local,
        # for the cache only: correctness across processes rests on the store's versions.)
        self._read_locks = [threading.Lock() for _ in range(64)]
        self._cache_get = cache_reader(self)
        self.random: RandomSource = random or SystemRandom()
        self.allow_stacked_decks = allow_stacked_decks
        self.turn_seconds_min = turn_seconds_min  # the turn clock's least (docs/tables.md)
        # The service's sign of life in the store (its outages restart the turn clocks).
        self.liveness = liveness_for(self.factory, outage_seconds)
        # Commands saved concurrently share a transaction (see app.infra.group_commit).
        batch = int(self.env.get(COMMIT_BATCH_MAX, "") or DEFAULT_COMMIT_BATCH_MAX)
        linger = float(self.env.get(COMMIT_LINGER_MS, "") or DEFAULT_COMMIT_LINGER_MS) / 1000
        self.group_commit: GroupCommit | None = (
            GroupCommit(
                self._record_batch, max_batch=batch, linger=linger, after=self._snapshot_finished
            )
            if batch > 1
            else None
        )

    def service_alive(self) -> tuple[Alive | None, float]:
        """The service's record (``app.infra.liveness``) and how long a silence is an
        outage (the turn clock's checks, ``app.services.clock``)."""
        return self.liveness.read(), self.liveness.outage_seconds

    def close(self) -> None:
        if self.group_commit is not None:
            self.group_commit.close()
        super().close()

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        super().register_transcodings(transcoder)
        transcoder.register(DealStateAsDict())

    # --- reading -------------------------------------------------------------------------
    def get_table(self, table_id: UUID) -> Table:
        table = self._get(table_id, None, "table")
        if not isinstance(table, Table):
            raise NotFound("table.not_found", id=str(table_id))
        return table

    def get_deal(self, deal_id: UUID, version: int | None = None) -> Deal:
        deal = self._get(deal_id, version, "deal")
        if not isinstance(deal, Deal):
            raise NotFound("deal.not_found", id=str(deal_id))
        return deal

    def _get(
        self, aggregate_id: UUID, version: int | None, what: str, *, fresh: bool = True
    ) -> Any:
        if not isinstance(aggregate_id, UUID):  # the cache is keyed by UUID, never by str
            aggregate_id = UUID(str(aggregate_id))
        try:
            return self._read(aggregate_id, version, fresh=fresh)
        except AggregateNotFoundError:
            if version is not None:
                raise NotFound("deal.not_found_at", id=str(aggregate_id), step=version) from None
            raise NotFound(MISSING[what], id=str(aggregate_id)) from None

    def _read(self, aggregate_id: UUID, version: int | None = None, *, fresh: bool = True) -> Any:
        """``repository.get`` under the aggregate's read lock.

        ``fresh`` (the default): the cached copy is first brought up to date with the store
        (the library's fast-forward), so it includes what other processes wrote. Otherwise
        the cached copy is returned as it is, without a query; only a command path whose
        save checks the versions may use it."""
        if version is not None:  # rebuilt from the store, never from the cache
            return self.repository.get(aggregate_id, version=version, projector_func=_fold)
        if not fresh:
            cached = self._cached_copy(aggregate_id, wait=True)
            if cached is not None:
                return cached
        with self._read_lock(aggregate_id):
            return self.repository.get(aggregate_id, projector_func=_fold)

    def _cached_copy(self, aggregate_id: UUID, *, wait: bool = False) -> Any:
        """A copy of the aggregate as this process's cache holds it, or None if it is not
        cached, or (unless ``wait``) another thread is reading it just now."""
        cache_get = self._cache_get
        if cache_get is None:
            return None
        lock = self._read_lock(aggregate_id)
        if not lock.acquire(blocking=wait):
            return None
        try:
            return deepcopy(cache_get(aggregate_id))
        except KeyError:
            return None
        finally:
            lock.release()

    def _stored(self, aggregate_id: UUID, kind: type[A]) -> A | None:
        """The aggregate as the store has it now, if there is one of this kind."""
        try:
            aggregate = self._read(aggregate_id)
        except AggregateNotFoundError:
            return None
        return aggregate if isinstance(aggregate, kind) else None

    def _recorded(self, kind: type) -> Iterator[Any]:
        """Every event of this kind in the store's log, in order, read a page at a time."""
        topic = get_topic(kind)
        start: int | None = None
        while True:
            page = self.recorder.select_notifications(
                start=start, limit=LOG_PAGE, topics=[topic], inclusive_of_start=start is None
            )
            for notification in page:
                yield self.mapper.to_domain_event(notification)
            if len(page) < LOG_PAGE:
                return
            start = page[-1].id

    def _read_lock(self, aggregate_id: UUID) -> threading.Lock:
        return self._read_locks[hash(aggregate_id) % len(self._read_locks)]

    # --- saving --------------------------------------------------------------------------
    def save(self, *objs: Any, **kwargs: Any) -> Any:
        """``Application.save`` for aggregates, without the per-object runtime protocol
        checks of ``ProcessingEvent.collect_events`` (a seventh of a command's time on
        Python 3.11). Every object saved here is an aggregate; the rest is unchanged."""
        pending = self._pending(*(obj for obj in objs if obj is not None))
        note_write()  # from here, a failure's outcome may be unknown (app.infra.writes)
        return self._record_batch([pending], **kwargs)

    def save_pending(self, pending: Pending) -> None:
        """Save a command's collected events (``submit_cached``, ``_commit``), blocking;
        ``IntegrityError`` on a conflict."""
        note_write()  # from here, a failure's outcome may be unknown (app.infra.writes)
        if self.group_commit is None:
            self._record_batch([pending])
            self._snapshot_finished([pending])
        else:
            self.group_commit.save_pending(pending)

    def _record_batch(self, batch: Sequence[Pending], **kwargs: Any) -> Any:
        """The events of one or more commands (the group committer's batch), recorded in
        one transaction; returns the library's recordings."""
        return record_batch(self, batch, **kwargs)

    def _snapshot_finished(self, saved: Sequence[Pending]) -> None:
        """Snapshot each deal that these saved commands finished, so rebuilding a game
        reads one record per deal (the group committer calls this once their waiters are
        woken: the snapshot does not delay their answers).

        Taken from the aggregates just saved (the library's ``take_snapshot`` would first
        rebuild them from the store, to the same state). A snapshot only speeds reads up:
        if writing it fails, the commands (already committed) still succeed, and reads
        replay the deal's events instead.
        """
        if self.snapshots is None:
            return
        finished = [
            aggregate
            for pending in saved
            for aggregate in pending.aggregates.values()
            if isinstance(aggregate, Deal)
            and aggregate.state.phase == OVER
            and any(event.originator_id == aggregate.id for event in pending.events)
        ]
        if not finished:
            return
        snapshot_class = type(self).snapshot_class or Snapshot
        try:
            self.snapshots.put([snapshot_class.take(deal) for deal in finished])
        except Exception:
            logger.exception("snapshotting %d finished deals failed", len(finished))

    def _save(self, *aggregates: Any) -> None:
        try:
            self._commit(*aggregates)
        except IntegrityError:
            raise Conflict(RACE_LOST, "race.game") from None

    def _commit(self, *aggregates: Any) -> None:
        """Save the aggregates' new events in one transaction, shared with the commands of
        other threads saved at the same moment (group commit); raises ``IntegrityError`` if
        another writer got there first."""
        pending = self._pending(*aggregates)
        if pending.events:
            self.save_pending(pending)

    @staticmethod
    def _pending(*aggregates: Any) -> Pending:
        """The aggregates' new events, collected once (a failed save is never retried with
        the same aggregates: the command is decided again)."""
        events: list[Any] = []
        by_id: dict[UUID, Any] = {}
        for aggregate in aggregates:
            events.extend(aggregate.collect_events())
            by_id[aggregate.id] = aggregate
        return Pending(events, by_id)
