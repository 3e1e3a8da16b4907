"""Sequence numbers a client can rely on (R-CMD-1, docs/rules/common.md): a number more than
1000 above the sender's last is refused as ``seq_too_far`` and changes nothing, so it can
never lock him out; his last number at a table is readable (``your_last_seq`` of
``GET /tables/{id}``); and the 409s say what happened (``R-CMD-1`` for a used number,
``name_taken`` for a taken name)."""

from __future__ import annotations

from collections.abc import Callable

from fastapi.testclient import TestClient

from domain import commands as c
from domain.command_log import MAX_SEQ_JUMP
from tests.support.http import Game, open_table


def last_seq(game: Game, name: str | None) -> int | None:
    headers = game.headers[name] if name is not None else {}
    response = game.http.get(f"/tables/{game.table}", headers=headers)
    assert response.status_code == 200, response.text
    seq: int | None = response.json()["your_last_seq"]
    return seq


def post(game: Game, name: str, command: c.Command, seq: int) -> tuple[int, dict[str, object]]:
    response = game.http.post(
        f"/deals/{game.deal_id}/commands",
        json=game.request(name, command, seq),
        headers=game.headers[name],
    )
    return response.status_code, response.json()


def event_count(game: Game) -> int:
    return len(game.http.get(f"/deals/{game.deal_id}/events", params={"as": "spectator"}).json())


def test_a_seq_too_far_ahead_is_refused_and_the_player_goes_on(
    make_client: Callable[..., TestClient],
) -> None:
    game = open_table(make_client(allow_stacked_decks=True), start_body={"dealer": 0})
    assert post(game, "bob", c.Cut(30), 1)[0] == 200  # seat 1 cuts
    events = event_count(game)
    for seq in (1 + MAX_SEQ_JUMP + 1, 2**53):
        status, body = post(game, "bob", c.Draw(), seq)  # bob plays first (dealer's left)
        assert status == 409, body
        assert body["error"]["code"] == "seq_too_far"  # type: ignore[index]
        assert event_count(game) == events  # nothing drawn
        assert last_seq(game, "bob") == 1  # nothing recorded: the number is still free
    status, body = post(game, "bob", c.Draw(), 1 + MAX_SEQ_JUMP)  # the farthest allowed
    assert status == 200, body
    assert last_seq(game, "bob") == 1 + MAX_SEQ_JUMP
    assert event_count(game) > events
    # the refused number, now within reach, numbers a new command: it was never used
    view = game.http.get(f"/deals/{game.deal_id}", headers=game.headers["bob"]).json()
    card = view["hand"][0]
    request = game.request("bob", c.Discard(card), 2 + MAX_SEQ_JUMP)
    url, headers = f"/deals/{game.deal_id}/commands", game.headers["bob"]
    first = game.http.post(url, json=request, headers=headers)
    assert first.status_code == 200, first.text
    retry = game.http.post(url, json=request, headers=headers)  # a retry: its first answer
    assert retry.status_code == 200 and retry.json() == {**first.json(), "replayed": True}


def test_the_last_seq_is_readable_at_the_table(make_client: Callable[..., TestClient]) -> None:
    http = make_client()
    game = open_table(http)
    assert last_seq(game, None) is None  # no token: nobody's number
    assert last_seq(game, "ann") == 0  # no command yet
    st_view = game.http.get(f"/deals/{game.deal_id}", headers=game.host).json()
    cutter = game.names[st_view["cutter"]]
    assert post(game, cutter, c.Cut(5), 7)[0] == 200  # numbers may start anywhere up to 1000
    assert last_seq(game, cutter) == 7
    refused = post(game, cutter, c.Cut(5), 9)  # no longer his to cut: refused, and numbered
    assert refused[0] == 400
    assert last_seq(game, cutter) == 9
    used = post(game, cutter, c.Draw(), 8)  # below his last: a used number (R-CMD-1)
    assert used[0] == 409 and used[1]["error"]["code"] == "R-CMD-1"  # type: ignore[index]
    assert last_seq(game, cutter) == 9


def test_a_taken_name_has_its_own_code(client: TestClient) -> None:
    assert client.post("/players", json={"name": "ann"}).status_code == 201
    again = client.post("/players", json={"name": "ann"})
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "name_taken"
