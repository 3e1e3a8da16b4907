"""Reads served by a PostgreSQL streaming replica (``CANASTA_READ_DATABASE_URL``;
docs/scaling.md).

``Reads`` holds the primary's application and, when a replica is configured, a second,
read-only ``CanastaApp`` bound to the replica (no group committer, never started on anything
that writes), with the read models' queries on the replica (``ReadModels`` made over the
replica and never started: the projections run on the primary, their rows and tracking
positions reach the replica by replication). Commands and every write keep using the primary's
application; the read routes ask ``Reads`` which application to read from:

- ``store_for(aggregate_id, min_step)``: the replica, once it holds the aggregate at step
  ``min_step`` at least (a player's last accepted command, sent back as
  ``X-Canasta-Min-Step``; the read waits up to ``read_replica_wait_seconds`` for it, polling,
  without a thread), else the primary. Without a min step the replica serves whatever it has
  replayed, as long as it knows the aggregate at all (an aggregate it does not know yet, a
  table or deal just made, is read from the primary at once);
- ``replica_read_models(name)``: the replica's read models when the projection ``name`` has
  processed every event the replica holds (waiting up to the same bound), else None (the
  caller serves the primary's, caught up as without a replica);
- ``replica_log(head)`` (the streams' follower, ``app.fanout``): the replica's application
  once it has replayed the log up to the primary's ``head``, else None; ``replica_log_async``
  the same for a stream's catch-up read (up to the follower's position when the stream
  subscribed), waiting in the event loop, so that streams opened while the replica lags hold
  no thread.

A standby only ever moves forward, so once the replica has reached a step every later read of
it shows that step or a later one. A replica that fails to answer is left alone for
``DOWN_SECONDS`` and the primary serves meanwhile (logged once per failure).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Annotated
from uuid import UUID

import anyio
import anyio.to_thread
from fastapi import Depends, Header, Query, Request

from app.application import CanastaApp
from app.cli_store import store_name
from app.infra.library import postgres_pool
from app.infra.persistence import REPLICA_FACTORY_TOPIC, REPLICA_RECORDER_TOPIC
from app.infra.projection_runner import ReadModels
from app.infra.read_model_store.postgres import ReplicaReadModelRecorder
from app.metrics import READS_SERVED
from app.settings import Settings, eventsourcing_env

log = logging.getLogger(__name__)

#: The request header (and ``min_step`` the query parameter) that names the step a read must
#: show at least: the step of the requester's last accepted command on that deal or table.
MIN_STEP_HEADER = "X-Canasta-Min-Step"
#: How often a read waiting for the replica looks again, in seconds.
POLL_SECONDS = 0.01
#: While a replica keeps failing, at most one log line in this many seconds says so.
STILL_FAILING_LOG_SECONDS = 60.0
#: After a replica failed to answer, how long the primary serves every read alone, in seconds.
DOWN_SECONDS = 5.0
#: Seconds to connect to the replica before it counts as down (the primary's default is 30).
CONNECT_TIMEOUT_SECONDS = 2


def replica_env(replica_settings: Settings) -> dict[str, str]:
    """The library's settings for the replica: a 2 s connect timeout (also the pool's wait
    for a connection) and recorders that try each query once (``ReplicaFactory``), so that a
    replica that stopped is found out within that timeout, not after the library's ten
    tries of every query (20 s), and the primary serves meanwhile."""
    env = eventsourcing_env(replica_settings)
    for key, value in (
        ("POSTGRES_CONNECT_TIMEOUT", str(CONNECT_TIMEOUT_SECONDS)),
        ("PERSISTENCE_MODULE", REPLICA_FACTORY_TOPIC),
        ("APPLICATION_RECORDER_TOPIC", REPLICA_RECORDER_TOPIC),
    ):
        env[key] = env["CANASTA_" + key] = value
    return env


class Reads:
    """Where the read routes read from: the primary, or its replica (module's docstring)."""

    def __init__(
        self,
        primary: CanastaApp,
        primary_models: ReadModels,
        replica: CanastaApp | None = None,
        replica_models: ReadModels | None = None,
        *,
        wait_seconds: float = 0.5,
        name: str = "",
    ) -> None:
        self.name = name  # the replica, for the log (no credentials)
        self.primary = primary
        self.primary_models = primary_models
        self.replica = replica
        self.replica_models = replica_models
        self.wait_seconds = wait_seconds
        self._down_until = 0.0
        self._failing_since: float | None = None  # failing since (monotonic), if it is
        self._next_note = 0.0
        self._lock = threading.Lock()

    @classmethod
    def open(cls, primary: CanastaApp, settings: Settings, read_models: ReadModels) -> Reads:
        """The reads of a server over ``settings``: a read-only application and read models
        over ``settings.read_database_url`` if it is set."""
        url = settings.read_database_url
        if url is None:
            return cls(primary, read_models)
        replica_settings = settings.model_copy(
            update={
                "database_url": url,
                "read_database_url": None,
                "commit_batch_max": 1,  # no group committer: nothing is ever saved here
                "read_models": "off",
            }
        )
        env = replica_env(replica_settings)
        replica = CanastaApp(
            env=env,
            allow_stacked_decks=settings.allow_stacked_decks,
            keys=primary.keys,  # the audit verifies signatures with the same keys
            turn_seconds_min=settings.turn_seconds_min,
        )
        try:
            models = ReadModels(  # queries only: never started
                replica_settings,
                app=replica,
                postgres_view=ReplicaReadModelRecorder,
                store_env=env,
            )
        except BaseException:
            replica.close()
            raise
        return cls(
            primary,
            read_models,
            replica,
            models,
            wait_seconds=settings.read_replica_wait_seconds,
            name=store_name(replica_settings),
        )

    def close(self) -> None:
        if self.replica_models is not None:
            self.replica_models.close()
        if self.replica is not None:
            self.replica.close()

    # --- what each read was served by (counted for the operators: canasta_reads_served) ----
    def _served(self, read: str, replica: bool) -> None:
        if self.replica is not None:  # without a replica every read is the primary's
            READS_SERVED.labels(read, "replica" if replica else "primary").inc()

    async def store_for(self, aggregate_id: UUID, min_step: int = 0) -> CanastaApp:
        """The application to read the aggregate from (see the module's docstring); waits in
        the event loop, never holding a thread, and looks at the replica in a worker thread."""
        store = await self._store_for(aggregate_id, min_step)
        self._served("aggregate", store is not self.primary)
        return store

    def store_for_sync(self, aggregate_id: UUID, min_step: int = 0) -> CanastaApp:
        """``store_for`` for a caller in a worker thread (it sleeps in that thread)."""
        store = self._store_for_sync(aggregate_id, min_step)
        self._served("aggregate", store is not self.primary)
        return store

    def replica_log(self, head: int) -> CanastaApp | None:
        """The replica once it has replayed the notification log up to ``head`` (the
        primary's head, waiting up to ``wait_seconds`` in this thread); None: read the
        primary."""
        store = self._replica_log(head)
        self._served("log", store is not None)
        return store

    async def replica_log_async(
        self, position: int, limiter: anyio.CapacityLimiter | None = None
    ) -> CanastaApp | None:
        """``replica_log`` for the event loop (a stream's catch-up): it waits there, and
        looks at the replica in a worker thread of ``limiter``."""
        store = await self._replica_log_async(position, limiter)
        self._served("log", store is not None)
        return store

    def replica_read_models(self, projection: str) -> ReadModels | None:
        """The replica's read models once the projection has processed every event the
        replica holds now (waiting up to ``wait_seconds``), so that they agree with what the
        replica's deal and table views show; None: serve the primary's."""
        models = self._replica_read_models(projection)
        self._served("read_models", models is not None)
        return models

    # --- the replica's health --------------------------------------------------------------
    def _usable(self) -> CanastaApp | None:
        replica = self.replica
        if replica is None or time.monotonic() < self._down_until:
            return None
        return replica

    def _failed(self, exc: BaseException) -> None:
        with self._lock:
            now = time.monotonic()
            if now >= self._down_until:
                reason = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
                if self._failing_since is None:
                    self._failing_since = now
                    self._next_note = now + STILL_FAILING_LOG_SECONDS
                    log.warning(
                        "read replica %s: %s; the primary serves every read for %gs, then the "
                        "replica is tried again (docs/scaling.md, Lag and failure)",
                        self.name,
                        reason,
                        DOWN_SECONDS,
                    )
                elif now >= self._next_note:  # not a line every DOWN_SECONDS while it fails
                    self._next_note = now + STILL_FAILING_LOG_SECONDS
                    log.warning(
                        "read replica %s: still failing after %.0f s (%s); the primary serves "
                        "every read",
                        self.name,
                        now - self._failing_since,
                        reason,
                    )
                threading.Thread(
                    target=self._drop_broken_connections, name="replica-pools", daemon=True
                ).start()
            self._down_until = now + DOWN_SECONDS

    def _answered(self) -> None:
        """The replica answered a check: if it had failed, say that it serves again."""
        if self._failing_since is None:
            return
        with self._lock:
            since, self._failing_since = self._failing_since, None
        if since is not None:
            log.warning(
                "read replica %s: answers again after %.0f s; it serves reads again",
                self.name,
                time.monotonic() - since,
            )

    def _drop_broken_connections(self) -> None:
        """Each pool of the replica tests its idle connections now and replaces those that
        fail (psycopg_pool's ``check``). A replica's server that stopped broke every one of
        them; without this each was found broken by one check, one check every
        ``DOWN_SECONDS``, so a replica that was back within seconds was left aside for a
        minute. In a thread of its own: a check waits on the network."""
        pools = [
            postgres_pool(getattr(self.replica, "factory", None)),
            self.replica_models.postgres_pool() if self.replica_models is not None else None,
        ]
        for pool in pools:
            if pool is not None:
                try:
                    pool.check()
                except Exception as exc:  # a closed pool (shut down meanwhile)
                    log.debug("read replica: pool check: %r", exc)

    def replica_head(self) -> int | None:
        """The last notification the replica has replayed; None while it is left aside, or
        if it fails now (it is then left aside: the next checks answer at once)."""
        replica = self._usable()
        if replica is None:
            return None
        try:
            head = replica.recorder.max_notification_id() or 0
        except Exception as exc:
            self._failed(exc)
            return None
        self._answered()
        return head

    # --- aggregates --------------------------------------------------------------------------
    @staticmethod
    def version(app: CanastaApp, aggregate_id: UUID) -> int:
        """The aggregate's last step in ``app``'s store (0 if it has none)."""
        records = app.recorder.select_events(aggregate_id, desc=True, limit=1)
        return int(records[0].originator_version) if records else 0

    def _replica_holds(self, replica: CanastaApp, aggregate_id: UUID, step: int) -> bool | None:
        """Whether the replica holds the aggregate at ``step``; None if it failed to answer."""
        try:
            holds = self.version(replica, aggregate_id) >= step
        except Exception as exc:
            self._failed(exc)
            return None
        self._answered()
        return holds

    async def _store_for(self, aggregate_id: UUID, min_step: int = 0) -> CanastaApp:
        """The application to read the aggregate from (see the module's docstring); waits in
        the event loop, never holding a thread, and looks at the replica in a worker thread."""
        replica = self._usable()
        if replica is None:
            return self.primary
        deadline = time.monotonic() + (self.wait_seconds if min_step > 0 else 0.0)
        while True:
            holds = await anyio.to_thread.run_sync(
                self._replica_holds, replica, aggregate_id, max(min_step, 1)
            )
            if holds:
                return replica
            if holds is None or time.monotonic() >= deadline:
                return self.primary
            await asyncio.sleep(POLL_SECONDS)

    def _store_for_sync(self, aggregate_id: UUID, min_step: int = 0) -> CanastaApp:
        """``store_for`` for a caller in a worker thread (it sleeps in that thread)."""
        replica = self._usable()
        if replica is None:
            return self.primary
        deadline = time.monotonic() + (self.wait_seconds if min_step > 0 else 0.0)
        while True:
            holds = self._replica_holds(replica, aggregate_id, max(min_step, 1))
            if holds:
                return replica
            if holds is None or time.monotonic() >= deadline:
                return self.primary
            time.sleep(POLL_SECONDS)

    # --- the log and the read models ---------------------------------------------------------
    def _log_holds(self, replica: CanastaApp, position: int) -> bool | None:
        """Whether the replica has replayed the log up to ``position``; None if it failed."""
        try:
            holds = (replica.recorder.max_notification_id() or 0) >= position
        except Exception as exc:
            self._failed(exc)
            return None
        self._answered()
        return holds

    def _replica_log(self, head: int) -> CanastaApp | None:
        """The replica once it has replayed the notification log up to ``head`` (the
        primary's head, waiting up to ``wait_seconds`` in this thread); None: read the
        primary."""
        replica = self._usable()
        if replica is None:
            return None
        deadline = time.monotonic() + self.wait_seconds
        while True:
            holds = self._log_holds(replica, head)
            if holds:
                return replica
            if holds is None or time.monotonic() >= deadline:
                return None
            time.sleep(POLL_SECONDS)

    async def _replica_log_async(
        self, position: int, limiter: anyio.CapacityLimiter | None = None
    ) -> CanastaApp | None:
        """``replica_log`` for the event loop (a stream's catch-up): it waits there, and
        looks at the replica in a worker thread of ``limiter``."""
        replica = self._usable()
        if replica is None:
            return None
        deadline = time.monotonic() + self.wait_seconds
        while True:
            holds = await anyio.to_thread.run_sync(
                self._log_holds, replica, position, limiter=limiter
            )
            if holds:
                return replica
            if holds is None or time.monotonic() >= deadline:
                return None
            await asyncio.sleep(POLL_SECONDS)

    def _replica_read_models(self, projection: str) -> ReadModels | None:
        """The replica's read models once the projection has processed every event the
        replica holds now (waiting up to ``wait_seconds``), so that they agree with what the
        replica's deal and table views show; None: serve the primary's."""
        replica, models = self._usable(), self.replica_models
        if replica is None or models is None:
            return None
        deadline = time.monotonic() + self.wait_seconds
        try:
            head = replica.recorder.max_notification_id() or 0
            worker = models.workers[projection]
            while not worker.has_processed(head):
                if time.monotonic() >= deadline:
                    return None
                time.sleep(POLL_SECONDS)
        except Exception as exc:
            self._failed(exc)
            return None
        self._answered()
        return models


# --- the routes' dependencies ----------------------------------------------------------------
#
# The min step is left out of the OpenAPI document's operations (docs/api.md describes it once
# for every read): listed on each read route it was one more parameter for every generated
# request there, and the fuzzer's stateful walk (tests/e2e/test_fuzz.py) then often fell short
# of reaching the commands.

MinStepHeader = Annotated[
    int,
    Header(
        alias=MIN_STEP_HEADER,
        include_in_schema=False,
        ge=0,
        le=10**9,
        description="the step of your last accepted command on this deal or table (its "
        "answer's step): the answer shows that step at least (docs/api.md, read-your-writes)",
    ),
]
MinStepQuery = Annotated[
    int,
    Query(
        alias="min_step",
        include_in_schema=False,
        ge=0,
        le=10**9,
        description=f"as the header {MIN_STEP_HEADER} (the larger of the two counts)",
    ),
]


def _reads(request: Request) -> Reads:
    reads: Reads = request.app.state.reads
    return reads


async def get_reads(request: Request) -> Reads:
    return _reads(request)


async def deal_store(
    request: Request,
    deal_id: UUID,
    header: MinStepHeader = 0,
    query: MinStepQuery = 0,
) -> CanastaApp:
    """The application a deal's read route reads the deal from."""
    return await _store_for(request, deal_id, max(header, query))


async def table_store(
    request: Request,
    table_id: UUID,
    header: MinStepHeader = 0,
    query: MinStepQuery = 0,
) -> CanastaApp:
    """The application a table's read route reads the table from."""
    return await _store_for(request, table_id, max(header, query))


async def _store_for(request: Request, aggregate_id: UUID, min_step: int) -> CanastaApp:
    """``Reads.store_for``; the primary without asking when there is no replica."""
    reads = _reads(request)
    if reads.replica is None:
        return reads.primary
    return await reads.store_for(aggregate_id, min_step)


DealStore = Annotated[CanastaApp, Depends(deal_store)]
TableStore = Annotated[CanastaApp, Depends(table_store)]
ReadsDep = Annotated[Reads, Depends(get_reads)]
