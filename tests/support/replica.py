"""The test PostgreSQL server's streaming standby (``scripts/pg.sh replica-start``; ``make
test`` starts it and sets ``TEST_READ_DATABASE_URL``), as the ``replica`` fixture gives it.

``Replica.url`` is the test's database on the standby (the worker's database, made on the
primary, reaches the standby by replication). ``caught_up()`` waits until the standby has
replayed everything the primary has written; ``paused()`` stops its replay for the length of a
``with`` block (``pg_wal_replay_pause``), so that a test sees what the replica shows while it
lags. The standby is shared by every pytest-xdist worker: pauses are taken one at a time (an
advisory lock on the primary) and always resumed, and while one lasts no worker's writes reach
the standby (the ``replica`` fixture waits, after the test's migration, until they have).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg

from tests.support.databases import database_url

#: The advisory lock key that makes the workers' pauses of the one standby take turns.
PAUSE_LOCK = 0x52_45_50_4C  # "REPL"
#: Seconds the standby may take to replay what the primary wrote, or to show a new database.
CATCH_UP_SECONDS = 30.0


@dataclass(frozen=True)
class Replica:
    """The standby, seen from one test (see the module's documentation)."""

    url: str  # the test's database on the standby
    primary_url: str  # the same database on the primary

    def wait_for_database(self) -> None:
        """Until the database made on the primary can be opened on the standby."""
        deadline = time.monotonic() + CATCH_UP_SECONDS
        while True:
            try:
                with psycopg.connect(self.url, connect_timeout=2) as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def caught_up(self) -> None:
        """Until the standby has replayed the primary's WAL as it is now."""
        with psycopg.connect(self.primary_url, autocommit=True) as primary:
            row = primary.execute("SELECT pg_current_wal_lsn()::text").fetchone()
        assert row is not None
        deadline = time.monotonic() + CATCH_UP_SECONDS
        with psycopg.connect(self.url, autocommit=True) as standby:
            while True:
                done = standby.execute(
                    "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (row[0],)
                ).fetchone()
                if done is not None and done[0]:
                    return
                assert time.monotonic() < deadline, "the standby did not catch up"
                time.sleep(0.01)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The standby replays nothing inside the block (it has replayed everything written
        before it); replay resumes afterwards, whatever happened."""
        # Advisory locks belong to one database: the workers' databases differ, "postgres" not.
        with psycopg.connect(database_url(self.primary_url, "postgres"), autocommit=True) as lock:
            lock.execute("SELECT pg_advisory_lock(%s)", (PAUSE_LOCK,))
            with psycopg.connect(self.url, autocommit=True) as standby:
                self.caught_up()
                standby.execute("SELECT pg_wal_replay_pause()")
                try:
                    yield
                finally:
                    standby.execute("SELECT pg_wal_replay_resume()")
            lock.execute("SELECT pg_advisory_unlock(%s)", (PAUSE_LOCK,))
