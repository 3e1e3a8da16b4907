"""The turn clock over HTTP and through the application's command path (docs/tables.md, "Turn
clock"): the host's option, the deadline in the views, who may time a turn out, and the race of
a late move with the timeout decided on the same step: exactly one wins, the other is refused
as stale and changes nothing. No bot runner here (``run_bots=False``): the test sends the
timeouts as the runner does, as the seat's stand-in through ``CanastaApp.submit``."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import pytest
from fastapi.testclient import TestClient

from app.application import Answer, CanastaApp
from app.command_io import submission
from app.routes.stream import table_event_view
from app.schemas import CommandIn, command_body
from domain.clock import stand_in
from domain.commands import Command, Draw, TimeOut
from domain.errors import Conflict, DomainError, Forbidden
from domain.legal import legal_command, seat_to_act
from tests.support.http import Game, expectation, open_table

Headers = dict[str, str]


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def make_http(
    request: pytest.FixtureRequest, make_client: Callable[..., TestClient]
) -> Callable[..., TestClient]:
    """``make_http(**settings)``: a started client on the store of the test's parameter, that
    plays no bots and lets hosts choose a clock of 1 second."""
    settings: dict[str, Any] = {"run_bots": False, "turn_seconds_min": 1}
    if request.param == "postgres":
        url = request.getfixturevalue("migrated_postgres_url")
        return lambda: make_client(database_url=url, postgres_pool_size=4, **settings)
    url = "memory" if request.param == "memory" else None
    return lambda: make_client(database_url=url, **settings)


def _canasta(http: TestClient) -> CanastaApp:
    canasta = http.app.state.canasta  # type: ignore[attr-defined]
    assert isinstance(canasta, CanastaApp)
    return canasta


def _args(canasta: CanastaApp, game: Game, name: str, command: Command, seq: int) -> Any:
    """``submit``'s arguments for ``name``'s command decided on the deal as it is now."""
    deal = canasta.get_deal(UUID(game.deal_id))
    body = CommandIn.model_validate(
        {"seq": seq, "expect": expectation(deal), "command": command_body(command)}
    )
    return submission(deal.id, name, body)


def _timeout_args(canasta: CanastaApp, game: Game) -> Any:
    """The timeout of the seat to act, as the bots process sends it."""
    deal = canasta.get_deal(UUID(game.deal_id))
    seat = seat_to_act(deal.state)
    assert seat is not None
    name = stand_in(seat)
    seq = canasta.last_seq(game.table, name) + 1
    return _args(canasta, game, name, TimeOut(deal.version), seq)


def _wait_for_the_deadline(http: TestClient, game: Game) -> None:
    shown = http.get(f"/deals/{game.deal}").json()["deadline"]
    assert shown is not None
    left = (datetime.fromisoformat(shown) - datetime.now(UTC)).total_seconds()
    time.sleep(max(0.0, left) + 0.05)


def _clocked(http: TestClient, names: list[str], seconds: int = 1) -> Game:
    return open_table(http, names, table={"turn_seconds": seconds})


def test_the_host_chooses_the_clock_before_the_start(client: TestClient) -> None:
    game = open_table(client, ["hal", "bob"], start=False, table={"turn_seconds": 60})
    url = f"/tables/{game.table}"
    view = client.get(url).json()
    assert view["turn_seconds"] == 60 and view["deadline"] is None
    bob = game.headers["bob"]
    answer = client.put(f"{url}/clock", json={"turn_seconds": 30}, headers=bob)
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "R-SEAT-3"
    for value, status, code in (
        (5, 400, "R-SEAT-3"),  # below the least (10 on this server)
        (3601, 422, "malformed"),
        ("30", 422, "malformed"),
    ):
        answer = client.put(f"{url}/clock", json={"turn_seconds": value}, headers=game.host)
        assert answer.status_code == status and answer.json()["error"]["code"] == code
    assert client.get(url).json()["turn_seconds"] == 60  # refusals changed nothing
    answer = client.put(f"{url}/clock", json={"turn_seconds": None}, headers=game.host)
    assert answer.status_code == 200 and answer.json()["turn_seconds"] is None
    answer = client.put(f"{url}/clock", json={"turn_seconds": 45}, headers=game.host)
    assert answer.json()["turn_seconds"] == 45
    shown = [table_event_view(e) for e in _canasta(client).events.get(UUID(game.table))]
    assert shown[0]["kind"] == "Created" and shown[0]["turn_seconds"] == 60
    assert [e["turn_seconds"] for e in shown if e["kind"] == "TurnClockSet"] == [None, 45]
    game.start()
    view = client.get(url).json()
    assert view["turn_seconds"] == 45 and view["deadline"] is not None
    answer = client.put(f"{url}/clock", json={"turn_seconds": 60}, headers=game.host)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "R-SEAT-3"
    # A table without a clock shows no deadline; the least clock is 10 seconds by default.
    plain = open_table(client, ["ann", "cyd"])
    assert client.get(f"/tables/{plain.table}").json()["turn_seconds"] is None
    assert "deadline" not in client.get(f"/deals/{plain.deal}").json()
    body = {"entry": "classic", "players": 2, "turn_seconds": 9}
    answer = client.post("/tables", json=body, headers=plain.host)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "R-SEAT-3"


def test_only_the_clock_times_a_turn_out_and_only_once_it_is_due(client: TestClient) -> None:
    canasta = _canasta(client)
    game = _clocked(client, ["ann", "bob"], seconds=60)
    before = client.get(f"/deals/{game.deal}").json()
    seat = seat_to_act(canasta.get_deal(UUID(game.deal_id)).state)
    assert seat is not None
    person = game.names[seat]
    answer = game.send(person, TimeOut(before["step"]))
    assert answer.status_code == 403, answer.text
    assert answer.json()["error"]["code"] == "timeout_not_allowed"
    tried = game.check(person, TimeOut(before["step"]))  # nor in a dry run
    assert tried.status_code == 403 and tried.json()["error"]["code"] == "timeout_not_allowed"
    assert client.get(f"/deals/{game.deal}").json() == before
    table = client.get(f"/tables/{game.table}", headers=game.headers[person]).json()
    assert table["your_last_seq"] == 0  # nothing recorded, not even the number
    with pytest.raises(Conflict) as early:  # 60 s to go
        canasta.submit(*_timeout_args(canasta, game))
    assert early.value.code == "clock_not_due"
    with pytest.raises(Forbidden) as not_yours:  # a stand-in plays only a timed-out turn
        canasta.submit(*_args(canasta, game, stand_in(seat), Draw(), 1))
    assert not_yours.value.code == "R-CMD-2"
    plain = open_table(client, ["cyd", "dee"])  # no clock: never due
    with pytest.raises(Conflict) as never:
        canasta.submit(*_timeout_args(canasta, plain))
    assert never.value.code == "clock_not_due"
    assert client.get(f"/deals/{game.deal}").json() == before


def test_the_timeout_first_then_the_late_move_is_stale_and_the_bot_plays_the_turn(
    make_http: Callable[[], TestClient],
) -> None:
    http = make_http()
    canasta = _canasta(http)
    game = _clocked(http, ["ann", "bob"])
    _wait_for_the_deadline(http, game)
    deal = canasta.get_deal(UUID(game.deal_id))
    seat = seat_to_act(deal.state)
    assert seat is not None
    person = game.names[seat]
    late = game.request(person, legal_command(deal.state, seat, random.Random(1)), 1)
    answer = canasta.submit(*_timeout_args(canasta, game))
    assert answer.status == 200, answer.body
    assert [e["kind"] for e in answer.body["events"]] == ["TurnTimedOut"]
    assert answer.body["events"] == [
        {"step": deal.version + 1, "kind": "TurnTimedOut", "seat": seat, "on_step": deal.version}
    ]
    after = http.get(f"/deals/{game.deal}").json()
    assert after["timed_out"] == [seat] and after["deadline"] is None
    assert http.get(f"/tables/{game.table}").json()["deadline"] is None
    stale = http.post(f"/deals/{game.deal}/commands", json=late, headers=game.headers[person])
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "R-CMD-1"
    game.seqs[person] = 1
    fresh = game.send(person, legal_command(deal.state, seat, random.Random(1)))
    assert fresh.status_code == 409 and fresh.json()["error"]["code"] == "turn_timed_out"
    tried = game.check(person, legal_command(deal.state, seat, random.Random(1))).json()
    assert tried["accepted"] is False and tried["error"]["code"] == "turn_timed_out"
    assert http.get(f"/deals/{game.deal}").json() == after  # both changed nothing
    with pytest.raises(Conflict) as twice:  # the clock runs out once a turn
        canasta.submit(*_timeout_args(canasta, game))
    assert twice.value.code == "clock_not_due"
    # The stand-in (the basic bot, under its name) plays the rest of the turn.
    name = stand_in(seat)
    state = canasta.get_deal(UUID(game.deal_id)).state
    move = legal_command(state, seat, random.Random(2))
    played = canasta.submit(
        *_args(canasta, game, name, move, canasta.last_seq(game.table, name) + 1)
    )
    assert played.status == 200, played.body


def test_the_late_move_first_then_the_timeout_is_stale(
    make_http: Callable[[], TestClient],
) -> None:
    http = make_http()
    canasta = _canasta(http)
    game = _clocked(http, ["ann", "bob"])
    _wait_for_the_deadline(http, game)
    timeout = _timeout_args(canasta, game)  # decided on this step
    deal = canasta.get_deal(UUID(game.deal_id))
    seat = seat_to_act(deal.state)
    assert seat is not None
    moved = game.send(game.names[seat], legal_command(deal.state, seat, random.Random(3)))
    assert moved.status_code == 200, moved.text
    before = http.get(f"/deals/{game.deal}").json()
    answer = canasta.submit(*timeout)
    assert answer.status == 409 and answer.body["error"]["code"] == "R-CMD-1"
    assert http.get(f"/deals/{game.deal}").json() == before
    assert before["timed_out"] == []


def _submit(canasta: CanastaApp, args: Any, barrier: threading.Barrier) -> tuple[int, str | None]:
    barrier.wait()
    try:
        answer: Answer = canasta.submit(*args)
    except DomainError as refusal:  # a lost race between two saves decided at once
        return 409, refusal.code
    return answer.status, answer.body.get("error", {}).get("code")


def test_a_late_move_and_the_timeout_sent_at_once_exactly_one_wins(
    make_http: Callable[[], TestClient],
) -> None:
    http = make_http()
    canasta = _canasta(http)
    for round_ in range(4):
        game = _clocked(http, [f"ann{round_}", f"bob{round_}"])
        _wait_for_the_deadline(http, game)
        deal = canasta.get_deal(UUID(game.deal_id))
        seat = seat_to_act(deal.state)
        assert seat is not None
        move = legal_command(deal.state, seat, random.Random(round_))
        both = [_args(canasta, game, game.names[seat], move, 1), _timeout_args(canasta, game)]
        barrier = threading.Barrier(2)
        with ThreadPoolExecutor(2) as pool:
            (person, person_code), (clock, clock_code) = pool.map(
                _submit, [canasta, canasta], both, [barrier, barrier]
            )
        assert sorted([person, clock]) == [200, 409], (person, clock)
        loser = person_code if person == 409 else clock_code
        assert loser in ("R-CMD-1", "race_lost")  # stale (or, decided at once, a lost race)
        after = canasta.get_deal(UUID(game.deal_id))
        kinds = [type(e).__name__ for e in canasta.events.get(after.id, gt=deal.version)]
        if clock == 200:
            assert kinds == ["TurnTimedOut"] and after.state.timed_out == [seat]
        else:
            assert "TurnTimedOut" not in kinds and after.state.timed_out == []
        assert http.get(f"/deals/{game.deal}").json()["step"] == after.version
