"""``basic``'s knobs (``bots.policy``, docs/bots.md): the ``basic`` level plays its own
hand-set values; ``strong`` plays a tuned set, and that set keeps what a player would
notice: it never goes out when that ends the game with its side behind, and it decides the
same whatever the hidden cards are (``test_secrecy`` runs it too)."""

from __future__ import annotations

import copy
import random

import pytest

from bots import PublicMemory, basic, seat_view
from bots.policy import BASIC, TUNED, Policy
from domain.commands import AskPartner, Command, Discard, Meld
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
