"""An ``Idempotency-Key`` whose request met a database outage (docs/operations.md, "When
PostgreSQL goes away"): a request that took its key, then found the database gone before it
sent anything to be recorded, is answered 503 ``database_unavailable``, nothing recorded, and
its key is freed as soon as the database answers again, so that the client's retry under the
same key, right after the outage, is done (not refused 409 ``idempotency_key_in_progress``
for a minute, as before 4 December 2026, when the key could not be freed while the database
was away and stayed held until its claim went stale). Real parts: a uvicorn server, the real
PostgreSQL behind a TCP relay that the test cuts (tests/support/relay.py)."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.e2e.client import Api
from tests.e2e.server import Server
from tests.support.relay import Relay
from tests.support.waiting import wait_for

pytestmark = pytest.mark.postgres

#: CANASTA_DATABASE_WAIT_SECONDS: a request waits this long for the database, then 503.
WAIT_SECONDS = 1


@pytest.mark.parametrize(
    ("lock", "retried"),
    [
        # the table's read waits: nothing was sent to be recorded, the key is freed
        ("ACCESS EXCLUSIVE", 200),
        # the reads pass, the save waits (the events table's lock for writers): its outcome
        # is unknown to the server (a COMMIT may land as the connection breaks), so the key
        # stays held, and the retry cannot do it a second time (409 until the claim is stale)
        ("SHARE", 409),
    ],
)
def test_a_key_whose_request_met_an_outage_before_recording_is_free_for_the_retry(
    migrated_postgres_url: str, tmp_path: Path, lock: str, retried: int
) -> None:
    relay, url = Relay.to_url(migrated_postgres_url)
    env = {
        "CANASTA_POSTGRES_POOL_SIZE": "2",
        "CANASTA_DATABASE_WAIT_SECONDS": str(WAIT_SECONDS),
        "CANASTA_READ_MODELS": "off",
        "CANASTA_RUN_BOTS": "false",
    }
    # One worker: it has seen ann's token, so the key's caller is known without a query.
    server = Server(tmp_path, database_url=url, workers=1, extra_env=env)
    server.start()
    api = Api(server.url)
    try:
        ann = api.register("ann")
        body = {"entry": "classic", "players": 4}
        table = api.call("POST", "/tables", player=ann, json=body, expect=201).json()["id"]
        key = {"Idempotency-Key": str(uuid.uuid4()), **ann.auth}
        answers: list[httpx.Response] = []

        def join() -> None:
            answers.append(
                httpx.post(
                    f"{server.url}/tables/{table}/seats", json={"seat": 0}, headers=key, timeout=60
                )
            )

        # The request takes its key, then reads the table and saves: one of them waits behind
        # a lock taken straight on the database (not through the relay) while the database
        # "goes away" under it.
        with psycopg.connect(migrated_postgres_url) as direct:
            direct.execute(f"LOCK TABLE canasta_events IN {lock} MODE")
            sent = threading.Thread(target=join)
            sent.start()
            with psycopg.connect(migrated_postgres_url, autocommit=True) as look:
                taken = "SELECT count(*) FROM idempotency_keys"
                wait_for(lambda: look.execute(taken).fetchone() == (1,), 30, "no key taken")
            time.sleep(0.3)  # its read waits for the lock
            relay.cut()
            sent.join(60)
            direct.rollback()
        (first,) = answers
        assert first.status_code == 503, first.text
        assert first.json()["error"]["code"] == "database_unavailable"

        relay.resume()
        wait_for(lambda: api.call("GET", "/ready").status_code == 200, 30, "not ready")
        again = httpx.post(
            f"{server.url}/tables/{table}/seats", json={"seat": 0}, headers=key, timeout=60
        )
        assert again.status_code == retried, again.text
        if retried == 409:
            assert again.json()["error"]["code"] == "idempotency_key_in_progress"
            # and rightly: PostgreSQL ran the save once the lock was free, the connection
            # already cut, so the request answered 503 was recorded after all
            seats = api.call("GET", f"/tables/{table}", expect=200).json()["seats"]
            assert seats == ["ann", None, None, None], seats
            return
        assert "idempotent-replayed" not in again.headers
        seats = api.call("GET", f"/tables/{table}", expect=200).json()["seats"]
        assert seats == ["ann", None, None, None], seats
        # and it is kept: the same key again gets the same answer, nothing done again
        replay = httpx.post(
            f"{server.url}/tables/{table}/seats", json={"seat": 0}, headers=key, timeout=60
        )
        assert replay.status_code == 200 and replay.headers["idempotent-replayed"] == "true"
        assert replay.json() == again.json()
    finally:
        api.close()
        server.stop()
        relay.cut()
    server.assert_clean_log()
