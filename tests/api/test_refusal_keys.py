"""A refusal's key and parameters (docs/api.md, "Errors"; domain/refusals.py): a set-up
refusal and a command's refusal carry them beside the English message, which is the key's
template filled in; a refusal worded in English only (no such table) carries neither."""

from __future__ import annotations

from fastapi.testclient import TestClient

from domain import commands as c
from tests.support.http import PLAYERS, open_table, register_player


def test_a_taken_seat_is_refused_with_its_key_and_the_seat(client: TestClient) -> None:
    game = open_table(client, start=False)
    late = register_player(client, "zoe")
    answer = client.post(f"/tables/{game.table}/seats", json={"seat": 2}, headers=late)
    assert answer.status_code == 400
    assert answer.json()["error"] == {
        "code": "R-SEAT-5",
        "message": "seat 2 is taken",
        "key": "seat.taken",
        "params": {"seat": 2},
    }


def test_a_command_out_of_turn_names_whose_turn_it_is(client: TestClient) -> None:
    game = open_table(client)
    cutter = client.get(f"/deals/{game.deal_id}").json()["cutter"]  # R-DEAL-4
    other = (cutter + 1) % 4
    answer = game.send(PLAYERS[other], c.Cut(20))
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert (error["code"], error["key"], error["params"]) == (
        "R-TURN-1",
        "cut.other_seat",
        {"cutter": cutter, "seat": other},
    )
    assert error["message"] == f"seat {cutter} cuts, not seat {other} (R-DEAL-4)"


def test_a_refusal_worded_in_english_only_has_no_key(client: TestClient) -> None:
    missing = client.get("/tables/00000000-0000-4000-8000-000000000000")
    assert missing.status_code == 404
    assert set(missing.json()["error"]) == {"code", "message"}
