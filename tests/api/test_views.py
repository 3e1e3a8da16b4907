"""The read-model endpoints over HTTP: the public discard log (R-VIEW-2), a player's own draw
log (R-VIEW-3, R-SEAT-4), the score table (R-SCORE-1, R-GAME-1) and the lobby (R-SEAT-5,
R-GAME-1, R-GAME-2).

Whole deals are played through HTTP with the random legal player; what the endpoints show is
compared with what the store recorded: ``public_discard_log`` of the deal's stored events, each
seat's ``CardsDrawn`` events, the table aggregate's scores and each deal's breakdown, the table
aggregate itself for the lobby. In process on the in-memory store and on SQLite, and on
PostgreSQL with two real uvicorn processes sharing one database (commands to one, reads from the
other, each read right after the write it must show), and with a projection held up by a lock.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

import httpx
import psycopg
import pytest
from fastapi.testclient import TestClient

from app.application import CanastaApp
from app.routes.views import BEHIND_HEADER, READ_MODEL_WAIT_SECONDS
from domain.events import CardsDrawn
from projections.discard_log import public_discard_log
from tests.api.conftest import Server
from tests.projections.helpers import expected_lobby_row
from tests.support.games import stacked_deck
from tests.support.http import Game, Headers, canasta_of, open_table, register_player, state_reader

Http = Any  # a TestClient or an httpx.Client


# --- what the store says -----------------------------------------------------------------------


def plain(value: Any) -> Any:
    """As JSON would carry it."""
    return json.loads(json.dumps(value))


def expected_discard_log(canasta: CanastaApp, deal_id: str) -> list[dict[str, Any]]:
    log: list[dict[str, Any]] = plain(public_discard_log(canasta.events.get(UUID(deal_id))))
    return log


def expected_draw_log(canasta: CanastaApp, deal_id: str, seat: int) -> list[dict[str, Any]]:
    return [
        {
            "step": e.originator_version,
            "seat": e.seat,
            "cards": list(e.cards),
            "replacement": e.replacement,
        }
        for e in canasta.events.get(UUID(deal_id))
        if isinstance(e, CardsDrawn) and e.seat == seat
    ]


def expected_scores(canasta: CanastaApp, table_id: str) -> dict[str, Any]:
    """From the table aggregate (scores and totals per completed deal, R-GAME-1) and each
    deal's final state (the R-SCORE-1 breakdown)."""
    table = canasta.get_table(UUID(table_id))
    deals = []
    running = {side: 0 for side in table.totals}
    for deal_id, totals in zip(table.deals, table.deal_scores, strict=False):
        st = canasta.get_deal(UUID(deal_id)).state
        assert st.scores is not None
        scores = {}
        for side in sorted(totals):
            running[side] += totals[side]
            assert st.scores[side]["total"] == totals[side]
            scores[side] = {**st.scores[side], "cumulative": running[side]}
        deals.append(
            {"deal_id": deal_id, "number": st.number, "reason": st.end_reason, "scores": scores}
        )
    if deals:
        assert running == table.totals  # a game starts at zero here (no scores_before)
        totals = dict(table.totals)
    else:
        totals = {}
    expected: dict[str, Any] = plain({"table_id": table_id, "deals": deals, "totals": totals})
    return expected


def expected_lobby_entry(canasta: CanastaApp, table_id: str) -> dict[str, Any]:
    """The lobby row the read models must hold, as ``lobby()`` reads it over HTTP: JSON, with
    the times parsed, and not idle (a move within 30 minutes)."""
    entry: dict[str, Any] = parse_times(plain(expected_lobby_row(canasta, table_id)))
    entry["idle"] = False
    return entry


# --- what HTTP shows ---------------------------------------------------------------------------


def get_json(http: Http, path: str, headers: Headers | None = None, **params: Any) -> Any:
    response = http.get(path, headers=headers or {}, params=params)
    assert response.status_code == 200, response.text
    assert BEHIND_HEADER not in response.headers, path
    return response.json()


def lobby(http: Http, status: str = "open", **params: Any) -> list[dict[str, Any]]:
    """``GET /tables?status=...``, with the times parsed (to compare with the events')."""
    entries: list[dict[str, Any]] = get_json(http, "/tables", status=status, **params)
    return [parse_times(entry) for entry in entries]


def parse_times(entry: dict[str, Any]) -> dict[str, Any]:
    """A lobby entry with its times as datetimes (so equal instants compare equal)."""
    for key in ("created_at", "updated_at", "last_move_at"):
        entry[key] = datetime.fromisoformat(entry[key])
    return entry


def lobby_entry(http: Http, table_id: str, status: str) -> dict[str, Any] | None:
    return next((e for e in lobby(http, status) if e["id"] == table_id), None)


def check_views(http: Http, game: Game, canasta: CanastaApp, *, status: str) -> None:
    """Every read-model endpoint for ``game`` equals what the store holds now."""
    for deal_id in canasta.get_table(UUID(game.table)).deals:
        assert get_json(http, f"/deals/{deal_id}/discard-log") == expected_discard_log(
            canasta, deal_id
        )
        for seat, name in enumerate(game.names):
            mine = get_json(http, f"/deals/{deal_id}/draw-log", game.headers[name])
            assert mine == expected_draw_log(canasta, deal_id, seat)
    assert get_json(http, f"/tables/{game.table}/scores") == expected_scores(canasta, game.table)
    assert lobby_entry(http, game.table, status) == expected_lobby_entry(canasta, game.table)


def play(game: Game, canasta: CanastaApp, seed: int, **kwargs: Any) -> int:
    return game.play_deal(state_reader(canasta), random.Random(seed), **kwargs)


# --- in process: the in-memory store and SQLite -------------------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
def http(request: pytest.FixtureRequest, make_client: Callable[..., TestClient]) -> TestClient:
    """A started client on the in-memory store, or on SQLite in ``tmp_path``; it takes stacked
    decks, for the tests that need every seat to have drawn from the stock or the game to go
    on after two deals."""
    return make_client(
        database_url="memory" if request.param == "memory" else None, allow_stacked_decks=True
    )


@pytest.fixture
def played(http: TestClient) -> Game:
    """A finished four-player classic deal, played through HTTP."""
    start = {"deck": stacked_deck("played"), "dealer": 0}
    game = open_table(http, ("ann", "bob", "cyd", "dee"), start_body=start)
    play(game, canasta_of(http), seed=31)
    return game


def test_the_discard_log_is_the_public_entries_of_the_stored_events_for_anyone_r_view_2(
    http: TestClient, played: Game
) -> None:
    canasta, deal = canasta_of(http), played.deal
    expected = expected_discard_log(canasta, str(deal))
    kinds = {entry["kind"] for entry in expected}
    assert {"turned_up", "discarded"} <= kinds
    # Spectators (no token), the players, and strangers all read the same public log.
    stranger = register_player(http, "zed")
    for headers in [{}, stranger, *played.headers.values()]:
        assert get_json(http, f"/deals/{deal}/discard-log", headers) == expected
    # ?after=N: the entries after step N, for a client that has seen up to N.
    middle = expected[len(expected) // 2]["step"]
    after = get_json(http, f"/deals/{deal}/discard-log", after=middle)
    assert after == [entry for entry in expected if entry["step"] > middle]
    assert get_json(http, f"/deals/{deal}/discard-log", after=10**9) == []
    assert get_json(http, f"/deals/{deal}/discard-log", after=0) == expected


def test_the_discard_log_of_an_unknown_deal_is_404_and_a_bad_request_422(
    http: TestClient, played: Game
) -> None:
    for unknown in (uuid4(), played.table):  # a table's id is no deal's
        response = http.get(f"/deals/{unknown}/discard-log")
        assert response.status_code == 404, response.text
        assert response.json()["error"]["code"] == "not_found"
    for path, params in [
        (f"/deals/{played.deal}/discard-log", {"after": -1}),
        (f"/deals/{played.deal}/discard-log", {"after": "x"}),
        ("/deals/not-a-uuid/discard-log", {}),
    ]:
        response = http.get(path, params=params)
        assert response.status_code == 422, response.text
        assert response.json()["error"]["code"] == "malformed"


def test_each_player_gets_his_own_draws_and_never_another_seats_r_view_3(
    http: TestClient, played: Game
) -> None:
    canasta, deal = canasta_of(http), str(played.deal)
    drawn_by = {seat: expected_draw_log(canasta, deal, seat) for seat in range(4)}
    assert all(drawn_by.values())
    for seat, name in enumerate(played.names):
        response = http.get(f"/deals/{deal}/draw-log", headers=played.headers[name])
        assert response.status_code == 200, response.text
        assert response.json() == drawn_by[seat]
        assert {row["seat"] for row in response.json()} == {seat}
        # No card another seat drew appears anywhere in his answer (each card is drawn once).
        for other, rows in drawn_by.items():
            if other != seat:
                for card in (c for row in rows for c in row["cards"]):
                    assert card not in response.text
        # The seat comes from the token (R-CMD-2): a seat asked for in the request is ignored.
        other = (seat + 1) % 4
        asked = http.get(
            f"/deals/{deal}/draw-log", params={"seat": other}, headers=played.headers[name]
        )
        assert asked.json() == drawn_by[seat]


def test_a_draw_log_needs_a_token_401_and_a_seat_at_the_table_403_r_view_3(
    http: TestClient, played: Game
) -> None:
    path = f"/deals/{played.deal}/draw-log"
    anonymous = http.get(path)
    assert anonymous.status_code == 401, anonymous.text
    assert anonymous.json()["error"]["code"] == "R-CMD-2"
    assert anonymous.headers["WWW-Authenticate"] == "Bearer"
    bad = http.get(path, headers={"Authorization": "Bearer not-a-token"})
    assert bad.status_code == 401, bad.text
    stranger = register_player(http, "zed")
    refused = http.get(path, headers=stranger)
    assert refused.status_code == 403, refused.text
    assert refused.json()["error"]["code"] == "R-VIEW-3"
    # The refusal shows no card.
    assert "/" not in refused.json()["error"]["message"]
    unknown = http.get(f"/deals/{uuid4()}/draw-log", headers=stranger)
    assert unknown.status_code == 404, unknown.text


def test_a_player_sitting_the_deal_out_has_an_empty_draw_log_r_seat_4(http: TestClient) -> None:
    names = ("ann", "bob", "cyd", "dee", "eve")
    # Seat 0 sits the first deal out when seat 1 deals (R-SEAT-4).
    start = {"deck": stacked_deck("sitting out"), "dealer": 1}
    game = open_table(http, names, teams=[[0, 2, 4]], start_body=start)
    canasta = canasta_of(http)
    play(game, canasta, seed=32)
    st = canasta.get_deal(UUID(str(game.deal))).state
    (sitting_out,) = set(range(5)) - set(st.order)
    for seat, name in enumerate(names):
        log = get_json(http, f"/deals/{game.deal}/draw-log", game.headers[name])
        if seat == sitting_out:
            assert log == []
        else:
            assert log == expected_draw_log(canasta, str(game.deal), seat) != []


def test_the_score_table_matches_the_tables_scores_and_each_deals_breakdown_r_score_1(
    http: TestClient,
) -> None:
    # Stacked decks: with server shuffles, two deals may take a side past 5000 (R-GAME-1), and
    # the game would be over before the third deal this test opens.
    start = {"deck": stacked_deck("scores 1"), "dealer": 0}
    game = open_table(http, ("ann", "bob", "cyd", "dee"), start_body=start)
    canasta = canasta_of(http)
    path = f"/tables/{game.table}/scores"
    assert get_json(http, path) == {"table_id": game.table, "deals": [], "totals": {}}
    play(game, canasta, seed=33)
    game.next_deal({"deck": stacked_deck("scores 2")})
    half = get_json(http, path)  # the second deal is not over: not listed
    assert [d["number"] for d in half["deals"]] == [1]
    play(game, canasta, seed=34)
    scores = get_json(http, path)
    assert scores == expected_scores(canasta, game.table)
    table = canasta.get_table(UUID(game.table))
    assert [d["deal_id"] for d in scores["deals"]] == table.deals
    assert [{s: v["total"] for s, v in d["scores"].items()} for d in scores["deals"]] == (
        table.deal_scores
    )
    assert scores["totals"] == table.totals
    for deal in scores["deals"]:
        st = canasta.get_deal(UUID(deal["deal_id"])).state
        assert st.scores is not None
        for side, score in deal["scores"].items():
            breakdown = {k: v for k, v in score.items() if k != "cumulative"}
            assert breakdown == st.scores[side]  # every part of R-SCORE-1, as scored
    # A stopped game keeps its completed deals; the abandoned one is not scored (R-GAME-2).
    game.next_deal()
    assert http.post(f"/tables/{game.table}/stop", headers=game.host).status_code == 200
    assert get_json(http, path) == scores
    for unknown in (uuid4(), game.deal):  # a deal's id is no table's
        response = http.get(f"/tables/{unknown}/scores")
        assert response.status_code == 404, response.text


def test_the_lobby_lists_a_new_table_as_open_shows_seats_as_players_join_then_playing_and_stopped(
    http: TestClient,
) -> None:
    """R-SEAT-5 (seats filled by distinct players before the start), R-GAME-2 (stopped)."""
    canasta = canasta_of(http)
    names = ("ann", "bob", "cyd", "dee")
    headers = {name: register_player(http, name) for name in names}
    created = http.post(
        "/tables",
        json={"entry": "classic", "players": 4, "options": {"always_frozen": True}},
        headers=headers["ann"],
    )
    assert created.status_code == 201, created.text
    table = created.json()["id"]
    first = lobby(http)[0]  # newest first
    assert first == expected_lobby_entry(canasta, table)
    assert first["status"] == "open" and first["seats"] == [None] * 4 and first["free_seats"] == 4
    assert first["host"] == "ann" and first["options"] == {"always_frozen": True}

    for joined, (seat, name) in enumerate([(3, "dee"), (0, "ann"), (1, "bob"), (2, "cyd")]):
        response = http.post(f"/tables/{table}/seats", json={"seat": seat}, headers=headers[name])
        assert response.status_code == 200, response.text
        entry = lobby_entry(http, table, "open")
        assert entry == expected_lobby_entry(canasta, table)
        assert entry is not None and entry["seats"][seat] == name
        assert entry["free_seats"] == 3 - joined
    assert lobby_entry(http, table, "playing") is None

    started = http.post(f"/tables/{table}/start", headers=headers["ann"])
    assert started.status_code == 201, started.text
    assert lobby_entry(http, table, "open") is None
    playing = lobby_entry(http, table, "playing")
    assert playing == expected_lobby_entry(canasta, table)
    assert playing is not None and playing["current_deal"] == started.json()["deal"]
    assert playing["seats"] == list(names) and playing["totals"] == {"A": 0, "B": 0}

    stopped = http.post(f"/tables/{table}/stop", headers=headers["ann"])
    assert stopped.status_code == 200, stopped.text
    assert lobby_entry(http, table, "playing") is None
    entry = lobby_entry(http, table, "stopped")
    assert entry == expected_lobby_entry(canasta, table)
    assert entry is not None and entry["winners"] is None


def test_the_lobby_lists_newest_first_within_the_limit_and_refuses_an_unknown_status(
    http: TestClient,
) -> None:
    host = register_player(http, "hal")
    tables = []
    for players in (2, 3, 4):
        response = http.post("/tables", json={"players": players}, headers=host)
        tables.append(response.json()["id"])
    assert [e["id"] for e in lobby(http)] == tables[::-1]
    assert [e["id"] for e in lobby(http, limit=2)] == tables[:0:-1]
    assert lobby(http, "finished") == []
    for params in ({"status": "closed"}, {"status": "OPEN"}, {"limit": 0}, {"limit": 101}):
        response = http.get("/tables", params=params)
        assert response.status_code == 422, response.text
        assert response.json()["error"]["code"] == "malformed"


def test_a_finished_game_is_listed_with_its_winners_r_game_1(
    make_client: Callable[..., TestClient],
) -> None:
    http = make_client(allow_stacked_decks=True)
    game = open_table(http, ("ann", "bob"), start_body={"scores_before": {"A": 9000}})
    canasta = canasta_of(http)
    play(game, canasta, seed=35)
    table = canasta.get_table(UUID(game.table))
    assert table.status == "finished"
    entry = lobby_entry(http, game.table, "finished")
    assert entry == expected_lobby_entry(canasta, game.table)
    assert entry is not None and entry["winners"] == table.winners == ["A"]
    scores = get_json(http, f"/tables/{game.table}/scores")
    assert scores["totals"] == table.totals
    assert scores["deals"][0]["scores"]["A"]["cumulative"] == table.totals["A"]


def test_every_view_shows_each_command_as_soon_as_it_is_answered(http: TestClient) -> None:
    """Read-your-writes: after each accepted command, the discard log and the mover's draw
    log already hold what it recorded (no waiting, no retry)."""
    game = open_table(http, ("ann", "bob"))
    canasta = canasta_of(http)

    def check(_: int) -> None:
        deal = str(game.deal)
        assert get_json(http, f"/deals/{deal}/discard-log") == expected_discard_log(canasta, deal)
        for seat, name in enumerate(game.names):
            mine = get_json(http, f"/deals/{deal}/draw-log", game.headers[name])
            assert mine == expected_draw_log(canasta, deal, seat)

    play(game, canasta, seed=36, after_each=check)
    check_views(http, game, canasta, status="playing")


# --- PostgreSQL ------------------------------------------------------------------------------------


@pytest.mark.postgres
def test_two_servers_on_one_postgresql_show_every_write_at_once_through_the_other(
    migrated_postgres_url: str,
    uvicorn_server: Callable[..., Server],
    store_reader: Callable[..., CanastaApp],
) -> None:
    """Commands go to one uvicorn process and every read to the other, right after the
    write: each process runs its own projection runners on the shared database."""
    # Few connections: each process's projection runners take about 20 more, and the shared
    # test cluster has 100 in all.
    # Stacked decks: two deals shuffled by the server end the game about once in 2,500 (a side
    # past 5,000), and the test opens a second deal.
    few = {"CANASTA_POSTGRES_POOL_SIZE": "3", "CANASTA_ALLOW_STACKED_DECKS": "true"}
    writer_server = uvicorn_server(database_url=migrated_postgres_url, env=few)
    reader_server = uvicorn_server(database_url=migrated_postgres_url, env=few)
    canasta = store_reader(writer_server.settings.model_copy(update={"postgres_pool_size": 2}))
    with (
        httpx.Client(base_url=writer_server.url, timeout=30) as writer,
        httpx.Client(base_url=reader_server.url, timeout=30) as reader,
    ):
        names = ("ann", "bob", "cyd", "dee")
        game = open_table(writer, names, start=False)
        entry = lobby_entry(reader, game.table, "open")
        assert entry == expected_lobby_entry(canasta, game.table)
        assert entry is not None and entry["seats"] == list(names)
        game.start({"deck": stacked_deck("two servers 1"), "dealer": 0})
        assert lobby_entry(reader, game.table, "open") is None
        check_views(reader, game, canasta, status="playing")

        def check(_: int) -> None:
            deal = str(game.deal)
            log = get_json(reader, f"/deals/{deal}/discard-log")
            assert log == expected_discard_log(canasta, deal)
            for seat, name in enumerate(names):
                mine = get_json(reader, f"/deals/{deal}/draw-log", game.headers[name])
                assert mine == expected_draw_log(canasta, deal, seat)

        play(game, canasta, seed=37, after_each=check)
        check_views(reader, game, canasta, status="playing")
        game.next_deal({"deck": stacked_deck("two servers 2")})
        play(game, canasta, seed=38)
        stopped = writer.post(f"/tables/{game.table}/stop", headers=game.host)
        assert stopped.status_code == 200, stopped.text
        check_views(reader, game, canasta, status="stopped")
        check_views(writer, game, canasta, status="stopped")


@pytest.mark.postgres
def test_a_projection_held_up_is_served_as_it_is_with_the_behind_header(
    migrated_postgres_url: str, make_client: Callable[..., TestClient]
) -> None:
    """A lock on the discard log's tracking row holds its runners up: the query waits its
    two seconds, then serves the rows there are, marked ``X-Read-Model-Behind: true``; once
    the lock is gone the log is complete again, without the header."""
    http = make_client(database_url=migrated_postgres_url, postgres_pool_size=4)
    canasta = canasta_of(http)
    game = open_table(http, ("ann", "bob"))
    deal = str(game.deal)
    path = f"/deals/{deal}/discard-log"
    rng = random.Random(39)

    def until_a_new_public_entry() -> None:
        before = expected_discard_log(canasta, deal)
        while expected_discard_log(canasta, deal) == before:
            assert game.play_one(state_reader(canasta), rng), "the deal ended"

    until_a_new_public_entry()  # the turn-up: the projection's tracking row now exists
    before = get_json(http, path)
    assert before == expected_discard_log(canasta, deal)
    with psycopg.connect(migrated_postgres_url) as lock:
        locked = lock.execute(
            "SELECT * FROM discard_log_tracking WHERE application_name = 'canasta' FOR UPDATE"
        ).fetchall()
        assert len(locked) == 1
        until_a_new_public_entry()
        began = time.monotonic()
        response = http.get(path)
        waited = time.monotonic() - began
        assert response.status_code == 200, response.text
        assert response.headers[BEHIND_HEADER] == "true"
        assert response.json() == before
        assert READ_MODEL_WAIT_SECONDS <= waited < READ_MODEL_WAIT_SECONDS + 1.5
        lock.rollback()
    assert get_json(http, path) == expected_discard_log(canasta, deal)
