"""Every use the application makes of the ``eventsourcing`` library's private API.

The library's public ``Application.save`` checks each saved object against a runtime
protocol and cannot save several commands in one transaction; its cache is filled on save
only without fast-forward. The command path needs both, so it builds the library's
``ProcessingEvent`` itself and calls the steps ``save`` calls (``_record``,
``_take_snapshots``, ``_notify``), and it reads the repository's aggregate cache directly.
Those names are private: a new release of the library may change them without notice.
They are used here only, and ``tests/app/test_library_contract.py`` fails, naming what is
missing, when the installed library no longer has them.

``PRIVATE_API`` lists what this module (and the rest of the project) relies on; the test
checks every entry. Uses outside this module, which cannot move here because they are
overrides in subclasses of the library's classes or in the domain's aggregates, are listed
too.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast
from uuid import UUID

from eventsourcing.application import Application, Cache, ProcessingEvent, Repository
from eventsourcing.persistence import InterfaceError, OperationalError

from app.infra import deadline
from app.infra.group_commit import Pending

#: (owner, name, what for): the library's private or undocumented names the project uses.
PRIVATE_API: tuple[tuple[str, str, str], ...] = (
    # this module
    ("eventsourcing.application:Application", "_record", "record_batch: one transaction"),
    ("eventsourcing.application:Application", "_take_snapshots", "record_batch"),
    ("eventsourcing.application:Application", "_notify", "record_batch"),
    ("eventsourcing.application:Application", "notify", "record_batch (deprecated hook)"),
    ("eventsourcing.application:ProcessingEvent", "events", "record_batch"),
    ("eventsourcing.application:ProcessingEvent", "aggregates", "record_batch"),
    ("eventsourcing.application:ProcessingEvent", "saved_kwargs", "record_batch"),
    ("eventsourcing.application:Repository", "cache", "cache_reader, record_batch"),
    ("eventsourcing.application:Repository", "fastforward", "record_batch"),
    ("eventsourcing.application:Cache", "get", "cache_reader: get(key, *, evict=False)"),
    ("eventsourcing.application:Cache", "put", "record_batch: put(key, value)"),
    # overrides in app.infra.persistence.PostgresRecorder (a subclass of the library's)
    ("eventsourcing.postgres:PostgresApplicationRecorder", "_lock_table", "overridden"),
    ("eventsourcing.postgres:PostgresApplicationRecorder", "_notify_channel", "overridden"),
    ("eventsourcing.postgres:PostgresApplicationRecorder", "lock_table_statements", "read"),
    ("eventsourcing.postgres:PostgresApplicationRecorder", "channel_name", "read"),
    # app.infra.persistence._BoundedPool (the class of the library's pool, changed in place)
    ("eventsourcing.postgres:ConnectionPool", "getconn", "overridden: the wait is bounded"),
    ("eventsourcing.postgres:ConnectionPool", "timeout", "read: the connect timeout"),
    # app.infra.read_model_store.sqlite.SQLiteReadModelRecorder (a subclass of the library's)
    ("eventsourcing.sqlite:SQLiteTrackingRecorder", "_create_table", "called"),
    # the domain's aggregates (domain/deal.py, domain/command_log.py)
    ("eventsourcing.domain:Aggregate", "_create", "Deal.start: the Started event's class"),
    ("eventsourcing.domain:Aggregate", "_pending_events", "Deal/CommandLog.__deepcopy__"),
    # run_once: the recorders' queries wrapped by eventsourcing.utils.retry (its inner
    # function "retry_decorator", functools.wraps's __wrapped__)
    ("eventsourcing.postgres:PostgresApplicationRecorder", "select_events", "run_once"),
    ("eventsourcing.postgres:PostgresApplicationRecorder", "max_notification_id", "run_once"),
)

T = TypeVar("T", bound=type)

#: The name of the function the library's ``retry`` decorator wraps each method in.
RETRY_WRAPPER = "retry_decorator"


def retried_methods(cls: type) -> dict[str, Callable[..., Any]]:
    """The methods of ``cls`` (its own or inherited) that the library wraps in ``retry``,
    each mapped to the function it wraps."""
    found: dict[str, Callable[..., Any]] = {}
    for name in dir(cls):
        attr = inspect.getattr_static(cls, name)
        code = getattr(attr, "__code__", None)
        wrapped = getattr(attr, "__wrapped__", None)
        if code is not None and code.co_name == RETRY_WRAPPER and wrapped is not None:
            found[name] = wrapped
    return found


def run_once(cls: T, name: str, module: str) -> T:
    """A subclass of the recorder class ``cls`` whose queries run once: the library retries
    a query that fails with ``OperationalError`` or ``InterfaceError`` ten times, 0.2 s
    apart, each try waiting for a pool connection up to the connect timeout, so a database
    that stopped answering held each query for 10 times that (20 s for a replica's 2 s).
    For a store another one can stand in for (the read replica: app.replica), failing at
    once is the better answer. ``name`` and ``module`` make the class's topic."""
    once = type(name, (cls,), {**retried_methods(cls), "__module__": module})
    return cast(T, once)


#: Seconds between two tries of a query on the primary (the library's own wait).
RETRY_WAIT_SECONDS = 0.2


def within_wait(cls: T) -> T:
    """``cls`` (a PostgreSQL recorder class) changed in place: each query the library tries
    ten times, 0.2 s apart, each try waiting up to the connect timeout for a pool
    connection, is tried again only within the connect timeout
    (``CANASTA_DATABASE_WAIT_SECONDS``) since its first try (or since its command was
    queued: ``app.infra.deadline.since``), and no try waits for a connection past that
    time (``app.infra.deadline.until``). A database that went away then
    fails a request within that time (503 ``database_unavailable``, app.outage) instead of
    holding its thread ten times as long (5 minutes with the library's 30 s); a pooled
    connection that a restart of the database broke fails at once and is replaced by the
    next try, as before. The wrapper keeps the library's name and ``__wrapped__``, so that
    ``run_once`` still finds the query under it."""
    for name, func in retried_methods(cls).items():
        setattr(cls, name, _tried_within_wait(func))
    return cls


def _tried_within_wait(func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def retry_decorator(self: Any, *args: Any, **kwargs: Any) -> Any:
        pool = getattr(self.datastore, "pool", None)
        budget = float(getattr(pool, "timeout", 0) or 0)
        started = deadline.started(time.monotonic())
        # Each try waits for a pool connection only until the budget's end (the pool of
        # app.infra.persistence): a try begun near it does not wait the whole timeout again.
        with deadline.until(started + budget):
            while True:
                try:
                    return func(self, *args, **kwargs)
                except (InterfaceError, OperationalError):
                    if time.monotonic() - started + RETRY_WAIT_SECONDS >= budget:
                        raise
                    time.sleep(RETRY_WAIT_SECONDS)

    return retry_decorator


def postgres_pool(factory: object) -> Any:
    """The connection pool (psycopg_pool) of a library factory's PostgreSQL datastore; None
    for a factory of another store."""
    return getattr(getattr(factory, "datastore", None), "pool", None)


def cache_reader(app: Application[UUID]) -> Callable[[UUID], Any] | None:
    """Reads the repository's aggregate cache: the cached aggregate itself (not a copy), or
    ``KeyError`` if it is not cached. None when the application caches nothing."""
    cache: Cache[UUID, Any] | None = app.repository.cache
    return None if cache is None else cache.get


def record_batch(app: Application[UUID], batch: Sequence[Pending], **kwargs: Any) -> Any:
    """``Application.save`` for the events of one or more commands (each a ``Pending``), in
    one transaction,
    without the per-object runtime checks of ``ProcessingEvent.collect_events``; the saved
    aggregates are put in the cache (the library does so only without fast-forward), then
    the library's snapshotting and notification hooks run as ``save`` runs them. Returns
    the library's recordings."""
    processing_event: ProcessingEvent[UUID] = ProcessingEvent()
    for pending in batch:
        processing_event.events.extend(pending.events)
        processing_event.aggregates.update(pending.aggregates)
    processing_event.saved_kwargs.update(kwargs)
    recordings = app._record(processing_event)
    repository: Repository[UUID] = app.repository
    cache = repository.cache
    if cache is not None and repository.fastforward:
        # A command's next read in this process then needs no query.
        for aggregate_id, aggregate in processing_event.aggregates.items():
            cache.put(aggregate_id, aggregate)
    app._take_snapshots(processing_event)
    app._notify(recordings)
    app.notify(processing_event.events)  # the library's deprecated hook, kept
    return recordings
