"""The one-leader leases: which process runs the projections of one database (the
read-models lease), and which runs its bots (the bots lease, ``app.bot_runner``). Both are
the same mechanism under another key (``LEASE_KEY``, ``BOTS_LEASE_KEY``) or lock file
(``LOCK_FILE_SUFFIX``, ``BOTS_LOCK_FILE_SUFFIX``); ``lease_for`` makes either.

- PostgreSQL: a session advisory lock, ``pg_try_advisory_lock(LEASE_KEY)``, on a connection of
  its own that the leader holds open (and LISTENs on). PostgreSQL releases it when that
  connection ends, also when the process is killed; a leader whose lease connection breaks
  stops leading and tries again.
- SQLite file: ``fcntl.flock(LOCK_EX | LOCK_NB)`` on ``<database file>.read-models.lock``,
  released by the kernel when the process ends.
- In-memory store: the process always leads (the store is its own).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import psycopg
from eventsourcing.persistence import InterfaceError, OperationalError
from psycopg.sql import SQL, Identifier

#: The PostgreSQL advisory-lock key of the read-models lease: the first 8 bytes of
#: SHA-256("canasta-ledger read models") as a signed big-endian 64-bit integer,
#: -6377569059128348955. Advisory locks belong to a database, not a schema: two deployments
#: in different schemas of one database would share the lease (give each its own database).
#: An operator sees the holder with
#: ``SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = 2810073787``
#: (``classid`` is the key's high 32 bits, ``objid`` its low ones: 69332709).
LEASE_KEY = int.from_bytes(
    hashlib.sha256(b"canasta-ledger read models").digest()[:8], "big", signed=True
)

#: Suffix of the SQLite lease's lock file, next to the database file.
LOCK_FILE_SUFFIX = ".read-models.lock"

#: The bots lease (``app.bot_runner``): the advisory-lock key, the first 8 bytes of
#: SHA-256("canasta-ledger bots") as a signed 64-bit integer, and the SQLite lock file.
BOTS_LEASE_KEY = int.from_bytes(
    hashlib.sha256(b"canasta-ledger bots").digest()[:8], "big", signed=True
)
BOTS_LOCK_FILE_SUFFIX = ".bots.lock"

#: A leader waiting for events on PostgreSQL notices a stop() within this many seconds,
#: however long it was asked to wait.
STOP_SLICE_SECONDS = 0.5


class LeaseLost(Exception):
    """The lease's connection broke: this process may no longer be the only runner."""


class Lease(Protocol):
    """What the background thread needs of a lease (see the module's docstring)."""

    #: Where the lease is held, for the log.
    where: str

    def try_acquire(self) -> bool:
        """Take the lease if it is free (never blocks); True if this process holds it now."""

    def wait_for_events(self, timeout: float, stopping: threading.Event) -> None:
        """Return when new events may have been written, after ``timeout`` seconds at the
        latest; ``LeaseLost`` if the lease is gone."""

    def check(self) -> None:
        """``LeaseLost`` if the lease is gone."""

    def release(self) -> None:
        """Let go of the lease (idempotent)."""


class ProcessLease:
    """The in-memory store: its log belongs to this process, which always leads."""

    where = "the in-memory store"

    def try_acquire(self) -> bool:
        return True

    def wait_for_events(self, timeout: float, stopping: threading.Event) -> None:
        stopping.wait(timeout)

    def check(self) -> None:
        pass

    def release(self) -> None:
        pass


class FileLease:
    """A SQLite database file: an exclusive ``flock`` on ``<file>.read-models.lock``.

    Each lease opens the lock file itself, so two leases of one process exclude each other
    too (``flock`` locks belong to the open file, not to the process). The holder's pid is
    written into the file (for the operator; the lock, not the content, is the lease)."""

    def __init__(self, database: Path, suffix: str = LOCK_FILE_SUFFIX) -> None:
        self.path = database.with_name(database.name + suffix)
        self.where = str(self.path)
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def wait_for_events(self, timeout: float, stopping: threading.Event) -> None:
        stopping.wait(timeout)

    def check(self) -> None:
        pass

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # drops the flock


class PostgresLease:
    """PostgreSQL: ``pg_try_advisory_lock(LEASE_KEY)`` on a connection of the lease's own.

    A process that does not get the lock keeps the connection and tries again on it. The
    holder also LISTENs on ``channel`` (the events table's, which every insert NOTIFYs):
    ``wait_for_events`` returns on the first notification. Closing the connection (``release``
    or the process's end) releases the lock; keepalives make the server notice a vanished
    holder's connection within about half a minute."""

    #: Server-side TCP keepalives of the lease's connection (seconds, seconds, probes).
    KEEPALIVES = {
        "tcp_keepalives_idle": 10,
        "tcp_keepalives_interval": 5,
        "tcp_keepalives_count": 3,
    }

    def __init__(
        self, connect: Callable[[], psycopg.Connection[Any]], channel: str, key: int = LEASE_KEY
    ) -> None:
        self._connect = connect
        self.channel = channel
        self.key = key
        self.where = f"PostgreSQL advisory lock {key}"
        self._conn: psycopg.Connection[Any] | None = None
        self._held = False

    def try_acquire(self) -> bool:
        if self._held:
            return True
        try:
            if self._conn is None or self._conn.closed:
                self._conn = self._connect()
                for name, value in self.KEEPALIVES.items():
                    self._conn.execute(SQL("SET {} = {}").format(Identifier(name), value))
            row = self._conn.execute("SELECT pg_try_advisory_lock(%s)", (self.key,)).fetchone()
            if not (row and row[0]):
                return False
            self._conn.execute(SQL("LISTEN {}").format(Identifier(self.channel)))
        except BaseException:
            self._close()
            raise
        self._held = True
        return True

    def wait_for_events(self, timeout: float, stopping: threading.Event) -> None:
        conn = self._held_connection()
        deadline = time.monotonic() + timeout
        try:
            # In slices, so that stop() is obeyed within STOP_SLICE_SECONDS whatever the
            # timeout. (Each notifies() generator holds the connection's lock: run them one
            # by one.)
            while not stopping.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                if list(conn.notifies(timeout=min(left, STOP_SLICE_SECONDS), stop_after=1)):
                    # Woken: take the others already here too (one catch-up covers them all).
                    list(conn.notifies(timeout=0))
                    return
        except psycopg.Error as exc:
            self._close()
            raise LeaseLost(f"the lease's connection broke: {exc}") from exc

    def check(self) -> None:
        conn = self._held_connection()
        try:
            conn.execute("SELECT 1")
        except psycopg.Error as exc:
            self._close()
            raise LeaseLost(f"the lease's connection broke: {exc}") from exc

    def _held_connection(self) -> psycopg.Connection[Any]:
        if not self._held or self._conn is None or self._conn.closed:
            self._close()
            raise LeaseLost("the lease is not held")
        return self._conn

    def release(self) -> None:
        self._close()  # the session's end releases the advisory lock and the LISTEN

    def _close(self) -> None:
        conn, self._conn = self._conn, None
        self._held = False
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()


def postgres_connector(pool: Any, application_name: str) -> Callable[[], psycopg.Connection[Any]]:
    """Connections of their own for a lease, to the database of the library's ``pool``."""
    kwargs = pool.kwargs() if callable(pool.kwargs) else pool.kwargs
    params = {
        key: value
        for key, value in dict(kwargs or {}).items()
        if key in ("dbname", "host", "port", "user", "password")
    }

    def connect() -> psycopg.Connection[Any]:
        if pool.get_password_func is not None:
            params["password"] = pool.get_password_func()
        return psycopg.connect(
            **params,
            autocommit=True,
            connect_timeout=max(1, round(pool.timeout)),
            application_name=application_name,
        )

    return connect


def lease_for(
    *,
    memory: bool,
    sqlite_path: Path | None,
    pool: Any,
    channel: str,
    key: int,
    suffix: str,
    application_name: str,
) -> Lease:
    """The lease of one database: the in-memory store's process, a lock file next to the
    SQLite file (``suffix``), or the advisory lock ``key`` on PostgreSQL (``pool``: the
    library's connection pool, whose parameters the lease's own connection uses; ``channel``:
    the events table's NOTIFY channel)."""
    if memory:
        return ProcessLease()
    if sqlite_path is not None:
        return FileLease(sqlite_path.resolve(), suffix)
    if not channel:
        raise ValueError("no NOTIFY channel to listen on")
    return PostgresLease(postgres_connector(pool, application_name), channel, key)


def lead_while_held(
    lease: Lease,
    lead: Callable[[Lease], None],
    stopping: threading.Event,
    retry_seconds: float,
    name: str,
    log: Any,
) -> None:
    """The background thread of an elected runner (the read models, the bots): try the lease
    every ``retry_seconds`` until ``stopping``; while this process holds it, ``lead(lease)``.
    A lease that cannot even be tried is logged once until it can; a lost lease, or a defect
    in ``lead``, is logged and the lease tried again. The lease is released on the way out."""
    unavailable = False  # the lease could not even be tried (logged once)
    try:
        while not stopping.is_set():
            try:
                acquired = lease.try_acquire()
                unavailable = False
            except Exception as exc:
                acquired = False
                if not unavailable:
                    log.warning(
                        "%s: cannot try the lease on %s (retrying every %gs): %r",
                        name,
                        lease.where,
                        retry_seconds,
                        exc,
                    )
                unavailable = True
            if acquired:
                try:
                    lead(lease)
                except LeaseLost as exc:
                    log.warning("%s: lost the lease (%s)", name, exc)
                except (OperationalError, InterfaceError) as exc:  # the database went away
                    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                    log.warning("%s: the database does not answer (%s); retrying", name, reason)
                except Exception:  # a defect: keep the process alive, try again
                    log.exception("%s: the runner failed; trying again", name)
                finally:
                    lease.release()
            if stopping.wait(retry_seconds):
                break
    finally:
        lease.release()
