"""The mistakes an API client makes first get an answer that says what to change: a card
named without its deck (the scenario files' short form, docs/scenarios.md, is not the API's),
or a card in no notation at all (R-CARD-1, docs/rules/common.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from domain import commands as c


def cut_and_draw(game: Any) -> str:
    """Cut and draw in ``game``'s deal; returns the name of the player now to meld or discard."""
    view = game.http.get(f"/deals/{game.deal_id}").json()
    assert game.send(game.names[view["cutter"]], c.Cut(40)).status_code == 200
    turn = game.http.get(f"/deals/{game.deal_id}").json()["turn"]
    assert game.send(game.names[turn], c.Draw()).status_code == 200
    name: str = game.names[turn]
    return name


@pytest.mark.parametrize(
    ("card", "told"),
    [
        ("KC", "unknown card 'KC': a card is named with its deck number, e.g. 'KC/1'"),
        ("10S", "unknown card '10S': a card is named with its deck number, e.g. '10S/1'"),
        ("XX/1", "unknown card 'XX/1': a card is RANK SUIT/DECK, e.g. 'QH/2'"),
    ],
)
def test_a_card_without_its_deck_is_told_how_to_name_it_r_card_1(
    client: TestClient, open_game: Callable[..., Any], card: str, told: str
) -> None:
    game = open_game(client, names=["ann", "bob"])
    name = cut_and_draw(game)
    before = client.get(f"/deals/{game.deal_id}").json()["step"]
    for answer in (game.check(name, c.Discard(card)), game.send(name, c.Discard(card))):
        error = answer.json()["error"]
        assert error["code"] == "R-CARD-1"
        assert error["message"].startswith(told), error
    assert client.get(f"/deals/{game.deal_id}").json()["step"] == before  # nothing recorded


def test_a_deal_id_sent_as_expect_game_is_told_to_send_the_table_id_r_cmd_1(
    client: TestClient, open_game: Callable[..., Any]
) -> None:
    """``expect.game`` is the table's id; a client that sends the deal's is told so, not told
    that his command is stale and should be retried as it is (it would never pass)."""
    game = open_game(client, names=["ann", "bob"])
    name = cut_and_draw(game)
    body = game.request(name, c.Discard("KC/1"), seq=None)
    body["expect"]["game"] = game.deal_id
    for path, extra in (("/commands/check", {}), ("/commands", {"seq": 50})):
        answer = client.post(
            f"/deals/{game.deal_id}{path}", json={**body, **extra}, headers=game.headers[name]
        )
        error = answer.json()["error"]  # the dry run: {"accepted": false, "error": ...}
        assert error["code"] == "R-CMD-1", answer.text
        assert error["message"] == (
            f"expect.game is the deal's table, {game.table}, not {game.deal_id}: "
            "send the table's id (the deal view's table)"
        )


def test_the_move_menu_s_expect_is_the_deal_view_s_once_the_deal_is_over(
    client: TestClient, open_game: Callable[..., Any]
) -> None:
    """A client may build ``expect`` from the deal's view or take the menu's: both say the
    same, also once the deal is over (turn null), so a client comparing them sees no change."""
    game = open_game(client, names=["ann", "bob"])
    name = cut_and_draw(game)
    for over in (False, True):
        if over:
            stop = client.post(f"/tables/{game.table}/stop", headers=game.host)
            assert stop.status_code == 200, stop.text
        view = client.get(f"/deals/{game.deal_id}", headers=game.headers[name]).json()
        menu = client.get(f"/deals/{game.deal_id}/moves", headers=game.headers[name]).json()
        assert (view["phase"] == "over") is over
        assert menu["expect"] == game.request(name, c.Draw(), seq=None)["expect"]


@pytest.mark.parametrize("lane", [True, False], ids=["lane", "route"])
@pytest.mark.parametrize("scheme", ["", "Token ", "bearer: "])
def test_a_token_sent_without_bearer_is_told_the_header_s_form_r_cmd_2(
    make_client: Callable[..., TestClient], open_game: Callable[..., Any], scheme: str, lane: bool
) -> None:
    """``Authorization: <token>`` (or another scheme) on a route that needs a player: 401
    R-CMD-2 saying how the header is written, not "this needs a bearer token" to a client
    who believes he sent one."""
    client = make_client(command_lane=lane)
    game = open_game(client, names=["ann", "bob"])
    name = cut_and_draw(game)
    token = game.headers[name]["Authorization"].removeprefix("Bearer ")
    headers = {"Authorization": f"{scheme}{token}"}
    body = game.request(name, c.Discard("KC/1"), seq=50)
    for answer in (
        client.get("/me", headers=headers),
        client.post(f"/deals/{game.deal_id}/commands", json=body, headers=headers),
    ):
        assert answer.status_code == 401, answer.text
        assert answer.json()["error"] == {
            "code": "R-CMD-2",
            "message": "the Authorization header is not 'Bearer <token>': send the token of "
            "POST /players as 'Authorization: Bearer <token>'",
        }
        assert token not in answer.text


@pytest.mark.parametrize("lane", [True, False], ids=["lane", "route"])
def test_a_name_or_card_out_of_its_pattern_is_told_the_form_in_words(
    make_client: Callable[..., TestClient], open_game: Callable[..., Any], lane: bool
) -> None:
    """A name in another script (the pages are in Russian and Thai too) and a card in lower
    case are 422 ``malformed`` saying what the value should be, not a regular expression."""
    client = make_client(command_lane=lane)
    game = open_game(client, names=["ann", "bob"])
    name = cut_and_draw(game)
    for player in ("Zoë", "Сергей", "a b"):
        answer = client.post("/players", json={"name": player})
        assert answer.status_code == 422
        assert answer.json()["error"] == {
            "code": "malformed",
            "message": "body.name: a name is 1 to 32 ASCII letters, digits, '.', '_' or '-' "
            "(R-CMD-2)",
        }
    body = game.request(name, c.Discard("qh/1"), seq=50)
    answer = client.post(f"/deals/{game.deal_id}/commands", json=body, headers=game.headers[name])
    assert answer.status_code == 422
    assert answer.json()["error"]["message"] == (
        "body.command.discard.card: a card is written in capitals, rank and suit then its "
        "deck: 'QH/2', '10S/1', 'BJ/1' (R-CARD-1)"
    )


def test_a_command_for_another_deal_is_told_which_deal_this_is_r_cmd_1(
    client: TestClient, open_game: Callable[..., Any]
) -> None:
    """``expect.deal`` 2 sent to deal 1's id (a client that kept the old deal's address) is
    not "stale ... reload and retry", which could never pass: the deal's number never
    changes. The answer names the deal and where the current one is."""
    game = open_game(client, names=["ann", "bob"])
    name = cut_and_draw(game)
    body = game.request(name, c.Discard("KC/1"), seq=50)
    body["expect"]["deal"] = 2
    answer = client.post(f"/deals/{game.deal_id}/commands", json=body, headers=game.headers[name])
    assert answer.status_code == 409
    assert answer.json()["error"] == {
        "code": "R-CMD-1",
        "message": "this is deal 1 of its table, not deal 2: send the command to the deal it "
        "is meant for (the table's current_deal)",
        "key": "stale.deal",
        "params": {"deal": 1, "believed": 2},
    }


def test_a_corrected_command_under_a_refused_one_s_number_is_told_the_last_number_r_cmd_1(
    client: TestClient, open_game: Callable[..., Any]
) -> None:
    """A refused command uses its sequence number; a client that corrects the command and
    sends it again under that number learns his last number, to go on above it."""
    game = open_game(client, names=["ann", "bob"])
    name = cut_and_draw(game)
    first = game.send(name, c.Discard("KS/9"))  # refused: no such card
    assert first.status_code == 400
    used = game.seqs[name]
    body = game.request(name, c.Discard("KC/1"), seq=used)
    answer = client.post(f"/deals/{game.deal_id}/commands", json=body, headers=game.headers[name])
    assert answer.status_code == 409
    assert answer.json()["error"] == {
        "code": "R-CMD-1",
        "message": f"sequence number {used} was used for a different command: your last was "
        f"{used}; send a new command under a greater number",
        "key": "seq.other_command",
        "params": {"seq": used, "last": used},
    }


def test_a_card_named_twice_in_one_command_is_told_so_r_cmd_3(
    client: TestClient, open_game: Callable[..., Any]
) -> None:
    """One physical card named twice (a meld built by hand, a card melded and discarded) is
    refused as "named twice", not "you do not hold" a card the player sees in his hand."""
    game = open_game(client, names=["ann", "bob"])
    name = cut_and_draw(game)
    card = client.get(f"/deals/{game.deal_id}", headers=game.headers[name]).json()["hand"][0]
    for command in (
        c.Meld((c.MeldSpec((card, card, card)),)),
        c.Meld((c.MeldSpec((card,), rank="W"),), discard=card),
    ):
        error = game.check(name, command).json()["error"]
        assert error["code"] == "R-CMD-3"
        assert error["message"] == f"{card} is named twice: you hold it once"


def test_a_bare_token_on_a_read_is_refused_not_read_as_a_spectator_r_cmd_2(
    client: TestClient, open_game: Callable[..., Any]
) -> None:
    """``Authorization: <token>`` on ``GET /deals/{id}`` was the spectator's view (hand
    null) without a word; now it is the 401 that says how the header is written. A header of
    another scheme (``Basic``, from a proxy in front) still reads as no token."""
    game = open_game(client, names=["ann", "bob"])
    token = game.host["Authorization"].removeprefix("Bearer ")
    answer = client.get(f"/deals/{game.deal_id}", headers={"Authorization": token})
    assert answer.status_code == 401
    assert answer.json()["error"]["message"].startswith(
        "the Authorization header is not 'Bearer <token>'"
    )
    proxied = client.get(f"/deals/{game.deal_id}", headers={"Authorization": "Basic YTpi"})
    assert proxied.status_code == 200 and proxied.json()["hand"] is None
