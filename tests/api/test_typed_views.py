"""Every answer and every stream message conforms to the schema the served OpenAPI document
declares for it (issue 15, item 3: typed views).

Complete deals of every entry (classic with 2 and 4 players, extra_six, modern_american,
ponytail) are played through the real ASGI app (TestClient) by the random legal player, and
every answer the test receives (every command's, every view's: the deal as each player, as a
spectator and with ``?as=spectator``, the events, replays at several steps, the table, the
lobby, the scores, ``/me``, the draw and discard logs, the audit routes) is validated with
JSON Schema against ``GET /openapi.json`` itself (``tests/support/openapi.py``); so is every
message of every viewer's deal stream and of the table's stream. A second deal is stopped
half-way (``DealAbandoned``, ``GameStopped``); a stacked deck and a game that ends
(``DeckStacked`` for the auditor, ``GameEnded``) are checked too. The document has no untyped
answer: every success of every operation declares the fields of what it sends.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any
from uuid import UUID

import pytest
from fastapi.testclient import TestClient

from app.application import CanastaApp
from app.autoplay import SeededRandom, default_teams
from domain.legal import legal_command, seat_to_act
from tests.support.games import stacked_deck
from tests.support.http import PLAYERS, Game, canasta_of, open_table, register_player, state_reader
from tests.support.openapi import CheckedClient, Contract, untyped

AUDITOR = "audrey"
#: The read routes every game must have had validated (the streams' too).
READ_ROUTES = {
    ("GET", "/deals/{deal_id}"),
    ("GET", "/deals/{deal_id}/events"),
    ("GET", "/deals/{deal_id}/replay"),
    ("GET", "/deals/{deal_id}/discard-log"),
    ("GET", "/deals/{deal_id}/draw-log"),
    ("GET", "/deals/{deal_id}/stream"),
    ("GET", "/tables"),
    ("GET", "/tables/{table_id}"),
    ("GET", "/tables/{table_id}/scores"),
    ("GET", "/tables/{table_id}/stream"),
    ("GET", "/me"),
    ("GET", "/health"),
    ("GET", "/audit/deals/{deal_id}"),
    ("GET", "/audit/deals/{deal_id}/replay"),
    ("GET", "/audit/tables/{table_id}"),
    ("POST", "/deals/{deal_id}/commands"),
    ("POST", "/deals/{deal_id}/commands/check"),
    ("POST", "/tables/{table_id}/seats"),
    ("POST", "/tables/{table_id}/stop"),
}


@pytest.fixture
def checked(make_client: Callable[..., TestClient]) -> CheckedClient:
    """A client of a fresh app (in-memory store, an auditor) whose every answer is checked
    against the app's served OpenAPI document."""
    http = make_client(auditors=[AUDITOR])
    doc = http.get("/openapi.json").json()
    return CheckedClient(http, Contract(doc))


def read_everything(http: CheckedClient, game: Game, auditor: dict[str, str]) -> list[Any]:
    """Every read route about the current deal and the table, as every kind of viewer; every
    answer is checked by ``http``. Returns the events of every viewer's stream."""
    deal, table = game.deal_id, game.table
    spectator_token = {"params": {"as": "spectator"}}
    viewers: list[dict[str, Any]] = [{}]  # anonymous
    viewers += [{"headers": game.headers[name]} for name in game.names]
    viewers.append({"headers": game.headers[game.names[0]], **spectator_token})
    last = http.get(f"/deals/{deal}", headers=auditor).json()["step"]
    shown: list[Any] = []
    for viewer in viewers:
        for path in (f"/deals/{deal}", f"/deals/{deal}/events"):
            assert http.get(path, **viewer).status_code == 200
        params = viewer.get("params", {})
        headers = viewer.get("headers", {})
        for step in sorted({1, 2, 3, 4, last // 2, last - 1, last, last + 5}):
            replay = http.get(
                f"/deals/{deal}/replay", params={**params, "step": step}, headers=headers
            )
            assert replay.status_code == 200
        events = http.get(f"/deals/{deal}/events", params={**params, "after": last // 2})
        assert events.status_code == 200
        shown += http.stream_data(f"/deals/{deal}/stream", **viewer)
    for name in game.names:
        assert http.get(f"/deals/{deal}/draw-log", headers=game.headers[name]).status_code == 200
        assert http.get("/me", headers=game.headers[name]).status_code == 200
    assert http.get(f"/deals/{deal}/discard-log").status_code == 200
    assert http.get(f"/deals/{deal}/discard-log", params={"after": last // 2}).status_code == 200
    assert http.get(f"/tables/{table}").status_code == 200
    assert http.get(f"/tables/{table}/scores").status_code == 200
    for status in ("open", "playing", "finished", "stopped"):
        assert http.get("/tables", params={"status": status}).status_code == 200
    assert http.get("/me", headers=auditor).status_code == 200
    assert http.get("/health").status_code == 200
    assert http.get(f"/audit/deals/{deal}", headers=auditor).status_code == 200
    for step in sorted({1, 2, 3, last // 3, last // 2, last}):
        replay = http.get(f"/audit/deals/{deal}/replay", params={"step": step}, headers=auditor)
        assert replay.status_code == 200
    assert http.get(f"/audit/tables/{table}", headers=auditor).status_code == 200
    return shown


def peeker(http: CheckedClient, game: Game) -> Callable[[int], None]:
    """``after_each`` for ``Game.play_deal``: every few commands, the deal as a spectator,
    the latest events and the draw log of one player, read while the deal is played."""
    deal = game.deal_id

    def peek(sent: int) -> None:
        if sent % 7:
            return
        headers = game.headers[game.names[sent % len(game.names)]]
        assert http.get(f"/deals/{deal}").status_code == 200
        after = {"after": max(0, sent - 10)}
        assert http.get(f"/deals/{deal}/events", params=after, headers=headers).is_success
        assert http.get(f"/deals/{deal}/draw-log", headers=headers).is_success

    return peek


def play_some(game: Game, canasta: CanastaApp, rng: random.Random, commands: int) -> None:
    """``commands`` random legal commands of whoever must act (the deal must not end), each
    tried first as a dry run, whose answer (its ``events`` too) the client checks."""
    for _ in range(commands):
        st = canasta.get_deal(UUID(game.deal_id)).state
        seat = seat_to_act(st)
        assert seat is not None
        command = legal_command(st, seat, rng)
        dry_run = game.check(game.names[seat], command)
        assert dry_run.status_code == 200 and dry_run.json()["accepted"], dry_run.text
        response = game.send(game.names[seat], command)
        assert response.status_code == 200, response.text


ENTRIES = [
    ("classic", 2),
    ("classic", 4),
    ("extra_six", 6),
    ("modern_american", 4),
    ("ponytail", 4),
]


@pytest.mark.slow
@pytest.mark.parametrize(("entry", "players"), ENTRIES, ids=[f"{e}-{n}" for e, n in ENTRIES])
def test_every_answer_and_stream_message_of_whole_deals_matches_the_served_schema(
    checked: CheckedClient, entry: str, players: int
) -> None:
    http = checked
    auditor = register_player(http, AUDITOR)
    names = PLAYERS[:players]
    game = open_table(http, names, entry=entry, teams=default_teams(entry, players), start=False)
    assert http.get(f"/tables/{game.table}").status_code == 200
    canasta = canasta_of(http.http)
    # The server's chance (dealers, shuffle seeds) from a seed too: both deals are the same
    # every run, so the event kinds required below do occur and the second deal outlasts its
    # 12 commands. Still shuffled by the server: the auditor's answers show the seed.
    canasta.random = SeededRandom(random.Random(f"chance:{entry}-{players}"))
    game.start()
    rng = random.Random(f"{entry}-{players}")
    game.play_deal(state_reader(canasta), rng, after_each=peeker(http, game))
    shown = read_everything(http, game, auditor)

    # the next deal, stopped by the host a few commands in: abandoned (R-GAME-2)
    game.next_deal()
    play_some(game, canasta, rng, 12)
    assert http.post(f"/tables/{game.table}/stop", headers=game.host).status_code == 200
    shown += read_everything(http, game, auditor)
    table_events = http.stream_data(f"/tables/{game.table}/stream")
    assert table_events[-2]["kind"] == "GameStopped" and set(table_events[-1]) == {"step"}

    kinds = {data.get("kind") for data in shown}
    expected = {"Started", "CardsDealt", "CardsDrawn", "CardDiscarded"}
    expected |= {"DealScored", "DealAbandoned", "PlayStarted", "DeckCut"}
    if entry != "modern_american":  # its high minimum: a random deal may end with no meld
        expected.add("MeldLaid")
    assert expected <= kinds, expected - kinds
    missing = READ_ROUTES - set(http.contract.checked)
    assert not missing, f"never checked: {missing}"


def test_no_success_answer_of_the_openapi_document_is_untyped(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    problems = []
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            successes = {k: v for k, v in operation["responses"].items() if k.startswith("2")}
            assert successes, f"{method} {path} documents no success"
            for status, answer in successes.items():
                content = answer.get("content", {})
                if status == "204":  # No Content: nothing to type (DELETE /sessions)
                    assert not content, f"{method} {path} 204 declares a body"
                    continue
                assert content, f"{method} {path} {status} has no content"
                for media_type, body in content.items():
                    where = f"{method.upper()} {path} {status} {media_type}"
                    schema = body.get("schema")
                    if not schema:
                        problems.append(f"{where}: no schema")
                        continue
                    problems += [f"{where}: {p}" for p in untyped(doc, schema)]
                    if media_type == "text/event-stream":
                        data = schema["properties"]["data"]["contentSchema"]
                        problems += [f"{where} data: {p}" for p in untyped(doc, data)]
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_a_stacked_deck_and_a_finished_game_match_the_served_schema(
    make_client: Callable[..., TestClient],
) -> None:
    """A prepared deck (tests only: the auditor sees ``DeckStacked``) and a game that ends
    (``GameEnded``, the lobby's finished tables, the winners)."""
    client = make_client(auditors=[AUDITOR], allow_stacked_decks=True)
    http = CheckedClient(client, Contract(client.get("/openapi.json").json()))
    auditor = register_player(http, AUDITOR)
    deck = stacked_deck(3)
    start = {"deck": deck, "dealer": 0, "scores_before": {"A": 9000}}
    game = open_table(http, PLAYERS[:2], start_body=start)
    canasta = canasta_of(client)
    game.play_deal(state_reader(canasta), random.Random(4), after_each=peeker(http, game))
    read_everything(http, game, auditor)
    audit = http.get(f"/audit/deals/{game.deal_id}", headers=auditor).json()
    assert audit["events"][1]["kind"] == "DeckStacked" and audit["audit"]["ok"]
    table = http.get(f"/tables/{game.table}").json()
    assert table["status"] == "finished" and table["winners"] == ["A"]
    table_events = http.stream_data(f"/tables/{game.table}/stream")
    assert table_events[-2]["kind"] == "GameEnded" and set(table_events[-1]) == {"step"}
