"""``Idempotency-Key`` (docs/api.md, "Retrying safely"): a client that retries a request
that changes something, after a timeout or a dropped connection, gets the first answer back
and nothing is done twice. Real HTTP through the ASGI app on SQLite and PostgreSQL; two
uvicorn processes on one PostgreSQL for the race between processes."""

from __future__ import annotations

import sqlite3
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from fastapi.testclient import TestClient

from app.application import CanastaApp
from app.idempotency import REPLAYED, ROUTES
from app.idempotency_keys import HEADER
from tests.support.http import Headers, canasta_of, register_player

TABLE = {"entry": "classic", "players": 2}
STORES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def key() -> dict[str, str]:
    return {HEADER: str(uuid.uuid4())}


def created(canasta: CanastaApp, kind: str = "Table.Created") -> int:
    """How many aggregates the store holds of a kind: the count of its first event (a
    table's ``Table.Created``, a deal's ``Deal.Started``)."""
    return sum(
        1
        for n in canasta.recorder.select_notifications(start=None, limit=1_000_000)
        if n.topic.endswith(f":{kind}")
    )


@pytest.fixture(params=STORES)
def http(request: pytest.FixtureRequest, make_client: Callable[..., TestClient]) -> TestClient:
    """A client over the embedded SQLite file, or over a migrated PostgreSQL database."""
    if request.param == "postgres":
        url = request.getfixturevalue("migrated_postgres_url")
        return make_client(database_url=url, run_bots=False)
    return make_client(database_url=None, run_bots=False)


def test_a_retried_table_creation_makes_one_table(http: TestClient) -> None:
    ann = register_player(http, "ann")
    same = {**ann, **key()}
    first = http.post("/tables", json=TABLE, headers=same)
    again = http.post("/tables", json=TABLE, headers=same)
    # JSON spelled otherwise is the same request
    spaced = http.post(
        "/tables",
        content=b'{ "players": 2,  "entry": "classic" }',
        headers={**same, "Content-Type": "application/json"},
    )
    assert first.status_code == again.status_code == spaced.status_code == 201
    assert REPLAYED not in {k.title() for k in first.headers}
    assert again.headers[REPLAYED] == spaced.headers[REPLAYED] == "true"
    assert again.json() == spaced.json() == first.json()
    assert created(canasta_of(http)) == 1


def test_the_same_key_with_another_body_is_refused(http: TestClient) -> None:
    ann = register_player(http, "ann")
    same = {**ann, **key()}
    assert http.post("/tables", json=TABLE, headers=same).status_code == 201
    other = http.post("/tables", json={**TABLE, "players": 4}, headers=same)
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert other.json()["error"]["key"] == "idempotency.reused"  # said in a page's language
    assert created(canasta_of(http)) == 1


def test_without_a_key_every_request_is_done(http: TestClient) -> None:
    ann = register_player(http, "ann")
    ids = {http.post("/tables", json=TABLE, headers=ann).json()["id"] for _ in range(2)}
    assert len(ids) == 2
    assert created(canasta_of(http)) == 2


def test_another_accounts_same_key_is_another_key(http: TestClient) -> None:
    ann, bob = register_player(http, "ann"), register_player(http, "bob")
    shared = key()
    by_ann = http.post("/tables", json=TABLE, headers={**ann, **shared})
    by_bob = http.post("/tables", json={**TABLE, "players": 4}, headers={**bob, **shared})
    assert by_ann.status_code == by_bob.status_code == 201
    assert REPLAYED not in by_bob.headers
    assert by_ann.json()["id"] != by_bob.json()["id"]
    assert http.get(f"/tables/{by_bob.json()['id']}").json()["host"] == "bob"
    assert created(canasta_of(http)) == 2


def test_concurrent_first_requests_with_one_key_do_it_once(http: TestClient) -> None:
    ann = register_player(http, "ann")
    same = {**ann, **key()}
    answers = race(8, lambda: http.post("/tables/practice", json={"bot": "random"}, headers=same))
    assert_done_once(answers)
    assert created(canasta_of(http)) == 1
    assert created(canasta_of(http), "Deal.Started") == 1


def race(n: int, send: Callable[[], Any]) -> list[Any]:
    """``n`` threads send at once (a barrier); their answers."""
    barrier = threading.Barrier(n)
    answers: list[Any] = []
    lock = threading.Lock()

    def one() -> None:
        barrier.wait()
        answer = send()
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def assert_done_once(answers: list[Any]) -> None:
    """One answer did it; the others replayed it or were told that it was under way."""
    done = [a for a in answers if a.status_code == 201 and REPLAYED not in a.headers]
    replayed = [a for a in answers if a.status_code == 201 and REPLAYED in a.headers]
    waiting = [a for a in answers if a.status_code == 409]
    assert len(done) == 1, [(a.status_code, a.text) for a in answers]
    assert len(done) + len(replayed) + len(waiting) == len(answers)
    assert all(a.json() == done[0].json() for a in replayed)
    for answer in waiting:
        assert answer.json()["error"]["code"] == "idempotency_key_in_progress"
        assert answer.json()["error"]["key"] == "idempotency.in_progress"
        assert answer.headers["Retry-After"] == "1"


def test_a_retried_practice_table_is_one_game(http: TestClient) -> None:
    ann = register_player(http, "ann")
    same = {**ann, **key()}
    first = http.post("/tables/practice", json={"bot": "random"}, headers=same)
    again = http.post("/tables/practice", json={"bot": "random"}, headers=same)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again.headers[REPLAYED] == "true"
    assert created(canasta_of(http)) == 1


def test_a_retried_start_answers_the_deal_instead_of_a_refusal(http: TestClient) -> None:
    """Without a key, a start whose answer was lost and is sent again is refused (the game
    has started): the client never learns the deal. With one, the retry gets it."""
    ann, bob = register_player(http, "ann"), register_player(http, "bob")
    table = http.post("/tables", json=TABLE, headers=ann).json()["id"]
    for who in (ann, bob):
        assert http.post(f"/tables/{table}/seats", json={}, headers=who).status_code == 200
    same = {**ann, **key()}
    first = http.post(f"/tables/{table}/start", headers=same)
    again = http.post(f"/tables/{table}/start", headers=same)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    unkeyed = http.post(f"/tables/{table}/start", headers=ann)
    assert unkeyed.status_code == 400  # what a retry without a key gets
    assert created(canasta_of(http), "Deal.Started") == 1


def test_a_retried_bot_seat_seats_one_bot(http: TestClient) -> None:
    """Without a key, a retried ``bot`` seat took the next free seat: a second bot."""
    ann = register_player(http, "ann")
    table = http.post("/tables", json={**TABLE, "players": 4}, headers=ann).json()["id"]
    same = {**ann, **key()}
    first = http.post(f"/tables/{table}/seats", json={"bot": "random"}, headers=same)
    again = http.post(f"/tables/{table}/seats", json={"bot": "random"}, headers=same)
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json() and again.headers[REPLAYED] == "true"
    bots = http.get(f"/tables/{table}").json()["bots"]
    assert [b for b in bots if b is not None] == ["random"]


def test_a_refusal_frees_the_key(http: TestClient) -> None:
    ann = register_player(http, "ann")
    same = {**ann, **key()}
    refused = http.post("/tables", json={**TABLE, "players": 9}, headers=same)
    assert refused.status_code in (400, 422)
    done = http.post("/tables", json=TABLE, headers=same)  # nothing was done: runs afresh
    assert done.status_code == 201 and REPLAYED not in done.headers
    assert created(canasta_of(http)) == 1


def test_a_retried_registration_gets_its_token_which_the_database_holds_only_sealed(
    http: TestClient,
) -> None:
    """Without a key, a registration whose answer was lost is refused when sent again
    (name_taken) and the token is lost for good. With one, the retry gets it back; the
    stored answer is encrypted under the key, so the database never shows the token."""
    same = key()
    first = http.post("/players", json={"name": "cyd"}, headers=same)
    again = http.post("/players", json={"name": "cyd"}, headers=same)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again.headers[REPLAYED] == "true"
    token = first.json()["token"]
    assert http.get("/me", headers={"Authorization": f"Bearer {token}"}).json()["name"] == "cyd"
    rows = stored_rows(http)
    assert len(rows) == 1 and token not in repr(rows) and same[HEADER] not in repr(rows)


def stored_rows(http: TestClient) -> list[tuple[Any, ...]]:
    settings = http.app.state.settings  # type: ignore[attr-defined]
    if settings.database_url is None:
        with sqlite3.connect(settings.sqlite_path) as db:
            return db.execute("SELECT * FROM idempotency_keys").fetchall()
    with psycopg.connect(settings.database_url) as conn:
        return conn.execute("SELECT * FROM idempotency_keys").fetchall()


def test_the_session_cookie_and_the_token_share_the_accounts_keys(http: TestClient) -> None:
    ann = register_player(http, "ann")
    same = key()
    first = http.post("/tables", json=TABLE, headers={**ann, **same})
    assert http.post("/sessions", headers=ann).status_code == 201  # the cookie, kept by http
    by_cookie = http.post("/tables", json=TABLE, headers={"X-Canasta-CSRF": "1", **same})
    assert by_cookie.status_code == 201 and by_cookie.headers[REPLAYED] == "true"
    assert by_cookie.json() == first.json()
    http.cookies.clear()


def test_the_key_is_the_account_the_route_serves_whatever_headers_repeat(
    http: TestClient,
) -> None:
    """A request whose headers repeat (two ``Authorization`` headers, two ``Cookie`` headers)
    is served by the route as the first token, or as the session all its cookies name; its
    key is that account's, and a retry is done once (read otherwise, the key was nobody's
    and the retry made a second table)."""
    ann = register_player(http, "ann")
    twice = [("Authorization", ann["Authorization"]), ("Authorization", "Bearer made-up-one")]
    same = list(key().items())
    first = http.post("/tables", json=TABLE, headers=twice + same)
    again = http.post("/tables", json=TABLE, headers=twice + same)
    assert first.status_code == again.status_code == 201, again.text
    assert again.headers.get(REPLAYED) == "true" and again.json() == first.json()
    session = http.post("/sessions", headers=ann).cookies["canasta_session"]
    http.cookies.clear()
    cookies = [("Cookie", f"canasta_session={session}"), ("Cookie", "theme=dark")]
    other = [*cookies, ("X-Canasta-CSRF", "1"), *key().items()]
    first = http.post("/tables", json=TABLE, headers=other)
    again = http.post("/tables", json=TABLE, headers=other)
    assert first.status_code == again.status_code == 201, again.text
    assert again.headers.get(REPLAYED) == "true" and again.json() == first.json()
    assert created(canasta_of(http)) == 2


def test_a_malformed_key_is_refused_before_anything(http: TestClient) -> None:
    ann = register_player(http, "ann")
    for bad in ("short", "x" * 256, "has space in the middle of it"):
        answer = http.post("/tables", json=TABLE, headers={**ann, HEADER: bad})
        assert answer.status_code == 422 and answer.json()["error"]["code"] == "malformed"
    quoted = http.post("/tables", json=TABLE, headers={**ann, HEADER: f'"{uuid.uuid4()}"'})
    assert quoted.status_code == 201
    assert created(canasta_of(http)) == 1


def test_an_unknown_token_is_refused_as_without_a_key(http: TestClient) -> None:
    stranger: Headers = {"Authorization": "Bearer nobody-knows-this-token", **key()}
    assert http.post("/tables", json=TABLE, headers=stranger).status_code == 401
    assert stored_rows(http) == []


@pytest.mark.parametrize("store", STORES)
def test_two_server_processes_on_one_database_do_it_once(
    store: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    uvicorn_server: Callable[..., Any],
    store_reader: Callable[..., CanastaApp],
) -> None:
    """Two uvicorn processes on one PostgreSQL, or on one SQLite file, given one key at once."""
    if store == "postgres":
        url = request.getfixturevalue("migrated_postgres_url")
        servers = [uvicorn_server(database_url=url) for _ in range(2)]
    else:
        servers = [uvicorn_server(data_dir=tmp_path / "shared") for _ in range(2)]
    with httpx.Client(base_url=servers[0].url) as first:
        ann = register_player(first, "ann")
    same = {**ann, **key()}
    clients = [httpx.Client(base_url=server.url, timeout=30) for server in servers]
    try:
        turn = iter(range(1_000))

        def send() -> httpx.Response:
            client = clients[next(turn) % 2]
            return client.post("/tables", json=TABLE, headers=same)

        answers = race(8, send)
    finally:
        for client in clients:
            client.close()
    assert_done_once(answers)
    assert created(store_reader(servers[0].settings)) == 1


def test_the_openapi_document_lists_the_header_where_it_is_taken(
    make_client: Callable[..., TestClient],
) -> None:
    document = make_client().get("/openapi.json").json()
    taking = {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if any(p["name"] == HEADER for p in operation.get("parameters", []))
    }
    assert taking == set(ROUTES)
    assert ("POST", "/deals/{deal_id}/commands") not in taking  # its seq does it (R-CMD-1)
    for method, path in ROUTES:
        answers = document["paths"][path][method.lower()]["responses"]
        assert all(REPLAYED in a.get("headers", {}) for s, a in answers.items() if s[0] == "2")
