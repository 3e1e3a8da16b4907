"""The fast lane of ``POST /deals/{id}/commands`` (``app/command_lane.py``) answers exactly
as the route does: the same game played on a server with the lane and on one without gives
the same status and body for every request (accepted commands, retries, stale commands,
refusals, bad tokens, malformed bodies), and the lane really answers the common case."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient

from app.command_lane import CommandLane
from domain.command_log import command_log_id
from domain.legal import candidates, legal_command, seat_to_act
from tests.support.games import stacked_deck
from tests.support.http import Game, open_table, state_reader


def lane_of(client: TestClient) -> CommandLane | None:
    layer: Any = client.app.middleware_stack  # type: ignore[attr-defined]
    while layer is not None:
        if isinstance(layer, CommandLane):
            return layer
        layer = getattr(layer, "app", None)
    return None


def play(client: TestClient, steps: int) -> list[tuple[int, Any]]:
    """A scripted game: a stacked deck, then at every step a few requests a real client
    could send (a possibly illegal command, a retry, a stale one, a bad token, a malformed
    body); returns every (status, body)."""
    rng = random.Random(11)
    deck = stacked_deck(5)
    game: Game = open_table(client, start_body={"deck": deck, "dealer": 0})
    state_of = state_reader(client.app.state.canasta)  # type: ignore[attr-defined]
    seen: list[tuple[int, Any]] = []

    def record(response: Any) -> Any:
        seen.append((response.status_code, response.json()))
        return response

    url = f"/deals/{game.deal}/commands"
    for _ in range(steps):
        st = state_of(str(game.deal))
        seat = seat_to_act(st)
        if seat is None:
            break
        name = game.names[seat]
        options = candidates(st, seat, rng)
        first = record(game.send(name, rng.choice(options)))  # perhaps refused (400)
        if first.status_code != 200:
            record(game.send(name, options[-1]))  # the safe bet
        request = client.get(f"/deals/{game.deal}", headers=game.headers[name]).json()
        body = {
            "seq": game.seqs[name],
            "expect": {
                "game": game.table,
                "deal": request["number"],
                "step": request["step"] - 1,
                "turn": request["turn"],
                "phase": request["phase"],
            },
            "command": {"type": "draw"},
        }
        record(client.post(url, json=body, headers=game.headers[name]))  # used seq, other body
        body["seq"] = game.seqs[name] = game.seqs[name] + 1
        record(client.post(url, json=body, headers=game.headers[name]))  # stale: 409
        record(client.post(url, json=body, headers={"Authorization": "Bearer nobody"}))
        record(client.post(url, content=b"{not json", headers=game.headers[name]))
    return seen


def test_the_lane_answers_as_the_route_does(make_client: Callable[..., TestClient]) -> None:
    with_lane = make_client(allow_stacked_decks=True)
    without = make_client(allow_stacked_decks=True, command_lane=False)
    assert lane_of(without) is None
    lane = lane_of(with_lane)
    assert lane is not None
    answers = play(with_lane, 60)
    assert answers == play(without, 60)
    statuses = {status for status, _ in answers}
    assert {200, 401, 409, 422} <= statuses
    accepted = sum(1 for status, _ in answers if status == 200)
    assert lane.answered > accepted // 2  # the common case took the lane


def test_a_players_first_command_at_a_table_takes_the_lane_and_its_retry_is_answered_once(
    make_client: Callable[..., TestClient],
) -> None:
    """R-CMD-1. A sender's first command at a table (``seq`` 1) has no command log yet: the
    lane creates it instead of handing the command to the route to look for one in the store.
    A retry of that command in a process whose cache no longer holds the log (another
    worker, an eviction) must still get the first answer, and apply nothing twice."""
    for settings in ({}, {"database_url": None}):  # in memory, SQLite
        client = make_client(allow_stacked_decks=True, **settings)
        canasta = client.app.state.canasta  # type: ignore[attr-defined]
        lane = lane_of(client)
        assert lane is not None
        deck = stacked_deck(5)
        game = open_table(client, start_body={"deck": deck, "dealer": 0})
        state_of = state_reader(canasta)
        answered = lane.answered
        firsts: dict[str, Any] = {}
        for _ in range(12):  # every player's first command, and a few more
            st = state_of(str(game.deal))
            seat = seat_to_act(st)
            assert seat is not None
            name = game.names[seat]
            command = legal_command(st, seat, random.Random(3))
            response = game.send(name, command)
            assert response.status_code == 200, response.text
            assert response.json()["replayed"] is False
            if game.seqs[name] == 1:
                firsts[name] = (response.request, response.json())
        assert len(firsts) == 4
        assert lane.answered == answered + 12  # none went to the route

        step = client.get(f"/deals/{game.deal}", headers=game.headers[game.names[0]]).json()
        for name, (request, answer) in firsts.items():
            canasta.repository.cache.get(command_log_id(game.table, name), evict=True)
            retry = client.post(
                str(request.url.path),
                content=request.content,
                headers=game.headers[name] | {"Content-Type": "application/json"},
            )
            assert retry.status_code == 200, retry.text
            assert retry.json() == {**answer, "replayed": True}
        after = client.get(f"/deals/{game.deal}", headers=game.headers[game.names[0]]).json()
        assert after["step"] == step["step"]  # no retry applied again
