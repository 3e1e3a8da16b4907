"""Move generation: candidate commands for the seat to act, and a random legal player.

Candidates are proposals, not verdicts: ``random_legal_command`` asks the rules engine
(``decide``) which of them are legal, so the player can never disagree with the rules.
It is used by the property tests, the demo and the benchmark.
"""

from __future__ import annotations

import random
from collections import defaultdict

from domain.cards import CARDS
from domain.commands import (
    ALLOWED,
    TOP,
    Answer,
    AskPartner,
    Command,
    Cut,
    DeclinePile,
    Discard,
    Draw,
    Meld,
    MeldSpec,
    PickUpPonytail,
    TakePile,
)
from domain.constants import BLACK_THREE_RANK, WILD_RANK
from domain.errors import RuleViolation
from domain.rules import decide
from domain.state import ANSWER, CUT, DRAW, PLAY, DealState
from domain.variants import get_variant


def seat_to_act(st: DealState) -> int | None:
    """The room seat whose command the deal waits for, or None when it is over."""
    return st.to_act


def _by_rank(cards: list[str]) -> tuple[dict[str, list[str]], list[str], list[str]]:
    naturals: dict[str, list[str]] = defaultdict(list)
    wilds: list[str] = []
    black: list[str] = []
    for card in cards:
        c = CARDS[card]
        if c.is_natural:
            naturals[c.rank].append(card)
        elif c.is_wild:
            wilds.append(card)
        elif c.is_black_three:
            black.append(card)
    return naturals, wilds, black


def _least_to_start(variant: str, rank: str) -> int:
    """Cards the random player wants before starting a meld: a player, not a rule.
    modern_american punishes incomplete sevens, aces and wild-card melds (R-MA-SCORE-2)."""
    if variant == "modern_american" and rank in ("7", "A", WILD_RANK):
        return 6
    return 0 if rank != WILD_RANK else 3


def _meld_plan(st: DealState, seat: int, hand: list[str], rng: random.Random) -> list[MeldSpec]:
    """A greedy set of melds and additions from ``hand``, within the entry's meld size."""
    v = get_variant(st.variant)
    cap = v.meld_cap or 99
    side = st.side_of[seat]
    naturals, wilds, black = _by_rank(hand)
    specs: list[MeldSpec] = []
    wilds = list(wilds)
    for rank, cards in naturals.items():
        meld = st.open_meld(side, rank)
        room = cap - (meld[1].size if meld is not None else 0)
        cards = cards[:room]
        if meld is None and len(cards) < _least_to_start(st.variant, rank):
            continue  # not worth an incomplete-meld penalty
        if (meld is not None and cards) or len(cards) >= 3:
            specs.append(MeldSpec(tuple(cards)))
        elif len(cards) == 2 and wilds and rng.random() < 0.5:
            specs.append(MeldSpec((*cards, wilds.pop())))
    if v.wild_melds and len(wilds) >= _least_to_start(st.variant, WILD_RANK) and rng.random() < 0.5:
        specs.append(MeldSpec(tuple(wilds[:cap]), rank=WILD_RANK))
        wilds = wilds[cap:]
    if wilds and rng.random() < 0.3:
        ranks = [m.rank for m in st.melds[side] if m.rank != BLACK_THREE_RANK and not m.closed]
        ranks += [CARDS[s.cards[0]].rank for s in specs if CARDS[s.cards[0]].is_natural]
        if ranks:
            specs.append(MeldSpec((wilds.pop(),), rank=rng.choice(ranks)))
    used = sum(len(spec.cards) for spec in specs)
    if 3 <= len(black) <= v.black_three_meld_max and len(hand) - used - len(black) <= 1:
        specs.append(MeldSpec(tuple(black)))  # R-OUT-4: only worth trying when going out
    if not st.opened[side]:
        value = sum(CARDS[c].value for spec in specs for c in spec.cards)
        if value < v.initial_minimum(st.scores_before.get(side, 0)):
            return []  # R-INIT-1 would refuse it
    return specs


def candidates(st: DealState, seat: int, rng: random.Random) -> list[Command]:
    """Commands worth trying, most interesting first; the last ones are always safe bets.
    Only commands the phase accepts (``commands.ALLOWED``, R-TURN-1) are proposed."""
    allowed = ALLOWED[st.phase]
    return [c for c in _proposals(st, seat, rng) if type(c) in allowed]


def _proposals(st: DealState, seat: int, rng: random.Random) -> list[Command]:
    if st.phase == CUT:
        return [Cut(rng.randint(1, len(st.deck) - 1))]
    if st.phase == ANSWER:
        return [Answer(rng.random() < 0.7)]
    hand = st.hands[seat]
    out: list[Command] = []
    if st.phase == DRAW:
        if not st.asked and st.partners(seat) and rng.random() < 0.03:
            out.append(AskPartner(rng.choice(st.partners(seat))))
        takes: list[Command] = []
        top = st.pile_top
        if top is not None and CARDS[top].is_natural:
            naturals, wilds, _ = _by_rank(hand)
            same = naturals.get(CARDS[top].rank, [])
            side = st.side_of[seat]
            meld = st.open_meld(side, CARDS[top].rank)
            firsts: list[tuple[str, ...]] = []
            if meld is not None and (not st.frozen_for(side) or st.always_frozen):
                firsts.append((TOP,))
            if len(same) >= 2:
                firsts.append((TOP, *same))
                firsts.append((TOP, same[0], same[1]))
            if same and wilds and not st.frozen_for(side):
                firsts.append((TOP, same[0], wilds[0]))
            for first in firsts:
                rest = [c for c in hand if c not in first]
                extra = [s for s in _meld_plan(st, seat, rest, rng) if len(s.cards) >= 3]
                extra = [s for s in extra if CARDS[s.cards[0]].rank != CARDS[top].rank]
                takes.append(TakePile((MeldSpec(first), *extra)))
                takes.append(TakePile((MeldSpec(first),)))
        if rng.random() < 0.6:
            out += takes
        if st.stock:
            out.append(Draw())
        out += takes
        if not st.stock:
            out.append(DeclinePile())
        return out
    if st.phase == PLAY:
        side = st.side_of[seat]
        if st.ponytails[seat] and not st.ponytail_up[seat] and st.completed(side):
            out.append(PickUpPonytail())  # R-PT-PONY-1: as soon as he may
        if not st.asked and not st.turn_melded and st.partners(seat) and rng.random() < 0.03:
            out.append(AskPartner(rng.choice(st.partners(seat))))
        discards = [c for c in hand if not CARDS[c].is_red_three]
        rng.shuffle(discards)
        # prefer throwing away singletons that are not wild
        discards.sort(key=lambda c: CARDS[c].is_wild)
        if rng.random() < 0.85:
            plan = _meld_plan(st, seat, hand, rng)
            if plan:
                used = {c for s in plan for c in s.cards}
                left = [c for c in discards if c not in used]
                if not left:
                    out.append(Meld(tuple(plan)))
                for card in left[:2]:
                    out.append(Meld(tuple(plan), discard=card))
                out.append(Meld(tuple(plan)))
                for spec in plan:
                    out.append(Meld((spec,)))
        out += [Discard(c) for c in discards]
        return out
    return out


def _plainly_legal(st: DealState, command: Command) -> bool:
    """Moves legal by construction, which need no trial: drawing from a stock that has
    cards, and discarding a card that leaves two or more (never going out). The engine
    still decides them when they are sent; a mistake here fails the property tests."""
    if isinstance(command, Draw):
        return st.phase == DRAW and bool(st.stock)
    if isinstance(command, Discard):
        if st.turn is None or st.phase != PLAY or len(st.hands[st.turn]) < 3:
            return False
        try:  # the entry's own discard restrictions (R-DISC-1, R-MA-DISC-1)
            get_variant(st.variant).check_discard(st, st.turn, command.card, False)
        except RuleViolation:
            return False
        return True
    return False


def legal_command(st: DealState, seat: int, rng: random.Random) -> Command:
    """The first candidate the rules accept. Raises if none is legal (a dead end)."""
    tried = candidates(st, seat, rng)
    for command in tried:
        if _plainly_legal(st, command):
            return command
        try:
            decide(st, seat, command)
        except RuleViolation:
            continue
        return command
    raise AssertionError(f"no legal command for seat {seat} in phase {st.phase}: {tried}")
