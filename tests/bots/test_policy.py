"""``basic``'s knobs (``bots.policy``, docs/bots.md): the ``basic`` level plays its own
hand-set values; ``strong`` plays a tuned set, and that set keeps what a player would
notice: it never goes out when that ends the game with its side behind, and it decides the
same whatever the hidden cards are (``test_secrecy`` runs it too)."""

from __future__ import annotations

import copy
import random
from collections import Counter
from itertools import combinations

import pytest

from bots import PublicMemory, basic, seat_view
from bots.discard import pair_chance
from bots.policy import BASIC, TUNED, Policy, tuned
from domain.cards import CARDS
from domain.commands import AskPartner, Command, Discard, Meld, TakePile
from domain.constants import PLAY
from domain.menu import Menu, menu
from domain.state import DealState
from tests.bots.test_strong import moments


def goes_out(move: Command, hand: int) -> bool:
    """Going out, or asking the partner's leave to (the step before it)."""
    if isinstance(move, AskPartner):
        return True
    if isinstance(move, Discard):
        return hand == 1
    return isinstance(move, Meld) and basic._cards_used(move) == hand


def test_basic_is_the_reference_policy() -> None:
    """The ``basic`` level's knobs are the hand-set ones, and it plays them by default."""
    assert Policy() == BASIC
    for state, seat, memory in moments()[1:-1:7]:
        view, options = seat_view(state, seat, memory, 5000), menu(state, seat)
        assert basic.decide(view, options, random.Random(2)) == basic.decide(
            view, options, random.Random(2), BASIC
        )


def chances_to_go_out() -> list[tuple[int, DealState, PublicMemory, Menu]]:
    """Play steps of a few deals where the seat may go out (its side has what the entry
    asks for) and holds a move that would take it out."""
    found: list[tuple[int, DealState, PublicMemory, Menu]] = []
    for seed in (3, 4, 5, 6):
        for state, seat, memory in moments(seed=seed)[:-1]:
            if state.phase != PLAY:
                continue
            options = menu(state, seat)
            hand = len(state.hands[seat])
            if options.go_out.allowed and any(goes_out(m, hand) for m in options.moves):
                found.append((seat, state, memory, options))
    return found


@pytest.mark.parametrize("policy", [BASIC, TUNED], ids=["basic", "tuned"])
def test_never_goes_out_to_lose_the_game(policy: Policy) -> None:
    """With the other side ahead and the game's target within reach of the deal, going out
    would end the game lost (as far as the public table tells): the policy plays on
    instead; with its own side ahead, it goes out (or asks its partner first). (``strong``
    searches going out on the real deal score of each sampled world instead.)"""
    chances = chances_to_go_out()
    assert chances, "no chance to go out in these deals"
    went_out = held_back = 0
    for seat, state, memory, options in chances:
        hand = len(state.hands[seat])
        mine = state.side_of[seat]
        other = next(s for s in set(state.side_of) if s != mine)
        for ahead in (mine, other):
            behind = other if ahead == mine else mine
            seen = copy.deepcopy(memory)
            seen.scores_before = {ahead: 4990, behind: 0}  # this deal may end the game
            view = seat_view(state, seat, seen, 5000)
            loses = basic.ending_loses(view, options, policy)
            assert not loses or ahead == other
            move = basic.decide(view, options, random.Random(1), policy)
            if loses:
                held_back += 1
                assert not goes_out(move, hand), f"went out behind: {move}"
            else:
                went_out += goes_out(move, hand)
    assert went_out > 0 and held_back > 0


def test_ponytail_policy_keeps_sevens_natural() -> None:
    """ponytail pays 5,000 for a natural sevens canasta and 300 for a mixed one
    (R-PT-SCORE-1): ``strong``'s ponytail policy never lays or takes a wild card into a
    sevens meld that has none (but to go out), where ``basic`` does in the same moments."""
    policy = tuned("ponytail")
    assert policy.clean_ranks == ("7",)
    soiled = {"basic": 0, "ponytail": 0}
    for seed in (3, 5):
        for state, seat, memory in moments("ponytail", seed)[:-1]:
            view, options = seat_view(state, seat, memory, 50000), menu(state, seat)
            for name, played in (("basic", BASIC), ("ponytail", policy)):
                move = basic.decide(view, options, random.Random(1), played)
                if isinstance(move, Meld | TakePile) and not goes_out(move, len(view.hand)):
                    soiled[name] += basic.soils(view, options, move, policy)
    assert soiled["ponytail"] == 0
    assert soiled["basic"] > 0, "no moment where a wild card could join sevens: a weak test"


@pytest.mark.parametrize(
    ("hidden", "hand", "unseen"), [(8, 3, 2), (9, 4, 3), (10, 5, 6), (6, 6, 2)]
)
def test_pair_chance_counts_every_hand(hidden: int, hand: int, unseen: int) -> None:
    """The chance that the next opponent holds a natural pair of a rank (the discard's
    ``pair_odds``): exactly the share of all his possible hands that hold two or more of
    the rank's unseen cards."""
    hands = list(combinations(range(hidden), hand))
    paired = sum(1 for h in hands if sum(1 for c in h if c < unseen) >= 2)
    assert pair_chance(hidden, hand, unseen) == pytest.approx(paired / len(hands))
    assert pair_chance(hidden, hand, 1) == 0.0


def test_modern_american_policy_feeds_fewer_piles() -> None:
    """In modern_american the pile is taken only with a natural pair of its top card from the
    hand (R-MA-PILE-1), so ``strong``'s policy there discards what the next opponent is least
    likely to hold a pair of (``pair_odds``, ``no_pair_relief``). In the same moments of a few
    deals, its discards leave the next opponent (his real hand) able to take the pile less
    often than ``basic``'s do."""
    policy = tuned("modern_american")
    assert policy.pair_odds > 0
    fed = {"basic": 0, "modern_american": 0}
    discards = 0
    for seed in (3, 4, 5, 6, 7, 8):
        for state, seat, memory in moments("modern_american", seed)[:-1]:
            if state.phase != PLAY:
                continue
            view, options = seat_view(state, seat, memory, 8500), menu(state, seat)
            his = Counter(
                CARDS[c].rank for c in state.hands[view.next_seat()] if CARDS[c].is_natural
            )
            for name, played in (("basic", BASIC), ("modern_american", policy)):
                move = basic.decide(view, options, random.Random(1), played)
                if isinstance(move, Discard):
                    discards += name == "basic"
                    card = CARDS[move.card]
                    fed[name] += card.is_natural and his[card.rank] >= 2
    assert discards > 100
    assert fed["modern_american"] < fed["basic"], fed
