"""A read replica whose server stops (docs/scaling.md, "Lag and failure"): the replica is
reached through a TCP relay (tests/support/relay.py) which the test cuts, as the standby's
server cuts its connections and refuses new ones when it stops. Every read still answers,
within the documented 2 s that a failed check of the replica takes, the reads of the next
5 s at once from the primary, and ``/ready`` stays quick and ready with ``replica_behind``
null; and when it starts again, it serves again within seconds. (The library retries a failed query ten times, 0.2 s apart, each waiting up to the
connect timeout: with that, an operator who stopped his replica saw every read take 20 s.)"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from tests.api.test_observability import moved, scrape
from tests.api.test_read_replica import WAIT, play, timed
from tests.support.http import Game
from tests.support.relay import Relay
from tests.support.replica import Replica

pytestmark = pytest.mark.postgres

#: The check of a failed replica: its 2 s connect timeout, and room for a busy machine.
FAILED_CHECK_SECONDS = 4.0


@pytest.fixture
def relayed(replica: Replica) -> Iterator[tuple[Relay, str]]:
    relay, url = Relay.to_url(replica.url)
    yield relay, url
    relay.cut()


def test_reads_and_ready_answer_promptly_from_the_primary_once_the_replica_stops(
    make_client: Callable[..., TestClient],
    migrated_postgres_url: str,
    replica: Replica,
    relayed: tuple[Relay, str],
    open_game: Callable[..., Game],
    caplog: pytest.LogCaptureFixture,
) -> None:
    relay, replica_url = relayed
    http = make_client(
        database_url=migrated_postgres_url,
        read_database_url=replica_url,
        read_replica_wait_seconds=WAIT,
        run_bots=False,
    )
    game = open_game(http)
    primary = http.app.state.canasta  # type: ignore[attr-defined]
    step = play(game, primary, random.Random(5))
    deal, ann = game.deal_id, game.headers["ann"]
    replica.caught_up()
    before = scrape(http)
    assert http.get(f"/deals/{deal}", headers=ann).json()["step"] == step
    assert http.get("/ready").json()["replica_behind"] == 0
    counted = scrape(http)
    served = "canasta_reads_served_total"
    assert moved(before, counted, served, read="aggregate", store="replica") == 1

    relay.cut()  # the replica's server stops
    caplog.set_level("WARNING", logger="app.replica")

    # A load balancer's probe (often with a 1 s timeout) sees a ready process at once.
    ready, took = timed(lambda: http.get("/ready"))
    assert ready.status_code == 200 and ready.json()["replica_behind"] is None
    assert took < 1.0, f"/ready took {took:.1f}s"
    first, took = timed(lambda: http.get(f"/deals/{deal}", headers=ann))
    assert first.status_code == 200 and first.json()["step"] == step
    assert took < FAILED_CHECK_SECONDS, f"the first read after the stop took {took:.1f}s"
    # the log names the replica and the driver's reason, not only "OperationalError"
    said = [r.getMessage() for r in caplog.records if r.name == "app.replica"]
    assert said, "the replica's failure is not logged"
    where = urlsplit(replica_url)
    assert said[0].startswith(f"read replica PostgreSQL {where.hostname}:{where.port}/")
    assert "Error: " in said[0] and "docs/scaling.md" in said[0], said[0]
    began = time.monotonic()
    for path in (f"/deals/{deal}", f"/deals/{deal}/events", f"/tables/{game.table}/scores"):
        answer, took = timed(lambda path=path: http.get(path, headers=ann))  # type: ignore[misc]
        assert answer.status_code == 200, answer.text
        assert took < 1.0, f"{path} took {took:.1f}s while the replica is left aside"
    assert time.monotonic() - began < 5.0
    ready, took_ready = timed(lambda: http.get("/ready"))
    assert ready.status_code == 200 and ready.json()["replica_behind"] is None
    # Once the 5 s are over the replica is tried again: one check, refused, at most 2 s.
    time.sleep(5.5)
    again, took = timed(lambda: http.get(f"/deals/{deal}", headers=ann))
    assert again.status_code == 200 and again.json()["step"] == step
    assert took < FAILED_CHECK_SECONDS, f"a read 5 s after the stop took {took:.1f}s"
    assert took_ready < 1.0, f"/ready took {took_ready:.1f}s"
    # one line for the failure, not one at each check of the replica while it fails
    said = [r.getMessage() for r in caplog.records if r.name == "app.replica"]
    assert len(said) == 1, said
    now = scrape(http)
    assert moved(counted, now, served, read="aggregate", store="primary") >= 4
    assert moved(counted, now, served, read="aggregate", store="replica") == 0

    # The replica's server starts again: once the 5 s are over, the replica serves again
    # (every pooled connection its stop broke is replaced, not found out one a check).
    relay.resume()
    deadline = time.monotonic() + 15
    while True:
        assert http.get(f"/deals/{deal}", headers=ann).json()["step"] == step
        later = scrape(http)
        if moved(now, later, served, read="aggregate", store="replica") >= 1:
            break
        assert time.monotonic() < deadline, "the replica was still left aside after 15 s"
        time.sleep(0.5)
    assert http.get("/ready").json()["replica_behind"] == 0
    said = [r.getMessage() for r in caplog.records if r.name == "app.replica"]
    assert "answers again after" in said[-1], said
