"""Over HTTP, in process (docs/tables.md): the lobby shows each table's turn clock and the
seats the bot plays for absent players; while the host is away a present player opens the
next deal (recorded with who opened it), nobody else may; the host's own seat is never given
away (409 ``host_seat``). Refusals change nothing. (With nobody present, the bots process
opens it: tests/e2e/test_host_away.py.)"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient

from tests.support.http import open_table, register_player, state_reader
from tests.support.openapi import sse_messages

Headers = dict[str, str]


def lobby_row(client: TestClient, table: str, status: str) -> dict[str, Any]:
    (row,) = [t for t in client.get(f"/tables?status={status}").json() if t["id"] == table]
    return dict(row)


def test_the_lobby_shows_the_clock_and_the_away_seats(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(run_bots=False)
    game = open_table(client, ["ann", "bob"], start=False, table={"turn_seconds": 60})
    row = lobby_row(client, game.table, "open")
    assert row["turn_seconds"] == 60 and row["away"] == []
    clock = f"/tables/{game.table}/clock"
    assert client.put(clock, json={"turn_seconds": None}, headers=game.host).status_code == 200
    assert lobby_row(client, game.table, "open")["turn_seconds"] is None
    assert client.put(clock, json={"turn_seconds": 120}, headers=game.host).status_code == 200
    game.start()
    client.post(f"/tables/{game.table}/leave", headers=game.headers["bob"])
    row = lobby_row(client, game.table, "playing")
    assert row["turn_seconds"] == 120 and row["away"] == [1]
    assert (
        row["seats"] == ["ann", "bob"]
        and row["version"] == client.get(f"/tables/{game.table}").json()["version"]
    )
    assert client.post(f"/tables/{game.table}/seats", json={}, headers=game.headers["bob"]).json()
    assert lobby_row(client, game.table, "playing")["away"] == []


def test_while_the_host_is_away_a_present_player_opens_the_next_deal(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(run_bots=False)
    game = open_table(client, ["ann", "bob", "cy", "di"])
    game.play_deal(state_reader(client.app.state.canasta), random.Random(7))  # type: ignore[attr-defined]
    deals = f"/tables/{game.table}/deals"

    def refused(path: str, who: str, status: int, body: Any = None) -> str:
        before = client.get(f"/tables/{game.table}").json()
        answer = client.post(path, json=body, headers=game.headers[who])
        assert answer.status_code == status, answer.text
        assert client.get(f"/tables/{game.table}").json() == before
        return str(answer.json()["error"]["code"])

    assert refused(deals, "bob", 403) == "R-SEAT-3"  # the host is here: his alone
    left = client.post(f"/tables/{game.table}/leave", headers=game.host).json()
    assert left == {"seat": 0, "played_by": "bot:basic:0:for:ann"}
    assert lobby_row(client, game.table, "playing")["away"] == [0]
    register_player(client, "eve")
    give = f"/tables/{game.table}/seats/0/give"
    assert refused(give, "ann", 409, {"player": "eve"}) == "host_seat"
    client.post(f"/tables/{game.table}/leave", headers=game.headers["cy"])
    assert refused(deals, "cy", 403) == "R-SEAT-3"  # away himself

    opened = client.post(deals, headers=game.headers["bob"])
    assert opened.status_code == 201, opened.text
    table = client.get(f"/tables/{game.table}").json()
    assert table["current_deal"] == opened.json()["deal"] and len(table["deals"]) == 2
    assert lobby_row(client, game.table, "playing")["deals"] == 2
    assert refused(deals, "di", 400) == "R-GAME-1"  # the new deal is not over
    client.post(f"/tables/{game.table}/stop", headers=game.host)
    stream = client.get(f"/tables/{game.table}/stream")
    events = [m.data for m in sse_messages(stream.text) if m.event not in (None, "end")]
    assert [e["by"] for e in events if e["kind"] == "DealOpened"] == ["ann", "bob"]
