"""Private tables, spectators and rematches through the HTTP API (docs/tables.md), on the
in-memory store, SQLite and PostgreSQL.

- A private table is left out of the lobby; its invite code is answered once, at creation,
  and only its hash is stored; a seat needs the code (403 ``invite_required`` /
  ``invite_invalid``, nothing recorded); the host may replace it.
- A table without spectators refuses every read route of the table and its deals to anybody
  but its host, its players and auditors (403 ``spectators_not_allowed``): a table of every
  such route, checked against the application's own routes so that a new one is not missed.
- ``POST /tables/{id}/rematch``: after the game, by a player or the host; the same seats,
  options and privacy; asked again, the same table (200).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.support.http import Game, Headers, canasta_of, open_table, register_player
from tests.support.openapi import sse_messages


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def make_http(
    request: pytest.FixtureRequest, make_client: Callable[..., TestClient]
) -> Callable[..., TestClient]:
    """``make_http(**settings)``: a started client on the store of the test's parameter."""
    if request.param == "postgres":
        url = request.getfixturevalue("migrated_postgres_url")
        return lambda **kw: make_client(database_url=url, postgres_pool_size=4, **kw)
    url = "memory" if request.param == "memory" else None
    return lambda **kw: make_client(database_url=url, **kw)


@pytest.fixture
def http(make_http: Callable[..., TestClient]) -> TestClient:
    return make_http(auditors=["audrey"])


def error_code(response: Any) -> str:
    code: str = response.json()["error"]["code"]
    return code


def lobby_ids(http: TestClient | httpx.Client, status: str = "open") -> list[str]:
    response = http.get("/tables", params={"status": status})
    assert response.status_code == 200, response.text
    return [entry["id"] for entry in response.json()]


# --- private tables: the lobby and the invite code ---------------------------------------------


def test_a_private_table_answers_its_code_once_stores_only_its_hash_and_is_not_listed(
    http: TestClient,
) -> None:
    ann = register_player(http, "ann")
    listed = http.post("/tables", json={}, headers=ann)
    private = http.post("/tables", json={"private": True}, headers=ann)
    assert listed.status_code == private.status_code == 201
    assert "invite" not in listed.json()
    table, code = private.json()["id"], private.json()["invite"]
    assert len(code) >= 16

    assert lobby_ids(http) == [listed.json()["id"]]
    view = http.get(f"/tables/{table}").json()
    assert (view["private"], view["spectators"], view["rematch"]) == (True, True, None)
    assert code not in json.dumps(view)
    stored = list(canasta_of(http).events.get(canasta_of(http).get_table(table).id))
    assert code not in repr([vars(event) for event in stored])  # only its hash is kept


def test_a_seat_at_a_private_table_needs_its_code_and_a_refusal_changes_nothing(
    http: TestClient,
) -> None:
    ann, bob = register_player(http, "ann"), register_player(http, "bob")
    created = http.post("/tables", json={"private": True}, headers=ann).json()
    table, code = created["id"], created["invite"]
    before = http.get(f"/tables/{table}").json()

    missing = http.post(f"/tables/{table}/seats", json={}, headers=bob)
    wrong = http.post(f"/tables/{table}/seats", json={"invite": "not-the-code"}, headers=bob)
    assert (missing.status_code, error_code(missing)) == (403, "invite_required")
    assert (wrong.status_code, error_code(wrong)) == (403, "invite_invalid")
    assert http.get(f"/tables/{table}").json() == before

    right = http.post(f"/tables/{table}/seats", json={"invite": code, "seat": 2}, headers=bob)
    host = http.post(f"/tables/{table}/seats", json={}, headers=ann)  # the host needs none
    assert (right.status_code, right.json()) == (200, {"seat": 2})
    assert (host.status_code, host.json()) == (200, {"seat": 0})
    assert table not in lobby_ids(http)


def test_the_host_replaces_the_code_and_the_old_one_stops_working(http: TestClient) -> None:
    ann, bob, cyd = (register_player(http, name) for name in ("ann", "bob", "cyd"))
    created = http.post("/tables", json={"private": True}, headers=ann).json()
    table, old = created["id"], created["invite"]

    refused = http.post(f"/tables/{table}/invite", headers=bob)
    assert (refused.status_code, error_code(refused)) == (403, "R-SEAT-3")
    rotated = http.post(f"/tables/{table}/invite", headers=ann)
    assert rotated.status_code == 200
    new = rotated.json()["invite"]
    assert new != old

    stale = http.post(f"/tables/{table}/seats", json={"invite": old}, headers=bob)
    assert (stale.status_code, error_code(stale)) == (403, "invite_invalid")
    assert http.post(f"/tables/{table}/seats", json={"invite": new}, headers=cyd).status_code == 200

    public = http.post("/tables", json={}, headers=ann).json()["id"]
    none = http.post(f"/tables/{public}/invite", headers=ann)
    assert (none.status_code, error_code(none)) == (400, "R-SEAT-3")


# --- spectators -------------------------------------------------------------------------------

#: Every read route of a table or its deals that a spectator could use, as (method, path).
WATCH_ROUTES = [
    "/tables/{table}",
    "/tables/{table}/scores",
    "/tables/{table}/stream",
    "/deals/{deal}",
    "/deals/{deal}/events",
    "/deals/{deal}/replay?step=1",
    "/deals/{deal}/stream",
    "/deals/{deal}/discard-log",
]
#: Read routes that were never a spectator's: a player's own (401/403 without a seat) or an
#: auditor's (R-VIEW-4).
NOT_A_SPECTATORS = {
    "/deals/{deal_id}/draw-log",
    "/deals/{deal_id}/moves",
    "/audit/deals/{deal_id}",
    "/audit/deals/{deal_id}/replay",
    "/audit/tables/{table_id}",
}


def test_the_route_table_names_every_read_route_of_a_table_or_a_deal(http: TestClient) -> None:
    paths = http.get("/openapi.json").json()["paths"]
    reads = {
        path
        for path, operations in paths.items()
        if "get" in operations and ("{table_id}" in path or "{deal_id}" in path)
    }
    listed = {
        path.split("?")[0].replace("{table}", "{table_id}").replace("{deal}", "{deal_id}")
        for path in WATCH_ROUTES
    }
    assert reads - NOT_A_SPECTATORS == listed


def closed_game(
    http: TestClient, names: tuple[str, ...] = ("ann", "bob", "cyd", "dee"), **table: Any
) -> Game:
    """A game of ``names`` whose host stopped it after its first deal was dealt (so that its
    streams end), made with the extra ``POST /tables`` fields ``table``."""
    game = open_table(http, names, table=table)
    response = http.post(f"/tables/{game.table}/stop", headers=game.host)
    assert response.status_code == 200, response.text
    return game


def read(http: TestClient, game: Game, path: str, headers: Headers | None) -> Any:
    url = path.format(table=game.table, deal=game.deal_id)
    return http.get(url, headers=headers or {})


@pytest.mark.parametrize("path", WATCH_ROUTES)
def test_a_table_without_spectators_shows_itself_only_to_its_players_host_and_auditors(
    http: TestClient, path: str
) -> None:
    game = closed_game(http, spectators=False)
    outsider = register_player(http, "eve")
    auditor = register_player(http, "audrey")

    for who in (None, outsider):
        refused = read(http, game, path, who)
        assert (refused.status_code, error_code(refused)) == (403, "spectators_not_allowed")
    for who in (game.headers["bob"], game.host, auditor):
        assert read(http, game, path, who).status_code == 200, path

    watchable = closed_game(http, ("fay", "gus", "hal", "ivy"))
    assert read(http, watchable, path, None).status_code == 200


def test_a_table_without_spectators_is_listed_while_open_only_and_the_host_may_change_it(
    http: TestClient,
) -> None:
    game = open_table(http, ("ann", "bob", "cyd", "dee"), start=False, table={"spectators": False})
    assert game.table in lobby_ids(http)
    for allowed in (True, False):
        response = http.put(
            f"/tables/{game.table}/spectators", json={"allowed": allowed}, headers=game.host
        )
        assert (response.status_code, response.json()["spectators"]) == (200, allowed)
    not_host = http.put(
        f"/tables/{game.table}/spectators", json={"allowed": True}, headers=game.headers["bob"]
    )
    assert (not_host.status_code, error_code(not_host)) == (403, "R-SEAT-3")

    game.start()
    assert game.table not in lobby_ids(http, "open") + lobby_ids(http, "playing")
    late = http.put(f"/tables/{game.table}/spectators", json={"allowed": True}, headers=game.host)
    assert (late.status_code, error_code(late)) == (400, "R-SEAT-3")
    http.post(f"/tables/{game.table}/stop", headers=game.host)
    assert game.table not in lobby_ids(http, "stopped")


# --- rematch ----------------------------------------------------------------------------------


def test_a_rematch_waits_for_the_end_and_is_only_for_the_host_and_players(
    http: TestClient,
) -> None:
    game = open_table(http, ("ann", "bob", "cyd", "dee"))
    early = http.post(f"/tables/{game.table}/rematch", headers=game.headers["bob"])
    assert (early.status_code, error_code(early)) == (409, "game_not_over")
    http.post(f"/tables/{game.table}/stop", headers=game.host)
    outsider = http.post(f"/tables/{game.table}/rematch", headers=register_player(http, "eve"))
    assert (outsider.status_code, error_code(outsider)) == (403, "R-SEAT-3")
    assert http.get(f"/tables/{game.table}").json()["rematch"] is None


def test_a_rematch_seats_the_same_players_keeps_the_options_and_is_opened_once(
    http: TestClient,
) -> None:
    game = closed_game(http, private=True, spectators=False)
    first = http.post(f"/tables/{game.table}/rematch", headers=game.headers["cyd"])
    again = http.post(f"/tables/{game.table}/rematch", headers=game.host)
    assert (first.status_code, again.status_code) == (201, 200)
    new = first.json()["id"]
    assert again.json() == {"id": new}

    old_view = http.get(f"/tables/{game.table}", headers=game.host).json()
    view = http.get(f"/tables/{new}", headers=game.host).json()
    assert old_view["rematch"] == new and view["rematch_of"] == game.table
    assert view["seats"] == old_view["seats"] == game.names
    assert view["status"] == "open"
    for same in ("entry", "players", "options", "target", "host", "private", "spectators"):
        assert view[same] == old_view[same], same
    assert new not in lobby_ids(http)

    assert http.post(f"/tables/{new}/start", headers=game.host).status_code == 201

    stream = http.get(f"/tables/{game.table}/stream", params={"after": 1}, headers=game.host)
    kinds = [message.event for message in sse_messages(stream.text)]
    assert kinds[-3:] == ["GameStopped", "RematchOpened", "end"]
    opened = next(m for m in sse_messages(stream.text) if m.event == "RematchOpened")
    assert opened.data["table_id"] == new

    # The audit of the old table reads its rematch as any other table event.
    audit = http.get(f"/audit/tables/{game.table}", headers=register_player(http, "audrey"))
    assert (audit.status_code, audit.json()["ok"]) == (200, True)


def test_a_client_that_followed_the_game_to_its_end_gets_the_rematch_when_it_resumes(
    make_http: Callable[..., TestClient],
) -> None:
    """docs/tables.md: "a client that resumes after the end gets it [RematchOpened] then".
    A spectator follows the table's stream live until it ends with GameStopped; a player opens
    the rematch (201); the spectator resumes after GameStopped at once. He got only ``end``:
    the stream took the table's last step from the process's follower, which held the table's
    history but had not yet read the rematch (it looks every ``stream_poll_seconds``), and
    ``end`` says that nothing more comes, so he never asked again."""
    http = make_http(stream_poll_seconds=1.0)
    hub = http.app.state.hub  # type: ignore[attr-defined]
    other = open_table(http, ("cyd", "dee"))  # watched all along: the follower reads on
    with ThreadPoolExecutor(2) as pool:
        pool.submit(lambda: http.get(f"/tables/{other.table}/stream").text)
        wait_until(lambda: hub.streams == 1)
        game = open_table(http, ("ann", "bob"))  # the follower holds its history from step 1
        url = f"/tables/{game.table}/stream"
        live = pool.submit(lambda: list(sse_messages(http.get(url).text)))
        wait_until(lambda: hub.streams == 2)
        assert http.post(f"/tables/{game.table}/stop", headers=game.host).status_code == 200
        followed = live.result(timeout=30)
        assert [m.event for m in followed][-2:] == ["GameStopped", "end"]
        last = followed[-2].fields["id"]
        rematch = http.post(f"/tables/{game.table}/rematch", headers=game.headers["bob"])
        assert rematch.status_code == 201
        resumed = list(sse_messages(http.get(url, headers={"Last-Event-ID": last}).text))
        assert http.post(f"/tables/{other.table}/stop", headers=other.host).status_code == 200
    assert [m.event for m in resumed] == [None, "RematchOpened", "end"]  # retry: first
    assert resumed[1].data["table_id"] == rematch.json()["id"]


def wait_until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


# --- end to end: a real uvicorn on PostgreSQL --------------------------------------------------


@pytest.mark.postgres
def test_through_uvicorn_on_postgresql_a_private_table_is_unlisted_and_needs_its_code(
    migrated_postgres_url: str, uvicorn_server: Callable[..., Any]
) -> None:
    server = uvicorn_server(database_url=migrated_postgres_url)
    with httpx.Client(base_url=server.url, timeout=10.0) as http:
        game = open_table(http, ("ann", "bob"), start=False, table={"private": True})
        assert game.invite is not None
        listed = http.post("/tables", json={}, headers=game.host).json()["id"]
        assert listed in lobby_ids(http) and game.table not in lobby_ids(http)

        eve = register_player(http, "eve")
        watcher = http.get(f"/tables/{game.table}")
        assert watcher.status_code == 200  # unlisted, not secret: spectators are allowed
        full = http.post(f"/tables/{game.table}/seats", json={}, headers=eve)
        assert (full.status_code, error_code(full)) == (403, "invite_required")
        assert http.get(f"/tables/{game.table}").json() == watcher.json()

        closed = http.post(
            "/tables", json={"private": True, "spectators": False}, headers=game.host
        ).json()
        refused = http.get(f"/tables/{closed['id']}")
        assert (refused.status_code, error_code(refused)) == (403, "spectators_not_allowed")
        joined = http.post(
            f"/tables/{closed['id']}/seats", json={"invite": closed["invite"]}, headers=eve
        )
        assert joined.status_code == 200
        assert http.get(f"/tables/{closed['id']}", headers=eve).status_code == 200


@pytest.mark.postgres
def test_two_server_processes_asked_for_a_rematch_at_once_open_one_table(
    migrated_postgres_url: str, make_client: Callable[..., TestClient]
) -> None:
    """Two application processes on one PostgreSQL (two clients, each its own store
    connection and cache), asked at the same moment: the store keeps one rematch, whose id
    both answer (201 from the one that opened it, 200 from the other)."""
    first, second = (
        make_client(database_url=migrated_postgres_url, postgres_pool_size=2) for _ in range(2)
    )
    game = closed_game(first)
    second.get(f"/tables/{game.table}", headers=game.host)  # both have read the table
    barrier = threading.Barrier(2)

    def ask(client: TestClient, name: str) -> Any:
        barrier.wait()
        return client.post(f"/tables/{game.table}/rematch", headers=game.headers[name])

    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(ask, (first, second), ("bob", "dee")))
    assert sorted(a.status_code for a in answers) == [200, 201]
    assert answers[0].json() == answers[1].json()
    assert first.get(f"/tables/{game.table}").json()["rematch"] == answers[0].json()["id"]
