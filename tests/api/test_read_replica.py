"""Reads served by a real PostgreSQL streaming replica (``CANASTA_READ_DATABASE_URL``;
docs/scaling.md): two local clusters, the second made with ``pg_basebackup`` and streaming from
the first (``scripts/pg.sh replica-start``; the ``replica`` fixture).

Where a read was served is shown by what it shows: with the standby's replay paused, a read
without a min step shows the deal as it was before the last command (the replica), while a
read that carries the player's last step (``X-Canasta-Min-Step`` or ``?min_step=``) waits
``read_replica_wait_seconds`` and then shows his command (the primary). A live stream whose
replica lags still delivers every event, in order, redacted as before.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from uuid import UUID

import httpx
import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from app.application import CanastaApp
from app.replica import MIN_STEP_HEADER
from app.schemas import command_body
from app.settings import Settings, eventsourcing_env
from domain.legal import legal_command, seat_to_act
from projections.visibility import Viewer
from tests.api.conftest import Server
from tests.api.test_observability import moved, scrape
from tests.api.test_stream import FAST, StreamReader, expected_events
from tests.support.http import Game, expectation, open_table, register_player
from tests.support.replica import Replica
from tests.support.waiting import timed

pytestmark = pytest.mark.postgres

WAIT = 1.0  # read_replica_wait_seconds in these tests: long enough that a read which does not
# wait is told from one that does on a busy machine
AUDITOR = "audrey"


def replica_client(
    make_client: Callable[..., TestClient], primary: str, replica: Replica
) -> TestClient:
    return make_client(
        database_url=primary,
        read_database_url=replica.url,
        read_replica_wait_seconds=WAIT,
        auditors=[AUDITOR],
        run_bots=False,
    )


def play(game: Game, canasta: CanastaApp, rng: random.Random, until: str | None = None) -> int:
    """One legal command of the seat to act, its ``expect`` taken from the primary (a view
    read from a lagging replica would make it stale); with ``until``, commands until that
    player's is accepted. Returns the last one's step, 0 once the deal is over."""
    while True:
        deal = canasta.get_deal(UUID(game.deal_id))
        seat = seat_to_act(deal.state)
        if seat is None:
            return 0
        name = game.names[seat]
        game.seqs[name] = game.seqs.get(name, 0) + 1
        body = {
            "seq": game.seqs[name],
            "expect": expectation(deal),
            "command": command_body(legal_command(deal.state, seat, rng)),
        }
        response = game.http.post(
            f"/deals/{game.deal_id}/commands", json=body, headers=game.headers[name]
        )
        assert response.status_code == 200, response.text
        if until is None or name == until:
            step: int = response.json()["step"]
            return step


def until_shown(reader: StreamReader, step: int) -> None:
    deadline = time.monotonic() + 20
    while not reader.steps or reader.steps[-1] < step:
        assert time.monotonic() < deadline, f"step {step} not shown: {reader.steps[-3:]}"
        time.sleep(0.02)


def test_a_replica_needs_a_postgresql_primary_and_a_postgresql_url() -> None:
    with pytest.raises(ValidationError, match="needs a PostgreSQL primary"):
        Settings(database_url="memory", read_database_url="postgresql://h/db")
    with pytest.raises(ValidationError, match="must be a postgresql://"):
        Settings(database_url="postgresql://h/db", read_database_url="sqlite:///x")


def test_views_replays_and_the_audit_come_from_the_replica_and_a_players_last_step_from_the_primary(
    make_client: Callable[..., TestClient],
    migrated_postgres_url: str,
    replica: Replica,
    open_game: Callable[..., Game],
) -> None:
    http = replica_client(make_client, migrated_postgres_url, replica)
    audrey = register_player(http, AUDITOR)
    game = open_game(http)
    primary = http.app.state.canasta  # type: ignore[attr-defined]
    rng = random.Random(18)
    before = play(game, primary, rng)
    deal, ann = game.deal_id, game.headers["ann"]
    served = "canasta_reads_served_total"
    with replica.paused():
        step = play(game, primary, rng, until="ann")
        assert step > before
        counted = scrape(http)

        # Without a min step: the replica, as it was when its replay stopped.
        stale = http.get(f"/deals/{deal}", headers=ann).json()
        assert stale["step"] < step
        events = http.get(f"/deals/{deal}/events", headers=ann).json()
        assert events[-1]["step"] == stale["step"]
        replayed = http.get(f"/deals/{deal}/replay", params={"step": step}, headers=ann).json()
        assert replayed["step"] == stale["step"], "the replica knows no later step yet"
        audit = http.get(f"/audit/deals/{deal}", headers=audrey).json()
        assert audit["step"] == stale["step"]
        # /ready says how far behind the replica is, and stays ready.
        ready = http.get("/ready")
        assert ready.status_code == 200 and ready.json()["replica_behind"] >= 1

        # With his last step (header or query): the primary, after the wait, shows his move.
        mine = {**ann, MIN_STEP_HEADER: str(step)}
        fresh, took = timed(lambda: http.get(f"/deals/{deal}", headers=mine))
        assert fresh.status_code == 200 and fresh.json()["step"] == step
        assert took >= WAIT, "it waited for the replica first"
        queried = http.get(f"/deals/{deal}", params={"min_step": step}, headers=ann).json()
        assert queried["step"] == step
        assert http.get(f"/deals/{deal}/events", headers=mine).json()[-1]["step"] == step
        replayed = http.get(f"/deals/{deal}/replay", params={"step": step}, headers=mine).json()
        assert replayed["step"] == step
        audited = {**audrey, MIN_STEP_HEADER: str(step)}
        assert http.get(f"/audit/deals/{deal}", headers=audited).json()["step"] == step
        # The operators see it: 4 reads by the replica, 5 by the primary (the min steps).
        now = scrape(http)
        assert moved(counted, now, served, read="aggregate", store="replica") == 4
        assert moved(counted, now, served, read="aggregate", store="primary") == 5

    # Replay resumed: the replica catches up, and a min step it holds is served at once.
    replica.caught_up()
    view, took = timed(lambda: http.get(f"/deals/{deal}", headers=mine).json())
    assert view["step"] == step and took < WAIT
    assert http.get(f"/deals/{deal}", headers=ann).json()["step"] == step
    assert http.get("/ready").json()["replica_behind"] == 0


def test_the_lobby_and_the_read_models_come_from_the_replica(
    make_client: Callable[..., TestClient],
    migrated_postgres_url: str,
    replica: Replica,
    open_game: Callable[..., Game],
) -> None:
    http = replica_client(make_client, migrated_postgres_url, replica)
    game = open_game(http, start=False)
    http.app.state.read_models.catch_up()  # type: ignore[attr-defined]
    replica.caught_up()  # the lobby's rows are replicated (not at once on a busy machine)
    listed = [t["id"] for t in http.get("/tables", params={"status": "open"}).json()]
    assert game.table in listed
    with replica.paused():
        response = http.post(f"/tables/{game.table}/start", headers=game.host)
        assert response.status_code == 201, response.text
        http.app.state.read_models.catch_up()  # type: ignore[attr-defined]
        # The primary's lobby has the game playing; the replica's still shows it open.
        lobby = http.get("/tables", params={"status": "open"})
        assert game.table in [t["id"] for t in lobby.json()]
        assert "X-Read-Model-Behind" not in lobby.headers
    replica.caught_up()
    playing = [t["id"] for t in http.get("/tables", params={"status": "playing"}).json()]
    assert game.table in playing
    assert game.table not in [t["id"] for t in http.get("/tables").json()]


def test_a_new_deal_unknown_to_the_lagging_replica_is_read_from_the_primary(
    make_client: Callable[..., TestClient],
    migrated_postgres_url: str,
    replica: Replica,
    open_game: Callable[..., Game],
) -> None:
    http = replica_client(make_client, migrated_postgres_url, replica)
    game = open_game(http, start=False)
    with replica.paused():
        deal = game.start()
        view, took = timed(lambda: http.get(f"/deals/{deal}", headers=game.host))
        assert view.status_code == 200, view.text
        assert took < WAIT, "an aggregate the replica does not know is not waited for"
        assert http.get(f"/deals/{deal}/discard-log").status_code == 200
        assert http.get(f"/deals/{UUID(int=7)}").status_code == 404


def test_a_stream_woken_while_its_replica_lags_delivers_every_event_in_order(
    uvicorn_server: Callable[..., Server],
    migrated_postgres_url: str,
    replica: Replica,
) -> None:
    server = uvicorn_server(
        database_url=migrated_postgres_url,
        env={
            **FAST,
            "CANASTA_STREAM_POLL_SECONDS": "5",  # woken by NOTIFY, not by the poll
            "CANASTA_READ_DATABASE_URL": replica.url,
            "CANASTA_READ_REPLICA_WAIT_SECONDS": str(WAIT),
            "CANASTA_RUN_BOTS": "false",
        },
    )
    with httpx.Client(base_url=server.url, timeout=30) as http:
        game = open_table(http)
        canasta = CanastaApp(env=eventsourcing_env(server.settings))
        try:
            rng = random.Random(5)
            spectator = StreamReader(f"{server.url}/deals/{game.deal_id}/stream").start()
            ann = StreamReader(
                f"{server.url}/deals/{game.deal_id}/stream", headers=game.headers["ann"]
            ).start()
            for _ in range(3):
                play(game, canasta, rng)
            with replica.paused():
                for _ in range(6):
                    play(game, canasta, rng)
                newest = canasta.get_deal(UUID(game.deal_id)).version
                until_shown(spectator, newest)
                until_shown(ann, newest)
                # Opened once the follower has passed those events, which the lagging
                # replica does not hold: its catch-up read must not come from the replica.
                late = StreamReader(f"{server.url}/deals/{game.deal_id}/stream").start()
                until_shown(late, newest)
            while play(game, canasta, rng):
                pass
            for reader in (spectator, ann, late):
                reader.wait()
            stored = list(canasta.events.get(UUID(game.deal_id)))
            everyone = expected_events(stored, Viewer.spectator(), canasta, game.deal_id)
            assert spectator.data == everyone and late.data == everyone
            assert ann.data == expected_events(stored, Viewer.player(0), canasta, game.deal_id)
            for reader in (spectator, ann, late):
                assert reader.steps == sorted(set(reader.steps)), "in order, each once"
        finally:
            canasta.close()
    assert "Traceback" not in server.log()


def test_a_replica_that_fails_leaves_every_read_to_the_primary(
    make_client: Callable[..., TestClient],
    migrated_postgres_url: str,
    replica: Replica,
    open_game: Callable[..., Game],
    caplog: pytest.LogCaptureFixture,
) -> None:
    http = replica_client(make_client, migrated_postgres_url, replica)
    game = open_game(http)
    primary = http.app.state.canasta  # type: ignore[attr-defined]
    step = play(game, primary, random.Random(3))
    # The replica's connections go (as when its server stops): every read still answers.
    http.app.state.reads.replica.factory.datastore.pool.close()  # type: ignore[attr-defined]
    with caplog.at_level("WARNING", logger="app.replica"):
        view = http.get(f"/deals/{game.deal_id}", headers=game.headers["ann"])
        assert view.status_code == 200 and view.json()["step"] == step
        assert http.get(f"/deals/{game.deal_id}/events").status_code == 200
        assert http.get("/tables", params={"status": "playing"}).status_code == 200
    assert "the primary serves every read" in caplog.text
