"""While PostgreSQL is away, a query of the primary gives up within
``CANASTA_DATABASE_WAIT_SECONDS`` (docs/operations.md, "When PostgreSQL goes away"), not
about twice that. Two ways it took twice as long before 4 December 2026, each shown here with
the real database behind a TCP relay that the test cuts (tests/support/relay.py):

- a query whose connection broke late in the wait was tried again, and that try waited the
  whole timeout for a new connection (``app.infra.library.within_wait``);
- a command queued for the group committer behind a batch that waited the whole timeout in
  vain waited the whole timeout again in the next batch (``app.infra.group_commit``).

Each wait now ends by the query's deadline (``app.infra.deadline``). The bound checked is
generous (one and a half times the setting: the old ways took about twice it, and a busy box
adds its own delays to the new one)."""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg
import pytest
from eventsourcing.persistence import OperationalError

from app.application import CanastaApp
from app.infra.event_log import LogReader
from app.settings import Settings, eventsourcing_env
from tests.support.relay import Relay

pytestmark = pytest.mark.postgres

#: CANASTA_DATABASE_WAIT_SECONDS.
WAIT = 3
#: The bound the test allows (the old ways: about 2 * WAIT).
BOUND = 1.5 * WAIT


def failed_within(call: Any) -> float:
    """How long ``call()`` took to fail with the database away (it must fail)."""
    began = time.monotonic()
    with pytest.raises(OperationalError):
        call()
    return time.monotonic() - began


def test_a_query_whose_connection_breaks_late_gives_up_within_the_wait(
    migrated_postgres_url: str,
) -> None:
    relay, url = Relay.to_url(migrated_postgres_url)
    settings = Settings(database_url=url, database_wait_seconds=WAIT, postgres_pool_size=1)
    reader = LogReader(eventsourcing_env(settings))
    took: list[float] = []
    try:
        assert reader.recorder.max_notification_id() is None  # it answers
        with psycopg.connect(migrated_postgres_url) as direct:
            # The query waits behind a lock, its connection open, until the cut breaks it
            # late in the wait; its next try must not wait a whole timeout again.
            direct.execute("LOCK TABLE canasta_events IN ACCESS EXCLUSIVE MODE")
            query = threading.Thread(
                target=lambda: took.append(failed_within(reader.recorder.max_notification_id))
            )
            query.start()
            time.sleep(0.8 * WAIT)
            relay.cut()
            query.join(4 * WAIT)
            direct.rollback()
        assert took and took[0] < BOUND, f"the query failed after {took}s (wait {WAIT}s)"
    finally:
        reader.close()
        relay.cut()


def test_a_command_queued_behind_a_failing_one_gives_up_within_the_wait(
    migrated_postgres_url: str,
) -> None:
    relay, url = Relay.to_url(migrated_postgres_url)
    settings = Settings(database_url=url, database_wait_seconds=WAIT, postgres_pool_size=1)
    app = CanastaApp(env=eventsourcing_env(settings))
    took: dict[str, float] = {}
    try:
        app.create_table("ann", "classic", 4)  # it answers
        relay.cut()
        opened = [
            threading.Thread(
                target=lambda h=host: took.setdefault(
                    h, failed_within(lambda: app.create_table(h, "classic", 4))
                )
            )
            for host in ("bob", "cid")
        ]
        for thread in opened:
            thread.start()
        for thread in opened:
            thread.join(4 * WAIT)
        assert len(took) == 2 and max(took.values()) < BOUND, (
            f"the commands failed after {took} s (wait {WAIT}s)"
        )
    finally:
        app.close()
        relay.cut()
