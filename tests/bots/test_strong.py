"""The ``strong`` level (docs/bots.md): what it samples, that it is deterministic with a
fixed count of sampled worlds, and that trivial decisions skip the search. That it plays
whole deals of every entry is ``test_levels``; that it ignores hidden cards,
``test_secrecy``."""

from __future__ import annotations

import copy
import random
from collections import Counter

import pytest

from app.application import CanastaApp
from app.arena import MEMORY_ENV, ArenaError, Setup, play_bot_deal
from app.autoplay import HOST, SeededRandom, new_table
from bots import PublicMemory, basic, seat_view
from bots.policy import TUNED
from bots.rollout import GAME_WON, evaluate
from bots.strong import Strong, candidates, decide, held_from_pile, sample_world
from domain.cards import CARDS
from domain.commands import Cut, Meld
from domain.constants import CUT, DRAW, PLAY
from domain.menu import menu
from domain.state import DealState

Moment = tuple[DealState, int, PublicMemory]


def moments(entry: str = "classic", seed: int = 3) -> list[Moment]:
    """Every decision of one deal between ``basic`` bots: the state, the seat to act and
    the public memory at that point; last, the scored state (seat -1)."""
    seen: list[Moment] = []

    def keep(state: DealState, seat: int, memory: PublicMemory) -> None:
        seen.append((state.clone(), seat, copy.deepcopy(memory)))

    app = CanastaApp(env=MEMORY_ENV, random=SeededRandom(random.Random(f"strong:{seed}")))
    table_id = new_table(app, entry, 4)
    deal_id = app.start_game(table_id, HOST)
    rngs = [random.Random(f"bot:{seed}:{s}") for s in range(4)]
    final = play_bot_deal(app, deal_id, lambda s: "basic", rngs, 5000, before=keep).state
    return [*seen, (final, -1, PublicMemory())]


def final_state() -> DealState:
    return moments()[-1][0]


def hidden(state: DealState, seat: int) -> list[list[str]]:
    places = [state.hands[s] for s in range(state.players) if s != seat]
    places += [state.stock, state.deck]
    return places + [state.ponytails[s] for s in range(state.players) if not state.ponytail_up[s]]


@pytest.mark.parametrize("entry", ["classic", "ponytail"])
def test_sampled_worlds_keep_what_the_seat_knows(entry: str) -> None:
    """A sampled world: the seat's hand and the table as they are, every hidden place with
    its number of cards, the hidden cards the real ones (as a whole), no red three in a hand
    in play, the cards another player took with the pile (and still holds) in his hand; and
    different worlds for different draws of chance."""
    inferred = 0
    for state, seat, memory in moments(entry)[:-1:15]:
        view = seat_view(state, seat, memory, 5000)
        worlds = [sample_world(view, random.Random(i)) for i in range(4)]
        for world in worlds:
            assert world.hands[seat] == state.hands[seat]
            assert world.melds == state.melds and world.pile == state.pile
            assert world.red_threes == state.red_threes
            real, sampled = hidden(state, seat), hidden(world, seat)
            assert [len(p) for p in sampled] == [len(p) for p in real]
            assert Counter(c for p in sampled for c in p) == Counter(c for p in real for c in p)
            if state.phase in (DRAW, PLAY):
                others = [world.hands[s] for s in range(world.players) if s != seat]
                assert not any(CARDS[c].is_red_three for h in others for c in h)
        if len(state.stock) > 4:
            assert len({tuple(w.stock) for w in worlds}) > 1
        pool = [c for p in hidden(state, seat) for c in p]
        for other, cards in held_from_pile(view, pool).items():
            assert set(cards) <= set(state.hands[other])  # the inference is right
            assert all(set(cards) <= set(w.hands[other]) for w in worlds)
            inferred += len(cards)
    assert inferred or entry == "ponytail"


def test_same_seed_same_decision_with_a_fixed_count() -> None:
    searched = 0
    for state, seat, memory in moments()[5:-1]:
        view, options = seat_view(state, seat, memory, 5000), menu(state, seat)
        first = decide(view, options, random.Random(11), rollouts=3)
        assert decide(view, options, random.Random(11), rollouts=3) == first
        choice = basic.decide(view, options, random.Random(0), TUNED)
        found = candidates(view, options, choice)
        assert first in found or first == basic.decide(view, options, random.Random(0), TUNED)
        searched += len(found) > 1
    assert searched > 3


def test_trivial_decisions_are_basics() -> None:
    """The cut is ``basic``'s (no search); so is a decision with one candidate."""
    state, seat, memory = moments()[0]
    assert state.phase == CUT
    view, options = seat_view(state, seat, memory, 5000), menu(state, seat)
    rng = random.Random(4)
    mine = Strong(rollouts=50, ms=None)(view, options, random.Random(4))
    assert isinstance(mine, Cut)
    assert mine == basic.decide(view, options, random.Random(rng.getrandbits(64)), TUNED)


def test_candidates_are_basics_choice_then_melds_at_the_play_step() -> None:
    """``basic``'s choice first; alternatives only at the play step, and only melds (going
    out or single melds; a wild card in one only to complete a canasta, or near the end of
    the hand): the draw step and the discards are ``basic``'s."""
    alternatives = 0
    for state, seat, memory in moments()[1:-1]:
        view, options = seat_view(state, seat, memory, 5000), menu(state, seat)
        choice = basic.decide(view, options, random.Random(0), TUNED)
        found = candidates(view, options, choice)
        assert found[0] == choice
        assert all(m in options.moves for m in found[1:])
        if view.phase != PLAY:
            assert found == [choice]
        assert all(isinstance(m, Meld) for m in found[1:])
        sizes = {m.rank: m.size for m in options.melds}
        for move in found[1:]:
            assert isinstance(move, Meld)
            wild = any(CARDS[c].is_wild for spec in move.melds for c in spec.cards)
            endgame = len(view.hand) <= TUNED.endgame_hand
            if wild and basic._cards_used(move) < len(view.hand) and not endgame:
                (spec,) = move.melds  # a wild card only to complete a canasta
                assert len(spec.cards) == 1 and sizes[spec.rank or ""] == 6
        alternatives += len(found) - 1
    assert alternatives > 0


def test_a_deal_that_ends_the_game_counts_as_won_or_lost() -> None:
    final = final_state()
    assert final.scores is not None
    deal = final.scores["A"]["total"] - final.scores["B"]["total"]
    assert evaluate(final, "A") == deal == -evaluate(final, "B")
    before = {"A": 5000, "B": 0}  # A's total reaches the target: the game ends, A wins
    assert evaluate(final, "A", before, 5000) == GAME_WON + 5000 + deal
    assert evaluate(final, "B", before, 5000) == -GAME_WON - 5000 - deal
    assert evaluate(final, "A", {"A": 0, "B": 0}, 50000) == deal  # the game goes on


def test_arena_setup_gives_strong_its_budget() -> None:
    setup = Setup("classic", 4, ("strong", "basic"), 2, strong_ms=None, strong_rollouts=3)
    assert setup.bot("strong") == Strong(rollouts=3, ms=None)
    assert setup.bot("basic") is basic.decide
    with pytest.raises(ArenaError, match="at least one rollout"):
        Setup("classic", 4, ("strong", "basic"), 2, strong_rollouts=0).check()


def test_a_card_taken_twice_by_one_seat_is_placed_once() -> None:
    """A seat may take a card with the pile, discard it and take it again: the sampled
    world still holds every card once."""
    state, seat, memory = next(m for m in moments() if m[1] >= 0 and m[0].phase == PLAY)
    other = next(s for s in range(state.players) if s != seat)
    card = state.hands[other][0]
    memory = copy.deepcopy(memory)
    memory.taken = {other: [card, card]}
    view = seat_view(state, seat, memory, 5000)
    pool = [c for p in hidden(state, seat) for c in p]
    assert held_from_pile(view, pool) == {other: [card]}
    world = sample_world(view, random.Random(1))
    real, sampled = hidden(state, seat), hidden(world, seat)
    assert Counter(c for p in sampled for c in p) == Counter(c for p in real for c in p)
    assert card in world.hands[other]
