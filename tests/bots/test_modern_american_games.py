"""``basic`` against ``random`` in modern_american: every game ends (issue 17's arena target:
no unfinished game). Game 15 of the arena's seed 1 once stalled for 60 deals: ``basic``'s
side, needing 180 points from the hand to open from 5,000 up, opened in only about half of
its deals and drifted around its total (docs/bots.md, "Measured")."""

from __future__ import annotations

import random

import pytest

from app.arena import MAX_DEALS, Setup, play_game
from bots import basic, seat_view
from domain.cards import CARDS, points
from domain.commands import Meld
from domain.constants import PLAY
from domain.menu import menu
from domain.rules import decide as rules_decide
from domain.state import DealState
from tests.bots.test_strong import moments

SETUP = Setup("modern_american", 4, ("basic", "random"), games=60, seed=1)


def test_the_game_that_stalled_ends_and_basic_wins() -> None:
    result = play_game(SETUP, 15)
    assert result.finished, f"still going after {result.deals} deals"
    assert result.winners == ["basic"]
    assert result.deals < MAX_DEALS


@pytest.mark.parametrize("seed", [2, 3, 4])
def test_games_of_other_seeds_end(seed: int) -> None:
    """A few more games (both seatings of the levels): each ends, well within the cap."""
    setup = Setup("modern_american", 4, ("basic", "random"), games=2, seed=seed)
    for number in (0, 1):
        result = play_game(setup, number)
        assert result.finished and result.winners == ["basic"], (seed, number, result.deals)
        assert result.deals <= MAX_DEALS // 2, (seed, number, result.deals)


def give(state: DealState, seat: int, cards: list[str]) -> None:
    """Make ``cards`` the seat's hand, swapping each with a card of another hand or the
    stock, so the deal still holds every card once."""
    hand = state.hands[seat]
    assert len(cards) == len(hand)
    places = [state.stock] + [state.hands[s] for s in range(state.players) if s != seat]
    for card in cards:
        if card in hand:
            continue
        place = next(p for p in places if card in p)
        spare = next(c for c in hand if c not in cards)
        place[place.index(card)] = spare
        hand[hand.index(spare)] = card


def test_basic_opens_at_180_keeping_a_clean_meld() -> None:
    """From 5,000 points the initial meld needs 180 from the hand and a clean meld
    (R-MA-INIT-1, R-MA-INIT-2). With K K K, A A, J J, 9 9, three 2s and a joker, ``basic``
    gives the joker to a pair (9 9 + joker: 70) rather than to the kings, which stay clean:
    200 points, an opening the rules accept."""
    state, seat, memory = next(
        (s, seat, m)
        for s, seat, m in moments("modern_american")
        if seat >= 0 and s.phase == PLAY and len(s.hands[seat]) == 14
    )
    state = state.clone()
    side = state.side_of[seat]
    state.scores_before[side] = 5000
    hand = ["2C/1", "2S/1", "2S/2", "9H/1", "9S/1", "AC/1", "AD/1", "BJ/1"]
    hand += ["JC/1", "JD/1", "KD/2", "KH/1", "KS/1", "5H/1"]
    give(state, seat, hand)
    view, options = seat_view(state, seat, memory, 8500), menu(state, seat)
    assert options.initial_minimum_left == 180
    move = basic.decide(view, options, random.Random(0))
    assert isinstance(move, Meld), move
    cards = [c for spec in move.melds for c in spec.cards]
    assert points(cards) >= 180
    assert any(all(CARDS[c].is_natural for c in spec.cards) for spec in move.melds)
    assert rules_decide(state, seat, move)  # accepted on the real deal
