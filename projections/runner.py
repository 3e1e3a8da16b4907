"""Running the read-model projections: start, stop, catch up, wait, rebuild, query.

``ReadModels(settings, app=...)`` is the one entry point. Each projection
(``projections.read_models.PROJECTIONS``) has its own view recorder and tracking table:

- PostgreSQL: ``start()`` runs each projection under the library's ``ProjectionRunner``
  (LISTEN/NOTIFY subscription to the notification log, own thread and connections), and a
  supervisor thread restarts a runner that stopped on an error, after a back-off.
- SQLite (and the in-memory store): the library's SQLite recorder cannot ``subscribe()``, so
  a pull runner (``PullWorker``) reads ``select_notifications`` after the tracking position
  and feeds the same projection objects; ``start()`` runs it in a background thread every
  ``poll_interval`` seconds, and ``catch_up()`` / ``wait_until()`` run it in the caller's
  thread too.

Read-your-writes: ``wait_until(position)`` returns once every projection has processed the
log up to ``position`` (a notification id; default: the log's head now). A projection's
tracking position is the id of the last event OF ITS TOPICS it processed, so "processed up to
N" means: its position is at least N, or no event of its topics lies between its position and
N.

``rebuild()`` stops the runners, deletes the view rows and tracking positions, replays the
whole log, and starts the runners again if they were running. It is a maintenance operation:
no other process may be running these projections on the same database meanwhile (its runner
would record positions the rebuild has not reached yet, and the rebuild would then skip them).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from functools import partial
from types import TracebackType
from typing import Any, cast
from uuid import UUID, uuid4

from eventsourcing.persistence import (
    ApplicationRecorder,
    InfrastructureFactory,
    Mapper,
    ProgrammingError,
    Tracking,
)
from eventsourcing.postgres import PostgresFactory
from eventsourcing.projection import ProjectionRunner
from eventsourcing.sqlite import SQLiteFactory
from eventsourcing.utils import Environment

from app.application import CanastaApp
from app.settings import MEMORY, Settings, eventsourcing_env
from projections.read_models import PROJECTIONS, ReadModelProjection
from projections.store import (
    VIEW_TABLES,
    PostgresReadModelRecorder,
    ReadModelRecorder,
    SQLiteReadModelRecorder,
)

logger = logging.getLogger(__name__)

POSTGRES = "postgres"
SQLITE = "sqlite"

#: Environment name of the read models' own connections (``READ_MODELS_*`` keys override).
ENV_NAME = "read_models"


def tracking_table_name(projection: type[ReadModelProjection]) -> str:
    """The library's naming: ``<projection name>_tracking`` (PostgreSQL factory)."""
    return projection.name.lower() + "_tracking"


class PullWorker:
    """Processes one projection by pulling the notification log after its position.

    Each batch of ``batch_size`` notifications is processed in one transaction (rows and
    position). Safe to call from several threads (one catch-up at a time) and alongside other
    runners of the same projection (a notification processed elsewhere first is skipped).
    """

    def __init__(
        self,
        projection: ReadModelProjection,
        *,
        app_name: str,
        recorder: ApplicationRecorder,
        mapper: Mapper[UUID],
        batch_size: int = 500,
    ) -> None:
        self.projection = projection
        self.view: ReadModelRecorder = projection.view
        self.app_name = app_name
        self.recorder = recorder
        self.mapper = mapper
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._scanned = 0  # every notification up to here was processed (or not ours)

    @property
    def name(self) -> str:
        return self.projection.name

    @property
    def topics(self) -> list[str]:
        return list(self.projection.topics)

    def position(self) -> int | None:
        """The id of the last notification this projection processed (None: none yet)."""
        return self.view.max_tracking_id(self.app_name)

    def catch_up(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Process every notification of the projection's topics up to the log's head now;
        returns how many were read (some may have been processed elsewhere already).

        ``progress(count, position)``, if given, is called after each committed batch with
        the number read so far and the id of the batch's last notification."""
        with self._lock:
            head = self.recorder.max_notification_id() or 0
            start = max(self._scanned, self.position() or 0)
            count = 0
            while start < head:
                notifications = self.recorder.select_notifications(
                    start=start,
                    limit=self.batch_size,
                    stop=head,
                    topics=self.topics,
                    inclusive_of_start=False,
                )
                if not notifications:
                    break
                with self.view.batch():  # one transaction per batch of notifications
                    for notification in notifications:
                        event = self.mapper.to_domain_event(notification)
                        tracking = Tracking(self.app_name, notification.id)
                        self.projection.process_event(event, tracking)
                        count += 1
                if progress is not None:
                    progress(count, notifications[-1].id)
                if len(notifications) < self.batch_size:
                    break
                start = notifications[-1].id
            self._scanned = max(self._scanned, head)
            return count

    def has_processed(self, position: int) -> bool:
        """True if every notification of the projection's topics up to ``position`` has
        been processed (by this worker or any other runner)."""
        if position <= self._scanned:
            return True
        tracked = self.position() or 0
        if tracked >= position:
            return True
        pending = self.recorder.select_notifications(
            start=tracked, limit=1, stop=position, topics=self.topics, inclusive_of_start=False
        )
        return not pending

    def reset(self) -> None:
        """Delete the projection's rows and position (the next catch-up starts afresh)."""
        with self._lock:
            self.view.reset(self.projection.tables)
            self._scanned = 0


class _LiveRunner:
    """The library's ``ProjectionRunner`` for one projection (PostgreSQL), restartable."""

    def __init__(
        self,
        projection_class: type[ReadModelProjection],
        view_class: type[PostgresReadModelRecorder],
        env: Mapping[str, str],
    ) -> None:
        self.projection_class = projection_class
        self.view_class = view_class
        self.env = dict(env)
        self.runner: ProjectionRunner[CanastaApp, PostgresReadModelRecorder] | None = None
        self.failures = 0
        self.retry_at = 0.0

    @property
    def is_running(self) -> bool:
        return self.runner is not None and not self.runner.is_interrupted.is_set()

    def start(self) -> None:
        runner: ProjectionRunner[CanastaApp, PostgresReadModelRecorder] = ProjectionRunner(
            application_class=CanastaApp,
            projection_class=cast(Any, self.projection_class),
            view_class=self.view_class,
            env=self.env,
        )
        runner.__enter__()
        self.runner = runner

    def stop(self) -> BaseException | None:
        """Stop the runner; returns the error that stopped it, if any."""
        runner, self.runner = self.runner, None
        if runner is None:
            return None
        error: BaseException | None = None
        try:
            runner.__exit__(None, None, None)
        except Exception as exc:  # the error that stopped its thread
            error = exc
        finally:
            runner.view.datastore.close()
        return error


class ReadModels:
    """All read-model projections of one database, and the queries on them.

    ``app`` is the application whose notification log is read (required for the in-memory
    store; otherwise one is created from ``settings`` and closed by ``close()``). The view
    tables live in the event store's database: PostgreSQL tables created by alembic, or the
    same SQLite file (created here); with the in-memory store, an in-memory SQLite database.
    """

    backend: str  # POSTGRES or SQLITE (the in-memory store's read models are in SQLite)
    views: dict[str, ReadModelRecorder]  # per projection: its view recorder
    workers: dict[str, PullWorker]  # per projection: its pull runner

    def __init__(
        self,
        settings: Settings,
        *,
        app: CanastaApp | None = None,
        projections: Sequence[type[ReadModelProjection]] = PROJECTIONS,
        postgres_view: type[PostgresReadModelRecorder] = PostgresReadModelRecorder,
        sqlite_view: type[SQLiteReadModelRecorder] = SQLiteReadModelRecorder,
        poll_interval: float = 0.25,
        supervise_interval: float = 1.0,
        runner_pool_size: int = 1,
        query_pool_size: int = 2,
        batch_size: int = 500,
    ) -> None:
        if not projections:
            raise ValueError("no projections")
        names = [p.name for p in projections]
        if len(set(names)) != len(names):
            raise ValueError(f"projection names must differ: {names}")
        self.settings = settings
        self.poll_interval = poll_interval
        self.supervise_interval = supervise_interval
        env = eventsourcing_env(settings)
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
        self._owns_app = app is None
        if app is None:
            # Used only for the log's head and pending events: a small pool will do.
            app = CanastaApp({**env, "CANASTA_POSTGRES_POOL_SIZE": str(runner_pool_size)})
        self.app: CanastaApp = app
        try:
            self._factory = InfrastructureFactory.construct(Environment(ENV_NAME, view_env))
            self._setup_views(projections, postgres_view, sqlite_view, batch_size)
        except BaseException:
            if getattr(self, "_factory", None) is not None:
                self._factory.close()
            if self._owns_app:
                self.app.close()
            raise

        self._live: dict[str, _LiveRunner] = {}
        if self.backend == POSTGRES:
            size = str(runner_pool_size)
            runner_env = {
                **env,
                # Each runner's application (CANASTA_*) and view (plain keys) pools: the
                # pools open more connections when needed (POSTGRES_MAX_OVERFLOW).
                "CANASTA_POSTGRES_POOL_SIZE": size,
                "POSTGRES_POOL_SIZE": size,
            }
            self._live = {p.name: _LiveRunner(p, postgres_view, runner_env) for p in projections}
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._running = False

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
                app_name=self.app.name,
                recorder=self.app.recorder,
                mapper=self.app.mapper,
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
        return self._running

    def start(self) -> None:
        """Start processing in the background (idempotent)."""
        if self._running:
            return
        self._stopping.clear()
        for live in self._live.values():
            try:
                live.start()
            except Exception:
                logger.exception(
                    "read model %s: could not start its runner", live.projection_class.name
                )
                live.failures += 1
                live.retry_at = time.monotonic() + self._backoff(live.failures)
        target = self._supervise if self.backend == POSTGRES else self._poll
        self._thread = threading.Thread(target=target, name="read-models", daemon=True)
        self._running = True
        self._thread.start()

    def stop(self) -> None:
        """Stop the background processing (idempotent); positions are kept."""
        if not self._running:
            return
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        for name, live in self._live.items():
            error = live.stop()
            if error is not None:
                logger.error("read model %s stopped on an error: %r", name, error)
        self._running = False

    def close(self) -> None:
        self.stop()
        self.workers.clear()
        self.views.clear()
        self._factory.close()
        if self._owns_app:
            self.app.close()

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

    def _poll(self) -> None:
        """SQLite: pull every projection, then sleep ``poll_interval``."""
        failures = 0
        while not self._stopping.is_set():
            try:
                for worker in self.workers.values():
                    worker.catch_up()
            except Exception:
                failures += 1
                logger.exception("read models: catch-up failed (%d in a row)", failures)
                self._stopping.wait(self._backoff(failures))
                continue
            failures = 0
            self._stopping.wait(self.poll_interval)

    def _supervise(self) -> None:
        """PostgreSQL: restart a runner that stopped on an error, after a back-off."""
        while not self._stopping.wait(self.supervise_interval):
            for name, live in self._live.items():
                if live.is_running:
                    continue
                if live.runner is not None:
                    error = live.stop()
                    live.failures += 1
                    live.retry_at = time.monotonic() + self._backoff(live.failures)
                    logger.error(
                        "read model %s stopped on an error (restart in %.0fs): %r",
                        name,
                        live.retry_at - time.monotonic(),
                        error,
                    )
                if time.monotonic() >= live.retry_at and not self._stopping.is_set():
                    try:
                        live.start()
                        logger.info("read model %s: runner restarted", name)
                    except Exception:
                        live.failures += 1
                        live.retry_at = time.monotonic() + self._backoff(live.failures)
                        logger.exception("read model %s: could not restart its runner", name)

    # --- positions -----------------------------------------------------------------------
    def head(self) -> int:
        """The id of the last notification in the log (0 if empty)."""
        return self.app.recorder.max_notification_id() or 0

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

        A projection with a live runner (PostgreSQL, started) is waited for; any other is
        caught up in this thread. An error of the projection is raised here.
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
            live = self._live.get(name)
            if live is None or not live.is_running:
                if not worker.has_processed(position):
                    worker.catch_up()
                continue
            delay = 0.002
            while not worker.has_processed(position):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"read model {name!r} has not processed notification {position} "
                        f"within {timeout}s (it is at {worker.position()})"
                    )
                if not live.is_running:  # stopped meanwhile: do it here
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

    def lobby(self, status: str = "open", limit: int = 100) -> list[dict[str, Any]]:
        """The tables of one status (open, playing, finished, stopped), newest first."""
        return self._reader.lobby(status, limit)

    def dump(self) -> dict[str, list[dict[str, Any]]]:
        """Every row of every view table (checks and diagnostics)."""
        return {table: self._reader.rows(table) for table in VIEW_TABLES}


__all__ = ["POSTGRES", "SQLITE", "PullWorker", "ReadModels", "tracking_table_name"]
