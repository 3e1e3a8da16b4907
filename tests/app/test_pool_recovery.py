"""After a database outage, the connection pools connect again as soon as the database is
back, not at the end of psycopg_pool's growing back-off. The pool replaces each broken
connection with an attempt that waits 1, 2, 4, 8, 16... seconds between tries for up to five
minutes; after an outage of 11 s the next try came at 15 s, so for seconds after ``/ready``
said the database answered, a server's requests still got 503 ``database_unavailable`` (the
CI's tests/e2e/test_db_outage.py met it: a read of the move menu), and after a longer outage
for as long again as the outage. The store's factory now gives the pool's reconnection
attempts the connect timeout only (``CANASTA_DATABASE_WAIT_SECONDS``): an attempt that gives
up frees its place, and the next request that waits for a connection opens one at once."""

from __future__ import annotations

import time

from eventsourcing.persistence import OperationalError

from app.infra.event_log import LogReader
from app.settings import Settings, eventsourcing_env
from tests.support.relay import Relay

#: The outage: long enough for the pool's back-off to reach an 8 s pause.
OUTAGE_SECONDS = 11.0


def test_the_first_query_after_an_outage_is_answered(migrated_postgres_url: str) -> None:
    relay, url = Relay.to_url(migrated_postgres_url)
    settings = Settings(database_url=url, database_wait_seconds=1, postgres_pool_size=2)
    reader = LogReader(eventsourcing_env(settings))
    try:
        assert reader.recorder.max_notification_id() is None  # an empty log: it answers
        relay.cut()  # the database goes away; the server keeps serving requests meanwhile
        ends = time.monotonic() + OUTAGE_SECONDS
        while time.monotonic() < ends:
            try:
                reader.recorder.max_notification_id()
            except OperationalError:
                pass  # 503 database_unavailable, as it should be meanwhile
            else:
                raise AssertionError("a query was answered while the database was away")
        relay.resume()  # the database is back
        # The next request is answered (it waits up to the connect timeout for a connection).
        assert reader.recorder.max_notification_id() is None
    finally:
        reader.close()
        relay.cut()
