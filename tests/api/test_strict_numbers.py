"""JSON numbers only where a request body wants a number: ``true``, ``"1"`` and ``1.5`` are
422 ``malformed`` (not seat 1), on the seats, the table's player count and every number of a
command, and change nothing; ``1`` still works."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

NOT_NUMBERS = [True, "1", 1.5]


def _malformed(response: Any) -> None:
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "malformed"


@pytest.mark.parametrize("seat", NOT_NUMBERS)
def test_a_seat_must_be_a_json_integer(
    client: TestClient, open_game: Any, register: Any, seat: Any
) -> None:
    game = open_game(client, names=["ann", "bob"], start=False)
    cid = register(client, "cid")
    # a 3-player table with seats 0 and 1 free for cid
    table = client.post("/tables", json={"players": 3}, headers=cid).json()["id"]
    _malformed(client.post(f"/tables/{table}/seats", json={"seat": seat}, headers=cid))
    seats = client.get(f"/tables/{table}").json()["seats"]
    assert not any(s for s in seats), seats  # nobody sat
    assert client.post(f"/tables/{table}/seats", json={"seat": 1}, headers=cid).status_code == 200
    _malformed(
        client.put(f"/tables/{game.table}/teams", json={"teams": [[seat]]}, headers=game.host)
    )


@pytest.mark.parametrize("players", NOT_NUMBERS)
def test_the_player_count_must_be_a_json_integer(
    client: TestClient, register: Any, players: Any
) -> None:
    ann = register(client, "ann")
    _malformed(client.post("/tables", json={"players": players}, headers=ann))
    assert client.get("/tables").json() == []


def _command(view: dict[str, Any], table: str, **changes: Any) -> dict[str, Any]:
    expect = {
        "game": table,
        "deal": view["number"],
        "step": view["step"],
        "turn": view["turn"],
        "phase": view["phase"],
    }
    body: dict[str, Any] = {"seq": 1, "expect": expect, "command": {"type": "cut", "n": 10}}
    for path, value in changes.items():
        *outer, last = path.split("__")
        target = body
        for key in outer:
            target = target[key]
        target[last] = value
    return body


@pytest.mark.parametrize("value", NOT_NUMBERS)
@pytest.mark.parametrize(
    "field", ["seq", "expect__step", "expect__deal", "expect__turn", "command__n"]
)
def test_the_numbers_of_a_command_must_be_json_integers(
    client: TestClient, open_game: Any, field: str, value: Any
) -> None:
    game = open_game(client)
    view = client.get(f"/deals/{game.deal_id}").json()
    cutter = game.names[view["cutter"]]  # the cut comes first: turn is null
    headers = game.headers[cutter]
    url = f"/deals/{game.deal_id}/commands"
    _malformed(client.post(url, json=_command(view, game.table, **{field: value}), headers=headers))
    assert client.get(f"/deals/{game.deal_id}").json()["step"] == view["step"]  # nothing recorded
    answer = client.post(url, json=_command(view, game.table), headers=headers)
    assert answer.status_code == 200, answer.text  # seq 1 was not used by the refused body
