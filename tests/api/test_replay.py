"""Replays: ``GET /deals/{id}/replay?step=N`` (R-HIST-2, with R-VIEW-1..4 and R-SEAT-4).

A whole deal is played through HTTP (in process, in-memory store) by the random legal player,
from a deck stacked by a seed so that it is the same deal every run; then, for every step N of it, each viewer's replay must equal the deal rebuilt from the store at
that step (``canasta.get_deal(id, version=N)``) passed through ``deal_view`` for that viewer: a
seated player sees his own hand as it was at step N and no other, a spectator (or a player who
asks ``?as=spectator``, or one sitting the deal out) no hand at all, and nobody the stock.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from typing import Any
from uuid import UUID

import pytest
from fastapi.testclient import TestClient

from app.application import CanastaApp
from domain.deal import Deal
from domain.state import DealState
from projections.visibility import Viewer, deal_view
from tests.support.games import stacked_deck
from tests.support.http import Game, open_table, state_reader

Played = tuple[Game, CanastaApp, int]


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    """A started client on the in-memory store that takes stacked decks."""
    return make_client(allow_stacked_decks=True)


def play_whole_deal(
    client: TestClient, names: tuple[str, ...], seed: int, dealer: int = 0, **table: Any
) -> Played:
    """A deal dealt by ``dealer`` from a deck stacked by ``seed``, played to its end by the
    random legal player seeded by ``seed``: the same deal every run (a server shuffle would
    make it differ from run to run, and a short one might not change the hands often enough
    for the test of R-VIEW-1 below)."""
    start = {"deck": stacked_deck(f"replay deck {seed}"), "dealer": dealer}
    game = open_table(client, names, start_body=start, **table)
    canasta: CanastaApp = client.app.state.canasta  # type: ignore[attr-defined]
    game.play_deal(state_reader(canasta), random.Random(seed))
    assert game.deal is not None
    final = canasta.get_deal(UUID(game.deal)).version
    return game, canasta, final


@pytest.fixture
def played(client: TestClient) -> Played:
    """A finished four-player classic deal, with its final step."""
    return play_whole_deal(client, ("ann", "bob", "cyd", "dee"), seed=21)


def expected(
    canasta: CanastaApp, deal: str, step: int, viewer: Viewer, then: Deal | None = None
) -> dict[str, Any]:
    """What ``viewer`` must get for step ``step``: ``deal_view`` of the deal rebuilt then
    (``then``, if given, is that rebuilt deal)."""
    then = then or canasta.get_deal(UUID(deal), version=step)
    view = deal_view(then.state, viewer)
    view.update(id=deal, table=then.state.table_id, step=then.version)
    result: dict[str, Any] = json.loads(json.dumps(view))
    return result


def replay(
    client: TestClient, game: Game, step: Any, name: str | None = None, **params: Any
) -> Any:
    headers = game.headers[name] if name is not None else {}
    return client.get(
        f"/deals/{game.deal}/replay", params={"step": step, **params}, headers=headers
    )


def state_at(canasta: CanastaApp, deal: str, step: int) -> DealState:
    return canasta.get_deal(UUID(deal), version=step).state


def secret_cards(st: DealState, seen_by: int | None) -> set[str]:
    """The cards at this step in the stock and in every hand but ``seen_by``'s."""
    cards = set(st.stock)
    for seat in st.order:
        if seat != seen_by:
            cards.update(st.hands[seat])
    return cards


def shown(view: dict[str, Any], cards: set[str]) -> list[str]:
    text = json.dumps(view)
    return sorted(card for card in cards if f'"{card}"' in text)


def steps(final: int) -> Iterator[int]:
    return iter(range(1, final + 1))


def test_r_hist_2_a_replay_at_every_step_is_the_state_rebuilt_then_as_each_viewer_sees_it(
    client: TestClient, played: Played
) -> None:
    game, canasta, final = played
    assert game.deal is not None
    for step in steps(final):
        then = canasta.get_deal(UUID(game.deal), version=step)
        assert then.version == step
        spectator = expected(canasta, game.deal, step, Viewer.spectator(), then)
        response = replay(client, game, step)
        assert response.status_code == 200, response.text
        assert response.json() == spectator
        for seat, name in enumerate(game.names):
            mine = replay(client, game, step, name).json()
            assert mine == expected(canasta, game.deal, step, Viewer.player(seat), then), step
            assert replay(client, game, step, name, **{"as": "spectator"}).json() == spectator


def test_r_hist_2_a_players_replay_shows_his_hand_at_that_step_and_no_other_hand_r_view_1(
    client: TestClient, played: Played
) -> None:
    game, canasta, final = played
    assert game.deal is not None
    hands_changed = 0
    previous = None
    for step in steps(final):
        st = state_at(canasta, game.deal, step)
        hands_changed += previous is not None and previous != st.hands
        previous = st.hands
        for seat, name in enumerate(game.names):
            view = replay(client, game, step, name).json()
            assert view["seat"] == seat and view["step"] == step
            assert view["hand"] == sorted(st.hands[seat]), "his hand as it was at that step"
            assert "hands" not in view and "stock" not in view
            assert not shown(view, secret_cards(st, seat)), f"step {step}: another seat's cards"
    assert hands_changed > 10, "the replays covered hands that change"


def test_r_hist_2_a_spectators_replay_shows_no_hand_and_no_stock_at_any_step_r_view_4(
    client: TestClient, played: Played
) -> None:
    game, canasta, final = played
    assert game.deal is not None
    for step in steps(final):
        st = state_at(canasta, game.deal, step)
        views = [replay(client, game, step).json()]
        views.append(replay(client, game, step, game.names[1], **{"as": "spectator"}).json())
        for view in views:
            assert view["hand"] is None and view["seat"] is None
            assert "hands" not in view and "stock" not in view
            assert not shown(view, secret_cards(st, None)), f"step {step}: a private card"
            assert view["hand_counts"] == {str(s): len(st.hands[s]) for s in st.order}


def test_r_hist_2_a_replay_past_the_end_is_the_final_state(
    client: TestClient, played: Played
) -> None:
    game, canasta, final = played
    assert game.deal is not None
    at_end = expected(canasta, game.deal, final, Viewer.spectator())
    assert at_end["phase"] == "over" and at_end["scores"]
    for step in (final, final + 1, final + 1000, 10**9):
        response = replay(client, game, step)
        assert response.status_code == 200, response.text
        assert response.json() == at_end
    mine = replay(client, game, final + 1, game.names[3]).json()
    assert mine == expected(canasta, game.deal, final, Viewer.player(3))


def test_r_hist_2_a_replay_needs_a_positive_whole_step(client: TestClient, played: Played) -> None:
    game, _canasta, _final = played
    for step in (0, -1, -1000, "x", "1.5", "", 10**9 + 1):
        response = replay(client, game, step)
        assert response.status_code == 422, (step, response.text)
        assert response.json()["error"]["code"] == "malformed"
    response = client.get(f"/deals/{game.deal}/replay")
    assert response.status_code == 422
    missing = "00000000-0000-0000-0000-000000000000"
    assert client.get(f"/deals/{missing}/replay", params={"step": 1}).status_code == 404
    # An id that is not one: said once, though the route and its checks all read it.
    bad = client.get("/deals/not-a-deal/replay", params={"step": 1})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "malformed"
    message = bad.json()["error"]["message"]
    assert message.startswith("path.deal_id: Input should be a valid UUID"), message
    assert message.count("path.deal_id") == 1, message


def test_r_hist_2_a_player_sitting_the_deal_out_replays_it_as_a_spectator_r_seat_4(
    client: TestClient,
) -> None:
    names = ("ann", "bob", "cyd", "dee", "eve", "fay")
    # Seats 0 and 1 sit the first deal out (R-SEAT-4): seat 2 deals it.
    game, canasta, final = play_whole_deal(client, names, seed=22, dealer=2, teams=[[0, 2, 4]])
    assert game.deal is not None
    order = state_at(canasta, game.deal, 1).order
    sitting_out = [seat for seat in range(6) if seat not in order]
    assert len(sitting_out) == 2
    for step in (1, final // 2, final):
        st = state_at(canasta, game.deal, step)
        for seat in sitting_out:
            view = replay(client, game, step, game.names[seat]).json()
            assert view["hand"] is None and view["seat"] is None
            assert view == expected(canasta, game.deal, step, Viewer.player(seat))
            assert not shown(view, secret_cards(st, None))
        for seat in order:
            view = replay(client, game, step, game.names[seat]).json()
            assert view["hand"] == sorted(st.hands[seat])
