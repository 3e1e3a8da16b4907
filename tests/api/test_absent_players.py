"""Absent players over HTTP, in process (docs/tables.md): a leave before the start frees the
seat; the missed turns limit (host only, before the start); the table's view and stream show
every change of who plays a seat; refusals change nothing. (The game with bots, take-backs and
a seat given runs through real uvicorn: tests/e2e/test_absent_players.py.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient

from tests.support.http import open_table
from tests.support.openapi import sse_messages

Headers = dict[str, str]


def test_seats_change_hands_and_the_table_says_so(
    make_client: Callable[..., TestClient], register: Callable[[Any, str], Headers]
) -> None:
    client = make_client(run_bots=False)
    game = open_table(client, ("ann", "bob", "cy", "di"), start=False)
    ann, bob = game.headers["ann"], game.headers["bob"]
    table, eve = game.table, register(client, "eve")
    assert client.post(f"/tables/{table}/leave").status_code == 401

    left = client.post(f"/tables/{table}/leave", headers=bob)
    assert left.status_code == 200 and left.json() == {"seat": 1, "played_by": None}
    view = client.get(f"/tables/{table}").json()
    assert view["seats"] == ["ann", None, "cy", "di"]
    (row,) = [t for t in client.get("/tables").json() if t["id"] == table]  # the lobby too
    assert row["seats"] == ["ann", None, "cy", "di"] and row["free_seats"] == 1
    assert row["version"] == view["version"]
    assert view["playing"][1] == {
        "player": None,
        "bot": None,
        "away": False,
        "reason": None,
        "since": None,
    }
    assert client.post(f"/tables/{table}/seats", json={"seat": 1}, headers=eve).status_code == 200

    limit = f"/tables/{table}/missed-turns"
    assert client.put(limit, json={"limit": 3}, headers=bob).status_code == 403
    assert client.put(limit, json={"limit": 11}, headers=ann).status_code == 422
    assert client.put(limit, json={"limit": 3}, headers=ann).json()["missed_turns_limit"] == 3
    assert client.post(f"/tables/{table}/start", headers=ann).status_code == 201
    answer = client.put(limit, json={"limit": 1}, headers=ann)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "R-SEAT-3"

    before = client.get(f"/tables/{table}").json()
    answer = client.post(f"/tables/{table}/seats/1/give", json={"player": "bob"}, headers=ann)
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "seat_not_vacant"
    assert client.post(f"/tables/{table}/leave", headers=bob).json()["error"]["code"] == (
        "not_seated"
    )
    assert client.get(f"/tables/{table}").json() == before

    left = client.post(f"/tables/{table}/leave", headers=eve).json()
    assert left == {"seat": 1, "played_by": "bot:basic:1:for:eve"}
    playing = client.get(f"/tables/{table}").json()["playing"][1]
    assert playing["away"] and playing["bot"] == "basic" and playing["reason"] == "left"
    given = client.post(f"/tables/{table}/seats/1/give", json={"player": "BOB"}, headers=ann)
    assert given.status_code == 200 and given.json()["seats"][1] == "bob"  # his spelling
    (row,) = [t for t in client.get("/tables?status=playing").json() if t["id"] == table]
    assert row["seats"] == ["ann", "bob", "cy", "di"]
    assert row["version"] == given.json()["version"]
    assert client.post(f"/tables/{table}/stop", headers=ann).status_code == 200

    stream = client.get(f"/tables/{table}/stream")
    events = [m.data for m in sse_messages(stream.text) if m.event not in (None, "end")]
    seat_events = [
        (e["kind"], e.get("player"), e.get("freed", e.get("reason", e.get("previous"))))
        for e in events
        if e["kind"].startswith("Seat") or e["kind"] == "MissedTurnsLimitSet"
    ]
    assert seat_events == [
        ("SeatLeft", "bob", True),
        ("MissedTurnsLimitSet", None, None),
        ("SeatLeft", "eve", False),
        ("SeatTakenOver", "eve", "left"),
        ("SeatGiven", "bob", "eve"),
    ]
    deal = client.get(f"/tables/{table}").json()["current_deal"]
    changes = [
        (e["seat"], e["player"], e["reason"])
        for e in client.get(f"/deals/{deal}/events").json()
        if e["kind"] == "SeatPlayerChanged"
    ]
    assert changes == [(1, "bot:basic:1:for:eve", "left"), (1, "bob", "given")]
