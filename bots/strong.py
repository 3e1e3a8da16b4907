"""The ``strong`` bot: determinized Monte Carlo search over ``basic``'s rollouts
(docs/bots.md).

At the play step (which meld, going out) it lists a few candidate moves (``candidates``:
``basic``'s own choice first, then the menu's melds and going-out moves), and for each of
several *determinizations* (the cards the seat may not see, shuffled with its ``rng`` into
the places they lie in, with the right counts: ``sample_world``, built on
``SeatView.knowledge`` and never on the real hidden cards) it plays every candidate on a copy
of that world with the engine's own ``decide``, then lets ``basic`` play every seat
(``rollout``) until the seat's next turn begins or the deal ends, and scores the result
(``bots.rollout.evaluate``: the entry's own deal score of each side as the table stands,
hands at a share of their penalty, cards held or melded as assets; the real score once the
deal is over, and the game's end), its side's minus the best other side's. All candidates
meet the same worlds (common random numbers). It plays the best mean when it beats
``basic``'s choice by ``MARGIN`` points a world (less is noise).

The budget: ``rollouts`` worlds at most, and ``ms`` of CPU time (``time.process_time``, read
only to stop searching) when given; with ``ms=None`` the search counts worlds only, so the
same view, menu and seed give the same move. The other decisions (the cut, the draw step,
answering the partner, a play step with one candidate) are ``basic``'s, without a search:
searched, the draw step lost points and the choice among discards gained none
(docs/bots.md).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from bots import basic
from bots.policy import TUNED, Policy, tuned
from bots.rollout import rollout
from bots.view import SeatView
from domain.cards import CARDS
from domain.commands import Command, Discard, Meld
from domain.constants import ANSWER, CANASTA_SIZE, DRAW, PLAY
from domain.menu import Menu
from domain.state import DealState

#: Worlds sampled per decision at most (the budget when no time limit is given).
ROLLOUTS = 24
#: The default CPU budget per searched decision, in ms (``canasta arena --strong-ms``).
DEFAULT_MS = 200.0
#: How many points a world an alternative must gain over ``basic``'s choice to be played.
MARGIN = 40
#: Single melds of the play step tried besides ``basic``'s choice and going out.
MELD_CANDIDATES = 4


@dataclass(frozen=True)
class Strong:
    """A strong player with its budget: ``rollouts`` worlds at most, ``ms`` of CPU time."""

    rollouts: int = ROLLOUTS
    ms: float | None = DEFAULT_MS
    policy: Policy | None = None  # None: the entry's own (``bots.policy.tuned``)

    def __call__(self, view: SeatView, menu: Menu, rng: random.Random) -> Command:
        policy = self.policy or tuned(view.variant)
        return decide(view, menu, rng, rollouts=self.rollouts, ms=self.ms, policy=policy)


def decide(
    view: SeatView,
    menu: Menu,
    rng: random.Random,
    *,
    rollouts: int = ROLLOUTS,
    ms: float | None = None,
    policy: Policy = TUNED,
) -> Command:
    """The ``strong`` move (the module's docstring); ``ms=None``: no time limit; ``policy``:
    the rules of thumb it starts from and plays its rollouts with (``bots.policy``)."""
    seed = rng.getrandbits(64)
    choice = basic.decide(view, menu, random.Random(seed), policy)
    if view.phase != PLAY:
        return choice
    options = candidates(view, menu, choice, policy)
    if len(options) < 2:
        return choice
    return search(view, options, random.Random(seed + 1), rollouts, ms, policy)


def candidates(
    view: SeatView, menu: Menu, choice: Command, policy: Policy = TUNED
) -> list[Command]:
    """``basic``'s choice first, then the alternatives worth a search, at the play step only:
    every going-out move and a few single melds (additions first; none that ``basic`` would
    not lay: no new meld the entry punishes when incomplete unless the hand holds nearly a
    canasta of it, no wild card but where ``basic`` would spend one, ``_keeps_wilds``). The draw step and other discards are ``basic``'s: searched, they gained
    nothing or lost points (docs/bots.md)."""
    out: list[Command] = [choice]
    if view.phase != PLAY:
        return out
    seen = {_key(choice)}

    def add(move: Command) -> None:
        key = _key(move)
        if key not in seen:
            seen.add(key)
            out.append(move)

    hand = len(view.hand)
    melds = [m for m in menu.moves if isinstance(m, Meld)]
    if menu.go_out.allowed:
        for move in melds:
            if basic._cards_used(move) == hand:
                add(move)
    if not menu.initial_minimum_left:
        singles = [
            m
            for m in melds
            if len(m.melds) == 1
            and basic._cards_used(m) <= hand - 2
            and basic._fits(view, menu, m.melds)
        ]
        singles.sort(key=lambda m: (len(m.melds[0].cards) != 1, basic._wilds(m)))
        for move in singles[:MELD_CANDIDATES]:
            if _keeps_wilds(view, menu, move, policy) and not basic.soils(view, menu, move, policy):
                add(move)
    return out


def _keeps_wilds(view: SeatView, menu: Menu, move: Meld, policy: Policy) -> bool:
    """A meld spends a wild card only as ``basic`` would: to complete a canasta (one wild
    card onto a meld of six) or once the hand is down to the policy's ``endgame_hand`` cards. The
    search's one-round score likes a wild card laid early; whole games do not (docs/bots.md)."""
    if not basic._wilds(move) or len(view.hand) <= policy.endgame_hand:
        return True
    spec = move.melds[0]
    sizes = {m.rank: m.size for m in menu.melds}
    return len(spec.cards) == 1 and sizes.get(spec.rank or "", 0) == CANASTA_SIZE - 1


def _key(move: Command) -> object:
    """Discards of one rank are the same move to the search (suits never matter but for
    threes, and only black threes are ever discarded)."""
    if isinstance(move, Discard):
        return ("discard", CARDS[move.card].rank)
    return move


def search(
    view: SeatView,
    options: Sequence[Command],
    rng: random.Random,
    rollouts: int,
    ms: float | None,
    policy: Policy = TUNED,
) -> Command:
    """The candidate with the best mean over the sampled worlds, if it beats the first
    (``basic``'s choice) by ``MARGIN`` points a world; the first otherwise."""
    started = time.process_time()
    totals = [0.0] * len(options)
    worlds = 0
    while worlds < max(1, rollouts):
        worlds += 1
        world = sample_world(view, rng)
        seed = rng.getrandbits(64)
        for i, move in enumerate(options):
            totals[i] += rollout(world, view, move, random.Random(seed), policy)
        if ms is not None and (time.process_time() - started) * 1000 >= ms:
            break
    best = max(range(len(options)), key=lambda i: (totals[i], -i))
    if totals[best] - totals[0] < MARGIN * worlds:
        return options[0]  # not clearly better than basic's choice: noise
    return options[best]


def sample_world(view: SeatView, rng: random.Random) -> DealState:
    """The deal with the cards the seat may not see (every card of the knowledge state's
    hidden places: the other hands, the stock, the deck, face-down ponytails) shuffled
    among those places, each keeping its number of cards, except what the public history
    tells: a card another player took with the pile and has not shown since is in his
    hand (``held_from_pile``), and a red three never goes to a hand in play (it is laid as
    soon as it is drawn)."""
    world = view.knowledge.clone()
    others = [s for s in range(world.players) if s != view.seat]
    rest = [world.stock, world.deck]
    rest += [world.ponytails[s] for s in range(world.players) if not world.ponytail_up[s]]
    pool = [c for s in others for c in world.hands[s]] + [c for p in rest for c in p]
    known = {s: cards[: len(world.hands[s])] for s, cards in held_from_pile(view, pool).items()}
    placed = {c for cards in known.values() for c in cards}
    pool = [c for c in pool if c not in placed]
    rng.shuffle(pool)
    in_play = world.phase in (DRAW, PLAY, ANSWER)
    reds = [c for c in pool if in_play and CARDS[c].is_red_three]
    pool = [c for c in pool if not (in_play and CARDS[c].is_red_three)]
    for s in others:
        hand = world.hands[s]
        mine = known.get(s, [])
        size = len(hand) - len(mine)
        hand[:] = mine + pool[:size]
        del pool[:size]
    pool = _shuffled(pool + reds, rng) if reds else pool
    for place in rest:
        size = len(place)
        place[:] = pool[:size]
        del pool[:size]
    return world


def held_from_pile(view: SeatView, hidden: Sequence[str]) -> dict[int, list[str]]:
    """Per other seat, the cards it took with the pile that are still hidden (neither
    melded nor discarded since), unless more than one seat took that card; each once (a
    seat may take one card again after discarding it)."""
    taken = view.memory.taken
    times = Counter(c for cards in taken.values() for c in set(cards))
    unseen = set(hidden)
    return {
        s: [c for c in dict.fromkeys(cards) if c in unseen and times[c] == 1]
        for s, cards in taken.items()
        if s != view.seat
    }


def _shuffled(cards: list[str], rng: random.Random) -> list[str]:
    rng.shuffle(cards)
    return cards
