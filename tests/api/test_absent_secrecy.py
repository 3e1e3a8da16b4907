"""Secrecy for a player away from his seat (docs/tables.md, R-VIEW-1..3): the cards the bot
draws for his seat while he is away, and still holds, appear in no answer he gets (the deal,
its history, its stream (one left open across his leave too), its replay, the logs, the move
menu); once he takes the seat back they are his hand again."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from uuid import UUID

from fastapi.testclient import TestClient

from app.application import CanastaApp
from tests.api.secrecy_support import card_tokens, fetch, sse_messages
from tests.support.games import play_commands

Headers = dict[str, str]


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


def test_a_player_away_sees_none_of_what_the_bot_draws_for_him(
    make_client: Callable[..., TestClient], register: Callable[[Any, str], Headers]
) -> None:
    client = make_client(run_bots=False)  # the test plays every seat itself
    canasta: CanastaApp = client.app.state.canasta  # type: ignore[attr-defined]
    people = {name: register(client, name) for name in ("ann", "bob", "cy", "di")}
    bob = people["bob"]
    table = client.post(
        "/tables", json={"entry": "classic", "players": 4}, headers=people["ann"]
    ).json()["id"]
    for seat, headers in enumerate(people.values()):
        client.post(f"/tables/{table}/seats", json={"seat": seat}, headers=headers)
    deal_id = UUID(client.post(f"/tables/{table}/start", headers=people["ann"]).json()["deal"])
    rng = random.Random(8)
    play_commands(canasta, deal_id, rng, 8)
    # His stream, open across the leave (read in a thread until it has been quiet a while).
    base = f"/deals/{deal_id}"
    with ThreadPoolExecutor(1) as pool:
        live = pool.submit(fetch, client, f"{base}/stream", headers=bob, idle_seconds=2.0)
        time.sleep(0.5)
        assert client.post(f"/tables/{table}/leave", headers=bob).status_code == 200
        left = canasta.get_deal(deal_id).version
        # The bot plays seat 1 among the others, until it holds a card drawn since.
        for _ in range(200):
            deal = play_commands(canasta, deal_id, rng, 1)
            assert deal.state.phase != "over", "the deal ended first: choose another seed"
            hidden = held_since(canasta, deal_id, left)
            if hidden:
                break
        streamed = live.result(timeout=30)
    assert f"id: {deal.version}" in streamed.text, "the open stream did not follow the deal"
    own = [m for m in sse_messages(streamed.text) if m.get("event") == "CardsDealt"]
    assert own and json.loads(own[0]["data"])["cards"], "before his leave he saw his cards"
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
