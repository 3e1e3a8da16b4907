"""``Idempotency-Key`` when something fails other than the database going away (docs/api.md,
"Retrying safely"; the outage itself: tests/e2e/test_idempotency_outage.py). Real HTTP
through the ASGI app on a real PostgreSQL; the faults are PostgreSQL triggers that refuse one
kind of write (a defect of the server would fail the same way: an error that is not the
database being unreachable).

- A request that fails after it began to save (a practice table: created and seated, then
  its start refused) may have recorded something: its key stays held, so the client's retry
  cannot open a second table (before 4 December 2026 the key was freed and the retry did).
- A success whose answer could not be stored: the retry is told 409 in progress while the
  store refuses it, then gets the first answer back once the store takes it (before, 409
  until the claim went stale, a minute, and then the request was done a second time)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import psycopg
import pytest
from fastapi.testclient import TestClient

from app.idempotency import IN_PROGRESS, REPLAYED
from app.idempotency_keys import HEADER
from tests.support.http import register_player

pytestmark = pytest.mark.postgres

REFUSE = """
CREATE FUNCTION canasta_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
"""


@pytest.fixture
def database(migrated_postgres_url: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(migrated_postgres_url, autocommit=True) as conn:
        conn.execute(REFUSE)
        yield conn


@pytest.fixture
def http(
    make_client: Callable[..., TestClient], migrated_postgres_url: str, database: psycopg.Connection
) -> TestClient:
    started = make_client(database_url=migrated_postgres_url, run_bots=False, read_models="off")
    # the same application, answering its 500s instead of raising them into the test
    return TestClient(started.app, raise_server_exceptions=False)


def tables(database: psycopg.Connection) -> int:
    row = database.execute(
        "SELECT count(*) FROM canasta_events WHERE topic LIKE '%Table.Created'"
    ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_request_that_failed_after_its_save_began_keeps_its_key(
    http: TestClient, database: psycopg.Connection
) -> None:
    ann = register_player(http, "ann")
    same = {**ann, HEADER: str(uuid.uuid4())}
    body = {"entry": "classic", "players": 2, "bot": "random"}
    database.execute(
        "CREATE TRIGGER refuse_deals BEFORE INSERT ON canasta_events FOR EACH ROW "
        "WHEN (NEW.topic LIKE '%Deal.Started') EXECUTE FUNCTION canasta_test_refuse()"
    )
    failed = http.post("/tables/practice", json=body, headers=same)
    assert failed.status_code == 500, failed.text
    assert tables(database) == 1  # the table was recorded before the start failed
    database.execute("DROP TRIGGER refuse_deals ON canasta_events")

    again = http.post("/tables/practice", json=body, headers=same)
    assert again.status_code == 409, again.text
    assert again.json()["error"]["code"] == IN_PROGRESS
    assert tables(database) == 1  # not a second practice table


def test_a_success_whose_answer_could_not_be_stored_is_answered_once_it_is(
    http: TestClient, database: psycopg.Connection
) -> None:
    ann = register_player(http, "ann")
    same = {**ann, HEADER: str(uuid.uuid4())}
    body = {"entry": "classic", "players": 2}
    database.execute(
        "CREATE TRIGGER refuse_answers BEFORE UPDATE ON idempotency_keys FOR EACH ROW "
        "EXECUTE FUNCTION canasta_test_refuse()"
    )
    first = http.post("/tables", json=body, headers=same)
    assert first.status_code == 201, first.text  # the work is done: answered even so
    waiting = http.post("/tables", json=body, headers=same)
    assert waiting.status_code == 409, waiting.text
    assert waiting.json()["error"]["code"] == IN_PROGRESS
    assert waiting.headers["retry-after"] == "1"

    database.execute("DROP TRIGGER refuse_answers ON idempotency_keys")
    again = http.post("/tables", json=body, headers=same)
    assert again.status_code == 201, again.text
    assert again.headers[REPLAYED] == "true"
    assert again.json() == first.json()
    assert tables(database) == 1
