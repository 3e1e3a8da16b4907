"""A refusal's key and parameters (docs/api.md, "Errors"; domain/refusals.py): a set-up
refusal and a command's refusal carry them beside the English message, which is the key's
template filled in; so do a 403 (not the host), a 404 (no such table) and a 409 (a stale
command, a taken name), whose English message is as it was before they had keys. A 401 is
worded in English only and carries neither."""

from __future__ import annotations

from fastapi.testclient import TestClient

from domain import commands as c
from domain.refusals import render
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


def test_not_the_host_no_such_table_and_a_stale_command_have_their_keys(
    client: TestClient,
) -> None:
    game = open_table(client, start=False)
    bob = game.headers[PLAYERS[1]]
    answer = client.post(f"/tables/{game.table}/start", headers=bob)
    assert answer.status_code == 403
    assert answer.json()["error"] == {
        "code": "R-SEAT-3",
        "message": "only the host may do this",
        "key": "host.only",
        "params": {},
    }
    table = "00000000-0000-4000-8000-000000000000"
    missing = client.get(f"/tables/{table}")
    assert missing.status_code == 404
    assert missing.json()["error"] == {
        "code": "not_found",
        "message": f"no table {table}",
        "key": "table.not_found",
        "params": {"id": table},
    }
    taken = client.post("/players", json={"name": PLAYERS[0]})
    assert taken.status_code == 409
    assert taken.json()["error"] == {
        "code": "name_taken",
        "message": f"the name {PLAYERS[0]!r} is taken",
        "key": "name.taken",
        "params": {"name": PLAYERS[0]},
    }


def test_a_stale_command_says_which_step_it_believed(client: TestClient) -> None:
    game = open_table(client)
    cutter = client.get(f"/deals/{game.deal_id}").json()["cutter"]
    body = game.request(PLAYERS[cutter], c.Cut(20), 1)
    body["expect"]["step"] -= 1  # a step behind
    url = f"/deals/{game.deal_id}/commands"
    answer = client.post(url, json=body, headers=game.headers[PLAYERS[cutter]])
    assert answer.status_code == 409
    error = answer.json()["error"]
    assert (error["code"], error["key"]) == ("R-CMD-1", "stale.step")
    assert error["message"] == render("stale.step", error["params"])
    assert error["params"] == {
        "value": body["expect"]["step"] + 1,
        "believed": body["expect"]["step"],
    }


def test_a_refusal_worded_in_english_only_has_no_key(client: TestClient) -> None:
    """Not signed in (401): the pages say it by the rule's line alone."""
    anonymous = client.post("/tables", json={"entry": "classic", "players": 2})
    assert anonymous.status_code == 401
    assert set(anonymous.json()["error"]) == {"code", "message"}
