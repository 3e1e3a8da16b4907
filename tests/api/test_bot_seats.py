"""Seating bots over HTTP (docs/bots.md, R-SEAT-3, R-SEAT-5): the host seats a bot in a free
seat, a player starts a practice table in one call; the views say which seats are bots and
of which level; refusals change nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient

Headers = dict[str, str]


def test_the_host_seats_bots_and_the_views_show_them(
    client: TestClient, register: Callable[[Any, str], Headers]
) -> None:
    hal, bob = register(client, "hal"), register(client, "bob")
    table = client.post("/tables", json={"entry": "classic", "players": 4}, headers=hal).json()[
        "id"
    ]
    assert client.post(f"/tables/{table}/seats", json={"seat": 0}, headers=bob).json() == {
        "seat": 0
    }
    answer = client.post(f"/tables/{table}/seats", json={"seat": 2, "bot": "basic"}, headers=hal)
    assert answer.status_code == 200 and answer.json() == {"seat": 2}
    answer = client.post(f"/tables/{table}/seats", json={"bot": "random"}, headers=hal)
    assert answer.json() == {"seat": 1}  # the first free seat
    view = client.get(f"/tables/{table}").json()
    assert view["seats"] == ["bob", "bot:random:1", "bot:basic:2", None]
    assert view["bots"] == [None, "random", "basic", None]
    lobby = client.get("/tables", params={"status": "open"}).json()
    assert lobby[0]["bots"] == [None, "random", "basic", None]
    assert lobby[0]["free_seats"] == 1
    client.post(f"/tables/{table}/seats", json={"seat": 3, "bot": "basic"}, headers=hal)
    started = client.post(f"/tables/{table}/start", headers=hal)
    assert started.status_code == 201, started.text


def test_refusals_change_nothing(
    client: TestClient, register: Callable[[Any, str], Headers]
) -> None:
    hal, bob = register(client, "hal"), register(client, "bob")
    table = client.post("/tables", json={"entry": "classic", "players": 4}, headers=hal).json()[
        "id"
    ]
    client.post(f"/tables/{table}/seats", json={"seat": 1}, headers=bob)
    before = client.get(f"/tables/{table}").json()

    def refused(headers: Headers, body: dict[str, Any], status: int) -> str:
        answer = client.post(f"/tables/{table}/seats", json=body, headers=headers)
        assert answer.status_code == status, answer.text
        return str(answer.json()["error"]["code"])

    assert refused(bob, {"seat": 2, "bot": "basic"}, 403) == "R-SEAT-3"  # not the host
    assert refused(hal, {"seat": 2, "bot": "grandmaster"}, 400) == "bot_level_unknown"
    assert refused(hal, {"seat": 1, "bot": "basic"}, 400) == "R-SEAT-5"  # bob's seat
    assert refused(hal, {"seat": 2, "bot": ""}, 422) == "malformed"
    assert client.get(f"/tables/{table}").json() == before
    answer = client.post("/tables/practice", json={"bot": "grandmaster"}, headers=bob)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "bot_level_unknown"
    answer = client.post("/tables/practice", json={"players": 7}, headers=bob)
    assert answer.status_code == 422
    assert client.post("/tables/practice", json={}).status_code == 401
    for seat in (0, 2, 3):
        client.post(f"/tables/{table}/seats", json={"seat": seat, "bot": "basic"}, headers=hal)
    # A bot asked for a bot's seat: the seat is taken (not "you already have a seat", said
    # to a host who has none, because a bot of that level there has the same name).
    answer = client.post(f"/tables/{table}/seats", json={"seat": 0, "bot": "basic"}, headers=hal)
    assert answer.status_code == 400
    assert answer.json()["error"] == {
        "code": "R-SEAT-5",
        "message": "seat 0 is taken",
        "key": "seat.taken",
        "params": {"seat": 0},
    }
    assert client.post(f"/tables/{table}/start", headers=hal).status_code == 201
    assert refused(hal, {"seat": 2, "bot": "basic"}, 400) == "R-SEAT-5"  # the game started


def test_a_practice_table_in_one_call(
    make_client: Callable[..., TestClient], register: Callable[[Any, str], Headers]
) -> None:
    client = make_client(run_bots=False)  # nobody plays the bots: the table as it starts
    ann = register(client, "ann")
    for entry, players, seats in (
        ("classic", 4, ["ann", "bot:basic:1", "bot:basic:2", "bot:basic:3"]),
        ("classic", 2, ["ann", "bot:random:1"]),
        ("extra_six", 6, ["ann", *(f"bot:random:{s}" for s in range(1, 6))]),
    ):
        level = seats[1].split(":")[1]
        body = {"entry": entry, "players": players, "bot": level}
        answer = client.post("/tables/practice", json=body, headers=ann)
        assert answer.status_code == 201, answer.text
        table, deal = answer.json()["table"], answer.json()["deal"]
        view = client.get(f"/tables/{table}").json()
        assert view["host"] == "ann" and view["status"] == "playing"
        assert view["seats"] == seats and view["current_deal"] == deal
        if players == 6:
            assert view["sides"]["A"] == [0, 2, 4]  # teams alternate round the room
        assert client.get(f"/deals/{deal}", headers=ann).json()["hand"] is not None


def test_a_practice_table_keeps_the_turn_clock_of_its_body(
    make_client: Callable[..., TestClient], register: Callable[[Any, str], Headers]
) -> None:
    """``turn_seconds`` is part of the body of POST /tables that practice takes (the lobby's
    Play now sends the create form's clock): kept, not silently dropped; refused as there."""
    client = make_client(run_bots=False)
    ann = register(client, "ann")
    body = {"entry": "classic", "players": 2, "bot": "random", "turn_seconds": 60}
    answer = client.post("/tables/practice", json=body, headers=ann)
    assert answer.status_code == 201, answer.text
    table, deal = answer.json()["table"], answer.json()["deal"]
    assert client.get(f"/tables/{table}").json()["turn_seconds"] == 60
    listed = {row["id"]: row for row in client.get("/tables?status=playing").json()}
    assert listed[table]["turn_seconds"] == 60
    assert "deadline" in client.get(f"/deals/{deal}").json()  # a deal at a table with a clock
    too_short = client.post("/tables/practice", json={**body, "turn_seconds": 1}, headers=ann)
    assert too_short.status_code == 400, too_short.text
    assert too_short.json()["error"]["code"] == "R-SEAT-3"
    assert len(client.get("/tables?status=playing").json()) == 1  # nothing more was opened


def test_bots_at_a_private_table_and_in_its_rematch(
    make_client: Callable[..., TestClient], register: Callable[[Any, str], Headers]
) -> None:
    client = make_client(run_bots=False)
    hal = register(client, "hal")
    body = {"entry": "classic", "players": 2, "private": True}
    table = client.post("/tables", json=body, headers=hal).json()["id"]
    # The host seats a bot without the invite code: the bot is his guest.
    answer = client.post(f"/tables/{table}/seats", json={"seat": 1, "bot": "basic"}, headers=hal)
    assert answer.status_code == 200, answer.text
    client.post(f"/tables/{table}/seats", json={"seat": 0}, headers=hal)
    assert client.post(f"/tables/{table}/start", headers=hal).status_code == 201
    assert client.post(f"/tables/{table}/stop", headers=hal).status_code == 200
    rematch = client.post(f"/tables/{table}/rematch", headers=hal)
    assert rematch.status_code == 201, rematch.text
    view = client.get(f"/tables/{rematch.json()['id']}", headers=hal).json()
    assert view["seats"] == ["hal", "bot:basic:1"] and view["bots"] == [None, "basic"]
    # A private practice table: unlisted.
    body = {"entry": "classic", "players": 2, "bot": "random", "private": True}
    practice = client.post("/tables/practice", json=body, headers=hal).json()["table"]
    assert client.get(f"/tables/{practice}", headers=hal).json()["private"] is True
    listed = client.get("/tables", params={"status": "playing"}).json()
    assert practice not in [t["id"] for t in listed]
