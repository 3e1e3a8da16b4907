"""Running the read-model projections: elect a runner, follow the log, wait, rebuild, query.

``ReadModels(settings, app=...)`` is the one entry point (``app``: an ``event_log.EventLog``). Each projection
(``projections.read_models.PROJECTIONS``) has its own view recorder and tracking table, and a
pull runner (``PullWorker``) that reads ``select_notifications`` after its tracking position
and processes each batch of up to ``batch_size`` notifications in ONE transaction, tracking
position included (the library's ``ProjectionRunner`` commits one transaction per event).

One runner per database, elected: ``start()`` starts one background thread that tries to take
the database's *read-models lease*; only the process holding it runs the projections, so N
server processes do not project every event N times. The others try again every
``lease_retry_seconds``; when the leader stops or dies, one of them takes over.

The leases (PostgreSQL advisory lock, SQLite lock file, the in-memory store's own process)
are in ``leases``; the pull worker of one projection in ``worker``.

While leading, the thread catches every projection up to the log's head, then waits for new
events: on PostgreSQL ``LISTEN`` on the events table's channel (the library NOTIFYs it in
every insert) for at most ``poll_interval`` seconds; on SQLite it sleeps ``poll_interval``.
Under load the batches grow by themselves. An error is logged and retried after a back-off
(1, 2, 4 ... 30 s). Exactly-once does not depend on the election: every batch records its
tracking position in the same transaction as its rows, and a notification already processed
is skipped, so a catch-up may overlap another runner's safely.

``Settings.read_models`` (``CANASTA_READ_MODELS``): ``auto`` elects as above; ``off`` makes
``start()`` do nothing (the projections then run in another process: ``canasta project``).

Read-your-writes: ``wait_until(position)`` returns once every projection has processed the
log up to ``position`` (a notification id; default: the log's head now). In the leading
process it waits for the background thread; in any other it catches up in the caller's
thread. A projection's tracking position is the id of the last event OF ITS TOPICS it
processed, so "processed up to N" means: its position is at least N, or no event of its
topics lies between its position and N.

``rebuild()`` stops the background thread, deletes the view rows and tracking positions,
replays the whole log, and starts the thread again if it was running. It is a maintenance
operation: no other process may be running these projections on the same database meanwhile
(its runner would record positions the rebuild has not reached yet, and the rebuild would then
skip them).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime
from functools import partial
from types import TracebackType
from typing import Any
from uuid import UUID, uuid4

from eventsourcing.persistence import (
    InfrastructureFactory,
    InterfaceError,
    OperationalError,
    ProgrammingError,
)
from eventsourcing.postgres import PostgresFactory
from eventsourcing.sqlite import SQLiteFactory
from eventsourcing.utils import Environment

from app.infra.event_log import EventLog, LogReader
from app.infra.library import postgres_pool
from app.infra.projection_runner.leases import (
    LEASE_KEY,
    LOCK_FILE_SUFFIX,
    Lease,
    lead_while_held,
    lease_for,
)
from app.infra.projection_runner.worker import PullWorker, tracking_table_name
from app.infra.read_model_store import (
    PostgresReadModelRecorder,
    ReadModelRecorder,
    SQLiteReadModelRecorder,
)
from app.settings import MEMORY, Settings, eventsourcing_env
from projections.read_models import PROJECTIONS, ReadModelProjection
from projections.view import VIEW_TABLES

logger = logging.getLogger(__name__)

POSTGRES = "postgres"
SQLITE = "sqlite"

#: Environment name of the read models' own connections (``READ_MODELS_*`` keys override).
ENV_NAME = "read_models"


class ReadModels:
    """All read-model projections of one database, and the queries on them.

    ``app`` is the application whose notification log is read (required for the in-memory
    store); otherwise a read-only ``LogReader`` is made from ``settings`` (no write side) and
    closed by ``close()``. The view tables live in the event store's database: PostgreSQL
    tables created by alembic, or the same SQLite file (created here); with the in-memory
    store, an in-memory SQLite database.

    ``poll_interval``: how long the leading process waits for new events before it looks
    again anyway (on SQLite and the in-memory store: how often it looks).
    ``batch_interval``: under load, the leading process catches up at most this often, so
    that each catch-up takes the events of that interval in one transaction per projection
    (a catch-up per insert would cost a few queries per projection for a handful of events).
    ``lease_retry_seconds``: how often a process that does not lead tries to take the lease.
    ``store_env``: the library's settings of the store, instead of those ``settings`` make
    (the read replica's: app.replica).
    """

    backend: str  # POSTGRES or SQLITE (the in-memory store's read models are in SQLite)
    views: dict[str, ReadModelRecorder]  # per projection: its view recorder
    workers: dict[str, PullWorker]  # per projection: its pull runner

    def __init__(
        self,
        settings: Settings,
        *,
        app: EventLog | None = None,
        projections: Sequence[type[ReadModelProjection]] = PROJECTIONS,
        postgres_view: type[PostgresReadModelRecorder] = PostgresReadModelRecorder,
        sqlite_view: type[SQLiteReadModelRecorder] = SQLiteReadModelRecorder,
        poll_interval: float = 0.25,
        batch_interval: float = 0.05,
        lease_retry_seconds: float = 1.0,
        query_pool_size: int = 2,
        batch_size: int = 500,
        store_env: Mapping[str, str] | None = None,
    ) -> None:
        if not projections:
            raise ValueError("no projections")
        names = [p.name for p in projections]
        if len(set(names)) != len(names):
            raise ValueError(f"projection names must differ: {names}")
        self.settings = settings
        self.poll_interval = poll_interval
        self.batch_interval = batch_interval
        self.lease_retry_seconds = lease_retry_seconds
        env = dict(store_env) if store_env is not None else eventsourcing_env(settings)
        if settings.database_url == MEMORY:
            if app is None:
                raise ValueError("the in-memory store needs the application whose log to read")
            view_env: dict[str, str] = {
                "PERSISTENCE_MODULE": "eventsourcing.sqlite",
                "SQLITE_DBNAME": f"file:canasta-read-models-{uuid4().hex}?mode=memory&cache=shared",
            }
        else:
            # Queries, catch-ups and waits; more connections are opened when busy (overflow).
            view_env = {
                f"{ENV_NAME.upper()}_POSTGRES_POOL_SIZE": str(query_pool_size),
                **os.environ,
                **env,
            }
        self._owns_log = app is None
        log: EventLog
        if app is None:
            # Read-only: the log's head and pending events, no write side. A small pool will
            # do (it opens more connections when busy).
            log = LogReader({**env, "CANASTA_POSTGRES_POOL_SIZE": "1"})
        else:
            log = app
        self.log: EventLog = log
        try:
            self._factory = InfrastructureFactory.construct(Environment(ENV_NAME, view_env))
            self._setup_views(projections, postgres_view, sqlite_view, batch_size)
        except BaseException:
            if getattr(self, "_factory", None) is not None:
                self._factory.close()
            self._close_log()
            raise

        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._wake = threading.Event()  # wait_until wakes a pausing background thread
        self._running = False
        self._leading = False

    def _setup_views(
        self,
        projections: Sequence[type[ReadModelProjection]],
        postgres_view: type[PostgresReadModelRecorder],
        sqlite_view: type[SQLiteReadModelRecorder],
        batch_size: int,
    ) -> None:
        factory = self._factory
        self.views = {}
        if isinstance(factory, PostgresFactory):
            # The tables come from alembic (CREATE_TABLE=n), unless the environment says so.
            self.backend = POSTGRES
            for p in projections:
                pg_view = postgres_view(
                    datastore=factory.datastore, tracking_table_name=tracking_table_name(p)
                )
                if factory.env_create_table():
                    pg_view.create_table()
                self.views[p.name] = pg_view
        elif isinstance(factory, SQLiteFactory):
            self.backend = SQLITE
            for p in projections:
                sqlite = sqlite_view(
                    datastore=factory.datastore, tracking_table_name=tracking_table_name(p)
                )
                if factory.env_create_table():
                    sqlite.create_table()
                self.views[p.name] = sqlite
        else:
            raise ValueError(f"no read models for the store {type(factory).__name__}")

        self.workers = {
            p.name: PullWorker(
                p(self.views[p.name]),
                app_name=self.log.name,
                recorder=self.log.recorder,
                mapper=self.log.mapper,
                batch_size=batch_size,
            )
            for p in projections
        }
        self._check_schema()

    def _check_schema(self) -> None:
        for name, worker in self.workers.items():
            try:
                worker.position()
            except ProgrammingError as exc:
                raise ProgrammingError(
                    f"the read model {name!r} has no tables: run the alembic migrations "
                    f"(alembic upgrade head): {exc}"
                ) from exc

    # --- lifecycle -----------------------------------------------------------------------
    @property
    def is_running(self) -> bool:
        """True while the background thread runs (it may or may not lead)."""
        return self._running

    @property
    def is_leading(self) -> bool:
        """True while this process holds the lease and runs the projections."""
        return self._leading

    def start(self) -> None:
        """Start the background thread that takes the lease and, while it holds it, runs
        the projections (idempotent). Does nothing if ``settings.read_models`` is off."""
        if self._running:
            return
        if self.settings.read_models == "off":
            logger.info("read models: off in this process (CANASTA_READ_MODELS=off)")
            return
        lease = self._lease()
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._run, args=(lease,), name="read-models", daemon=True
        )
        self._running = True
        self._thread.start()

    def stop(self) -> None:
        """Stop the background thread and give up the lease (idempotent); positions are
        kept. A catch-up under way stops after the batch it is in."""
        if not self._running:
            return
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._running = False

    def close(self) -> None:
        self.stop()
        self.workers.clear()
        self.views.clear()
        self._factory.close()
        self._close_log()

    def _close_log(self) -> None:
        if self._owns_log and isinstance(self.log, LogReader):
            self.log.close()

    def __enter__(self) -> ReadModels:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        self.close()

    @staticmethod
    def _backoff(failures: int) -> float:
        return float(min(2 ** (failures - 1), 30))

    def postgres_pool(self) -> Any:
        """The connection pool of the read models' queries (psycopg_pool); None off
        PostgreSQL."""
        return postgres_pool(self._factory)

    def lease(self) -> Lease:
        """A new handle on this database's lease, for a maintenance command that must run
        alone (``canasta rebuild-read-models``): while it holds it, no server or ``canasta
        project`` runs the projections, and if one holds it, it cannot take it."""
        return self._lease()

    def _lease(self) -> Lease:
        """This database's lease (see the module's docstring)."""
        factory = self._factory
        memory = self.settings.database_url == MEMORY
        return lease_for(
            memory=memory,
            sqlite_path=self.settings.sqlite_path if self.backend == SQLITE else None,
            pool=None if memory or self.backend == SQLITE else factory.datastore.pool,  # type: ignore[attr-defined]
            channel=getattr(self.log.recorder, "channel_name", ""),
            key=LEASE_KEY,
            suffix=LOCK_FILE_SUFFIX,
            application_name="canasta read models lease",
        )

    def _run(self, lease: Lease) -> None:
        """The background thread: take the lease; while holding it, run the projections."""
        lead_while_held(
            lease, self._lead, self._stopping, self.lease_retry_seconds, "read models", logger
        )

    def _lead(self, lease: Lease) -> None:
        """Follow the log while holding ``lease``: catch every projection up, wait for new
        events, again; an error is logged and retried after a back-off."""
        self._leading = True
        logger.info("read models: this process leads (holds %s)", lease.where)
        failures = 0
        done: int | None = None  # the log's head at the last complete catch-up
        try:
            while not self._stopping.is_set():
                try:
                    started = time.monotonic()
                    head = self.head()
                    if head != done:
                        for worker in self.workers.values():
                            worker.catch_up(stop=self._stopping)
                            if self._stopping.is_set():
                                return
                        done = head
                        pause = self.batch_interval - (time.monotonic() - started)
                        if pause > 0:
                            self._wake.wait(pause)  # a view request (wait_until) cuts it short
                            self._wake.clear()
                            if self._stopping.is_set():
                                return
                    failures = 0
                except (OperationalError, InterfaceError) as exc:
                    # The database went away: one line, not a traceback at every retry.
                    failures += 1
                    delay = self._backoff(failures)
                    if failures == 1:
                        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                        logger.warning(
                            "read models: the database does not answer (%s); retrying", reason
                        )
                    if self._stopping.wait(delay):
                        return
                    lease.check()
                    continue
                except Exception:
                    failures += 1
                    delay = self._backoff(failures)
                    logger.exception(
                        "read models: catch-up failed (%d in a row), retry in %gs", failures, delay
                    )
                    if self._stopping.wait(delay):
                        return
                    lease.check()
                    continue
                lease.wait_for_events(self.poll_interval, self._stopping)
        finally:
            self._leading = False
            logger.info("read models: this process stopped leading")

    # --- positions -----------------------------------------------------------------------
    def head(self) -> int:
        """The id of the last notification in the log (0 if empty)."""
        return self.log.recorder.max_notification_id() or 0

    def positions(self) -> dict[str, int | None]:
        """Each projection's tracking position."""
        return {name: worker.position() for name, worker in self.workers.items()}

    def catch_up(self, timeout: float = 30.0) -> None:
        """Process the whole log as it is now (``wait_until`` the head)."""
        self.wait_until(None, timeout=timeout)

    def wait_until(
        self,
        position: int | None = None,
        timeout: float = 5.0,
        *,
        projections: Collection[str] | None = None,
    ) -> None:
        """Return once every projection (or those named in ``projections``) has processed
        the log up to ``position`` (default: its head now); raise ``TimeoutError`` after
        ``timeout`` seconds.

        In the leading process the background thread is woken (it may be pausing between
        catch-ups, see ``batch_interval``) and waited for; in any other, each projection not
        there yet is caught up in this thread (an error of the projection is then raised
        here).
        """
        if projections is not None:
            unknown = set(projections) - set(self.workers)
            if unknown:
                raise ValueError(f"no read model {sorted(unknown)}")
        if position is None:
            position = self.head()
        deadline = time.monotonic() + timeout
        for name, worker in self.workers.items():
            if projections is not None and name not in projections:
                continue
            if not self._leading:
                if not worker.has_processed(position):
                    worker.catch_up()
                continue
            delay = 0.002
            while not worker.has_processed(position):
                self._wake.set()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"read model {name!r} has not processed notification {position} "
                        f"within {timeout}s (it is at {worker.position()})"
                    )
                if not self._leading:  # stopped leading meanwhile: do it here
                    worker.catch_up()
                    break
                time.sleep(min(delay, remaining))
                delay = min(delay * 2, 0.1)

    def rebuild(self, progress: Callable[[str, int, int], None] | None = None) -> None:
        """Drop every view row and tracking position and replay the log from the start.

        ``progress(name, count, position)``, if given, is called after each batch a
        projection committed (see ``PullWorker.catch_up``), projection after projection.

        Maintenance only: no other process may run these projections meanwhile."""
        was_running = self._running
        self.stop()
        for worker in self.workers.values():
            worker.reset()
        for name, worker in self.workers.items():
            worker.catch_up(None if progress is None else partial(progress, name))
        if was_running:
            self.start()

    # --- queries ---------------------------------------------------------------------------
    @property
    def _reader(self) -> ReadModelRecorder:
        return next(iter(self.views.values()))

    def discard_log(
        self, deal_id: UUID | str, after_step: int | None = None
    ) -> list[dict[str, Any]]:
        """The public discard log of a deal (R-VIEW-2), entries after ``after_step``."""
        return self._reader.discard_log(deal_id, after_step)

    def draw_log(self, deal_id: UUID | str, seat: int) -> list[dict[str, Any]]:
        """The private draw log of one seat in a deal (R-VIEW-3)."""
        return self._reader.draw_log(deal_id, seat)

    def score_table(self, table_id: UUID | str) -> dict[str, Any]:
        """The score table of a game (R-SCORE-1)."""
        return self._reader.score_table(table_id)

    def lobby(
        self,
        status: str = "open",
        limit: int = 100,
        *,
        moved_since: datetime | None = None,
        moved_before: datetime | None = None,
    ) -> list[dict[str, Any]]:
        """The tables of one status (open, playing, finished, stopped), newest first (those
        in play by their last move), with their last move since or before a time if given."""
        return self._reader.lobby(status, limit, moved_since=moved_since, moved_before=moved_before)

    def dump(self) -> dict[str, list[dict[str, Any]]]:
        """Every row of every view table (checks and diagnostics)."""
        return {table: self._reader.rows(table) for table in VIEW_TABLES}


__all__ = ["POSTGRES", "SQLITE", "ReadModels"]
