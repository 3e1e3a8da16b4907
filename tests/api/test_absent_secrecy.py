"""Secrecy for a player away from his seat (docs/tables.md, R-VIEW-1..3): the cards the bot
draws for his seat while he is away, and still holds, appear in no answer he gets (the deal,
its history, its stream (one left open across his leave too), its replay, the logs, the move
menu); once he takes the seat back they are his hand again."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from uuid import UUID

import pytest
from fastapi.testclient import TestClient

from app.application import CanastaApp
from tests.api.secrecy_support import card_tokens, fetch
from tests.support.games import play_commands, stacked_deck
from tests.support.http import Game, open_table
from tests.support.openapi import sse_messages

Headers = dict[str, str]


def started(client: TestClient, **table: Any) -> tuple[Game, UUID]:
    """A classic table of ann, bob, cy and di (``table``: more fields of ``POST /tables``)
    started on a deck fixed in advance: the same deal every run, so that it lasts as long as
    the test needs it (a server's shuffle once ended it first: a failed CI run)."""
    start = {"deck": stacked_deck(DECK_SEED), "dealer": 0}
    game = open_table(client, ("ann", "bob", "cy", "di"), start_body=start, table=table)
    return game, UUID(game.deal_id)


#: The deck the tests' games are dealt from (``start``).
DECK_SEED = 1

#: How long a stream left open while the test plays on may be read: the test stops reading
#: once it has the deal's last step, so this bounds only a stream that never gets there (a busy
#: machine may take seconds to play the bot's turns, longer than ``fetch``'s usual limits).
STREAM_SECONDS = 120.0


def read_until(last: list[int]) -> dict[str, Any]:
    """``fetch``'s arguments for a stream read until it sends the step put into ``last``."""
    return {
        "target_step": lambda: last[0] if last else None,
        "idle_seconds": STREAM_SECONDS,
        "total_seconds": STREAM_SECONDS,
    }


def held_since(canasta: CanastaApp, deal_id: UUID, step: int) -> set[str]:
    """The cards seat 1 drew after ``step`` and holds now."""
    events: list[Any] = list(canasta.events.get(deal_id, gt=step))
    drawn = {
        card
        for event in events
        if type(event).__name__ == "CardsDrawn" and event.seat == 1
        for card in event.cards
    }
    return drawn & set(canasta.get_deal(deal_id).state.hands[1])


def until_the_bot_holds_a_card_drawn_since(
    canasta: CanastaApp, deal_id: UUID, rng: random.Random, step: int
) -> tuple[Any, set[str]]:
    """Plays on, a command at a time (the bot plays seat 1), until seat 1 holds a card drawn
    after ``step``; the deal then, and those cards."""
    for _ in range(200):
        deal = play_commands(canasta, deal_id, rng, 1)
        assert deal.state.phase != "over", "the deal ended first: choose another seed"
        hidden = held_since(canasta, deal_id, step)
        if hidden:
            return deal, hidden
    raise AssertionError("the bot drew nothing that it still holds")


def test_a_player_away_sees_none_of_what_the_bot_draws_for_him(
    make_client: Callable[..., TestClient], register: Callable[[Any, str], Headers]
) -> None:
    client = make_client(run_bots=False, allow_stacked_decks=True)  # it plays every seat
    canasta: CanastaApp = client.app.state.canasta  # type: ignore[attr-defined]
    game, deal_id = started(client)
    people, table = game.headers, game.table
    bob = people["bob"]
    rng = random.Random(8)
    play_commands(canasta, deal_id, rng, 8)
    # His stream, open across the leave (read in a thread until it has been quiet a while).
    base = f"/deals/{deal_id}"
    last: list[int] = []  # the deal's last step, once played
    with ThreadPoolExecutor(1) as pool:
        live = pool.submit(fetch, client, f"{base}/stream", headers=bob, **read_until(last))
        time.sleep(0.5)
        assert client.post(f"/tables/{table}/leave", headers=bob).status_code == 200
        left = canasta.get_deal(deal_id).version
        # The bot plays seat 1 among the others, until it holds a card drawn since.
        deal, hidden = until_the_bot_holds_a_card_drawn_since(canasta, deal_id, rng, left)
        last.append(deal.version)
        streamed = live.result(timeout=STREAM_SECONDS + 10)
    assert f"id: {deal.version}" in streamed.text, "the open stream did not follow the deal"
    own = [m for m in sse_messages(streamed.text) if m.event == "CardsDealt"]
    assert own and own[0].data["cards"], "before his leave he saw his cards"
    assert hidden, "the bot drew nothing that it still holds"

    answers = [
        streamed,
        fetch(client, base, headers=bob),
        fetch(client, f"{base}/events", headers=bob),
        fetch(client, f"{base}/stream", headers=bob, target_step=deal.version),
        fetch(client, f"{base}/replay", query={"step": deal.version}, headers=bob),
        fetch(client, f"{base}/moves", headers=bob),
        fetch(client, f"{base}/draw-log", headers=bob),
        fetch(client, f"{base}/discard-log", headers=bob),
        fetch(client, f"/tables/{table}", headers=bob),
    ]
    assert answers[3].complete, "the stream did not reach the deal's step"
    assert answers[5].status == 403 and "seat_not_yours" in answers[5].text
    for answer in answers:
        assert not hidden & set(card_tokens(answer.text)), answer.text[:300]

    assert client.post(f"/tables/{table}/seats", json={}, headers=bob).status_code == 200
    hand = client.get(base, headers=bob).json()["hand"]
    assert hidden <= set(hand)  # his seat's hand, the bot's draws included


def test_a_draw_log_holds_only_the_draws_made_while_its_reader_played_the_seat(
    make_client: Callable[..., TestClient], register: Callable[[Any, str], Headers]
) -> None:
    """R-VIEW-3 with seats changing players (docs/tables.md): the draw log, like the history
    and the replays, shows a draw only to whoever played the seat when it was made. Bob back
    from a leave does not get the bot's draws of his absence; eve, given the seat, gets none
    of the draws made there before her (bob's, the bot's)."""
    client = make_client(run_bots=False, allow_stacked_decks=True)  # it plays every seat
    canasta: CanastaApp = client.app.state.canasta  # type: ignore[attr-defined]
    game, deal_id = started(client)
    people, table = game.headers, game.table
    bob, eve = people["bob"], register(client, "eve")
    rng = random.Random(8)
    drawn: set[int] = set()  # the steps of seat 1's draws so far

    def next_draws() -> set[int]:
        """Plays until seat 1 has drawn again; the steps of its new draws."""
        for _ in range(300):
            deal = play_commands(canasta, deal_id, rng, 1)
            assert deal.state.phase != "over", "the deal ended first: choose another seed"
            events: list[Any] = list(canasta.events.get(deal_id))
            steps = {
                event.originator_version
                for event in events
                if type(event).__name__ == "CardsDrawn" and event.seat == 1
            }
            if steps - drawn:
                new = steps - drawn
                drawn.update(new)
                return new
        raise AssertionError("seat 1 drew nothing")

    def logged(headers: Headers) -> set[int]:
        answer = client.get(f"/deals/{deal_id}/draw-log", headers=headers)
        assert answer.status_code == 200, answer.text
        return {row["step"] for row in answer.json()}

    def seen_drawing(headers: Headers) -> set[int]:
        """The steps of the draws whose cards his history shows him (GET /events)."""
        history = client.get(f"/deals/{deal_id}/events", headers=headers).json()
        return {e["step"] for e in history if e["kind"] == "CardsDrawn" and "cards" in e}

    by_bob = next_draws()
    assert client.post(f"/tables/{table}/leave", headers=bob).status_code == 200
    by_bot = next_draws()
    assert client.post(f"/tables/{table}/seats", json={}, headers=bob).status_code == 200
    by_bob |= next_draws()
    assert logged(bob) == by_bob == seen_drawing(bob)  # not the bot's draws (by_bot)

    assert client.post(f"/tables/{table}/leave", headers=bob).status_code == 200
    by_bot |= next_draws()
    given = client.post(
        f"/tables/{table}/seats/1/give", json={"player": "eve"}, headers=people["ann"]
    )
    assert given.status_code == 200, given.text
    by_eve = next_draws()
    assert logged(eve) == by_eve == seen_drawing(eve)  # neither bob's nor the bot's
    assert by_bob.isdisjoint(by_eve) and by_bot.isdisjoint(by_eve) and by_bot


@pytest.mark.parametrize("turn_seconds", [None, 300])
def test_a_stream_resumed_past_the_deal_s_step_follows_the_seat_and_the_clock(
    make_client: Callable[..., TestClient],
    register: Callable[[Any, str], Headers],
    turn_seconds: int | None,
) -> None:
    """A ``Last-Event-ID`` beyond the deal's step (a client's own choice: nothing was sent up
    to there) is taken as the deal's step: the stream then follows who plays the seat, and the
    turn clock, through every event. It skipped the events up to the id unfolded: bob's leave
    went unseen and his stream showed him the cards the bot drew for his seat after it; at a
    table with a clock the stream broke off (OriginatorVersionError) at its first event."""
    client = make_client(run_bots=False, allow_stacked_decks=True)
    canasta: CanastaApp = client.app.state.canasta  # type: ignore[attr-defined]
    game, deal_id = started(client, turn_seconds=turn_seconds)
    people, table = game.headers, game.table
    bob = people["bob"]
    rng = random.Random(8)
    play_commands(canasta, deal_id, rng, 8)
    now = canasta.get_deal(deal_id).version
    resume_after = now + 3  # past the deal's step: bob's leave falls in between
    base = f"/deals/{deal_id}"
    with ThreadPoolExecutor(1) as pool:
        last: list[int] = []
        live = pool.submit(
            fetch,
            client,
            f"{base}/stream",
            headers={**bob, "Last-Event-ID": str(resume_after)},
            **read_until(last),
        )
        time.sleep(0.5)
        assert client.post(f"/tables/{table}/leave", headers=bob).status_code == 200
        left = canasta.get_deal(deal_id).version
        assert left <= resume_after
        deal, hidden = until_the_bot_holds_a_card_drawn_since(canasta, deal_id, rng, resume_after)
        last.append(deal.version)
        streamed = live.result(timeout=STREAM_SECONDS + 10)
    assert hidden, "the bot drew nothing that it still holds"
    assert f"id: {deal.version}" in streamed.text, streamed.text[-500:]  # it followed the deal
    assert not hidden & set(card_tokens(streamed.text)), streamed.text[-500:]
