"""The ``basic`` bot: a heuristic player of the move menu's moves (docs/bots.md).

Every move it plays is one of the menu's (``domain.menu``), except an initial meld it may
compose itself (``composed_opening``), which it first asks the rules about on the seat's
knowledge (``SeatView.accepts``). Its rules of thumb, in order of priority within a turn:

- draw step: pick up the ponytail; take the pile when it pays (the top alone onto a meld, a
  natural pair, an opening take; with a wild card only for a pile of five cards or more),
  otherwise draw;
- play step: go out when the entry allows it, unless that ends the game with its side behind
  (``ending_loses``) or the side has a meld the entry punishes when incomplete and the stock
  still holds turns to complete it (``_wait``); open with the fewest punished melds, wild cards and cards that meet the
  initial minimum; add naturals to the side's melds; add a wild card only to complete a
  canasta (or when the hand is nearly empty); lay new melds of three naturals (modern_american: sevens and aces only with six in
  hand); keep pairs and wild cards; then discard what the next opponent is least likely to use
  (``discard_risk``): black threes first, ranks his side has no meld of, ranks he discarded
  himself, ranks mostly out of play; singletons before pairs;
- before going out, ask the partner where the entry lets him answer (once a turn, or once a
  deal in modern_american); asked, answer yes unless going out would end the game against
  the side or his own hand holds 150 points or more (``hand_penalty`` counted in).

Its numbers (pile sizes, hand sizes, the discard's weights) are the knobs of a ``Policy``
(``bots.policy``): ``decide`` plays ``BASIC``, the hand-set values, unless given another set
(``strong`` plays ``TUNED``). The discard's risk is ``bots.discard``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import combinations

from bots.discard import discard_risk
from bots.policy import BASIC, Policy
from bots.view import SeatView
from domain.cards import CARDS, points
from domain.commands import (
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
from domain.constants import ANSWER, CANASTA_SIZE, CUT, DRAW, PLAY, WILD_RANK
from domain.legal import _least_to_start as least_to_start
from domain.menu import Menu
from domain.variants import get_variant

#: modern_american's penalty for three aces or sevens in a hand at the end (R-MA-SCORE-2).
HAND_GROUP_PENALTY = 1500


def decide(view: SeatView, menu: Menu, rng: random.Random, policy: Policy = BASIC) -> Command:
    moves = menu.moves
    assert moves, "an empty menu: the seat to act has no legal move"
    phase = view.phase
    if phase == CUT:
        return _cut(view, moves, rng)
    if phase == ANSWER:
        held = points(view.hand) + hand_penalty(view)
        return Answer(yes=not ending_loses(view, menu, policy) and held < policy.holding_too_much)
    for move in moves:
        if isinstance(move, PickUpPonytail):
            return move
    if phase == DRAW:
        return _draw_step(view, menu, rng, policy)
    assert phase == PLAY, phase
    return _play_step(view, menu, rng, policy)


# --- cut and draw --------------------------------------------------------------------------


def _cut(view: SeatView, moves: Sequence[Command], rng: random.Random) -> Command:
    """The exact cut where the entry pays for it (ponytail), any cut otherwise."""
    v = get_variant(view.variant)
    cuts = [m for m in moves if isinstance(m, Cut)]
    best = max(cuts, key=lambda c: v.exact_cut_bonus(c.n))
    return best if v.exact_cut_bonus(best.n) > 0 else rng.choice(cuts)


def _draw_step(view: SeatView, menu: Menu, rng: random.Random, policy: Policy) -> Command:
    takes = [m for m in menu.moves if isinstance(m, TakePile)]
    pile = int(view.deal["pile"]["size"])
    worth = [
        t
        for t in takes
        if pile >= _least_pile(t, policy)
        and _fits(view, menu, t.melds, bonus=1)
        and not soils(view, menu, t, policy)
    ]
    if not worth and menu.initial_minimum_left and not takes:
        composed = composed_take(view, menu)
        if (
            composed is not None
            and _fits(view, menu, composed.melds, bonus=1)
            and not soils(view, menu, composed, policy)
        ):
            worth = [composed]
    if worth:
        return min(worth, key=_take_cost)
    for move in menu.moves:
        if isinstance(move, Draw | DeclinePile):
            return move
    return rng.choice([m for m in menu.moves if not isinstance(m, AskPartner)] or menu.moves)


def _least_pile(take: TakePile, policy: Policy) -> int:
    """The smallest pile worth this take: any for the top alone onto a meld."""
    cost = _take_cost(take)
    return 0 if cost == 0 else policy.pair_take_pile if cost == 1 else policy.wild_take_pile


def _take_cost(take: TakePile) -> int:
    """0: the top alone; 1: with a natural pair or an opening; 2: with a wild card."""
    first = [c for c in take.melds[0].cards if c != TOP]
    if any(CARDS[c].is_wild for c in first):
        return 2
    return 0 if not first else 1


# --- the play step -------------------------------------------------------------------------


def _play_step(view: SeatView, menu: Menu, rng: random.Random, policy: Policy) -> Command:
    hand = view.hand
    melds = [m for m in menu.moves if isinstance(m, Meld)]
    outs: list[Command] = [
        m for m in melds if _cards_used(m) == len(hand) and _fits(view, menu, m.melds)
    ]
    if len(hand) == 1:
        outs += [m for m in menu.moves if isinstance(m, Discard)]
    if (
        outs
        and menu.go_out.allowed
        and not ending_loses(view, menu, policy)
        and not _wait(view, policy)
    ):
        asks = [m for m in menu.moves if isinstance(m, AskPartner)]
        if asks and view.deal["question"] is None:
            return asks[0]  # his hand counts against the side if it goes out: he says
        return outs[0]
    melds = [  # keeps a card to discard
        m for m in melds if _cards_used(m) <= len(hand) - 2 and not soils(view, menu, m, policy)
    ]
    if menu.initial_minimum_left:
        openings = [
            m
            for m in melds
            if m.discard is None and _fits(view, menu, m.melds, policy.opening_slack)
        ]
        composed = composed_opening(view, menu)
        if (
            composed is not None
            and _fits(view, menu, composed.melds, policy.opening_slack)
            and not soils(view, menu, composed, policy)
        ):
            openings.append(composed)
        if openings:
            return min(openings, key=lambda m: (_risky(view, m.melds), _wilds(m), _cards_used(m)))
    else:
        chosen = _meld_worth_laying(view, menu, [m for m in melds if m.discard is None], policy)
        if chosen is not None:
            return chosen
    discards = [m for m in menu.moves if isinstance(m, Discard)]
    if discards:
        return min(discards, key=lambda d: (discard_risk(view, menu, d.card, policy), d.card))
    return rng.choice(menu.moves)


def _meld_worth_laying(
    view: SeatView, menu: Menu, melds: Sequence[Meld], policy: Policy
) -> Meld | None:
    """Naturals onto the side's melds, then a wild completing a canasta, then new melds of
    three naturals; pairs with a wild and more wild cards only near the end of the hand."""
    hand = view.hand
    endgame = len(hand) <= policy.endgame_hand
    own = {m.rank: m for m in menu.melds if not m.closed}
    best: tuple[int, Meld] | None = None
    for move in melds:
        if len(move.melds) != 1:
            continue
        spec = move.melds[0]
        rank = spec.rank or ""
        wilds = _wilds(move)
        meld = own.get(rank)
        if meld is not None and len(spec.cards) == 1:  # an addition
            if not wilds or rank == WILD_RANK:
                score = 0
            elif meld.size == CANASTA_SIZE - 1 or endgame:
                score = 1
            else:
                continue
        elif not _fits(view, menu, move.melds):
            continue
        elif meld is None and not wilds and rank != WILD_RANK:  # three naturals
            if len(hand) > policy.new_meld_hand:
                continue
            score = 2
        elif endgame or (rank == WILD_RANK and counts_wild(menu) >= 4):
            score = 3
        else:
            continue
        if best is None or score < best[0]:
            best = (score, move)
    return best[1] if best else None


def _fits(view: SeatView, menu: Menu, specs: Sequence[MeldSpec], bonus: int = 0) -> bool:
    """No new meld of a rank the entry punishes when incomplete (modern_american: sevens,
    aces, wild cards) unless the hand holds nearly a canasta of it (``bonus``: the pile's top
    card that comes with it, or an opening's slack: at most one less for wild-card melds)."""
    own = {m.rank for m in menu.melds}
    for spec in specs:
        rank = spec.rank or ""
        if rank in own or len(spec.cards) < 3:
            continue
        least = least_to_start(view.variant, rank) - (min(bonus, 1) if rank == WILD_RANK else bonus)
        if least <= 3 or (rank == "A" and any(c != TOP and CARDS[c].is_wild for c in spec.cards)):
            continue  # modern_american punishes an incomplete meld of natural aces only
        held = counts_wild(menu) if rank == WILD_RANK else len(menu.hand_by_rank.get(rank, ()))
        if held < least:
            return False
    return True


def soils(view: SeatView, menu: Menu, move: Meld | TakePile, policy: Policy) -> bool:
    """Would ``move`` put a wild card into a natural meld of a rank the policy keeps natural
    (``Policy.clean_ranks``: a new meld, or one of the side's melds with no wild card yet)?"""
    if not policy.clean_ranks:
        return False
    top = view.deal["pile"]["top"]
    wilds = {m.rank: m.wilds for m in menu.melds if not m.closed}
    for spec in move.melds:
        cards = [top if c == TOP else c for c in spec.cards]
        if not any(c is not None and CARDS[c].is_wild for c in cards):
            continue
        ranks = {CARDS[c].rank for c in cards if c is not None and CARDS[c].is_natural}
        rank = spec.rank or (ranks.pop() if len(ranks) == 1 else None)
        if rank in policy.clean_ranks and not wilds.get(rank):
            return True
    return False


def composed_opening(view: SeatView, menu: Menu) -> Meld | None:
    """An initial meld the menu may not list (its openings are a best effort): every set of
    up to four of the hand's natural groups (all the naturals of a rank held twice or more),
    a pair given the cheapest wild card, a more valuable one swapped in and more added while
    short of the minimum (``_with_wilds``), that reaches the minimum, asked of the rules on
    the seat's knowledge (``SeatView.accepts``); the one with the fewest melds the entry
    punishes when incomplete, then the fewest wild cards, then the fewest cards, keeping two
    cards."""
    found = _opening_sets(view, menu, view.hand, menu.initial_minimum_left, keep=2)
    for melds in found:
        move = Meld(melds)
        if view.accepts(move):
            return move
    return None


def composed_take(view: SeatView, menu: Menu) -> TakePile | None:
    """An opening take of the pile the menu may not list: the top card with a natural pair
    of its rank from the hand (the pair counts towards the minimum, the top card too where
    the entry counts it), the rest of the initial meld composed from the rest of the hand as
    ``composed_opening`` does, asked of the rules on the seat's knowledge."""
    top = view.deal["pile"]["top"]
    if not menu.initial_minimum_left or top is None or not CARDS[top].is_natural:
        return None
    rank = CARDS[top].rank
    pair = tuple(menu.hand_by_rank.get(rank, ())[:2])
    if len(pair) < 2:
        return None
    rest = list(view.hand)
    for card in pair:
        rest.remove(card)
    minimum = max(0, menu.initial_minimum_left - points(list(pair)))
    first = MeldSpec((TOP, *pair), rank)
    for melds in _opening_sets(view, menu, rest, minimum, keep=0, exclude=rank):
        move = TakePile((first, *melds))
        if view.accepts(move):
            return move
    return None


def _opening_sets(
    view: SeatView,
    menu: Menu,
    cards: Sequence[str],
    minimum: int,
    *,
    keep: int,
    exclude: str = "",
) -> list[tuple[MeldSpec, ...]]:
    """Sets of melds from ``cards`` worth ``minimum`` or more (``composed_opening``), best
    first: the fewest melds the entry punishes when incomplete, then the fewest wild cards,
    then the fewest cards; ``keep`` cards left over at least."""
    v = get_variant(view.variant)
    cap = v.meld_cap or CANASTA_SIZE * 2
    by_rank: dict[str, list[str]] = {}
    for card in cards:
        by_rank.setdefault(CARDS[card].rank, []).append(card)
    wilds = [c for r in ("2", "BJ", "LJ") for c in by_rank.get(r, ())]
    groups = [
        list(held[:cap])
        for rank, held in by_rank.items()
        if CARDS[held[0]].is_natural and len(held) >= 2 and rank != exclude
    ]
    found: dict[tuple[MeldSpec, ...], tuple[int, int, int]] = {}
    for size in range(0 if minimum == 0 else 1, min(len(groups), 4) + 1):
        for chosen in combinations(groups, size):
            for keep_clean in (True, False):
                melds = _with_wilds(v.max_wilds, cap, chosen, wilds, minimum, keep_clean)
                if melds is None:
                    continue
                used = sum(len(m) for m in melds)
                if len(cards) - used < keep or points([c for m in melds for c in m]) < minimum:
                    continue
                specs = tuple(MeldSpec(tuple(m), CARDS[m[0]].rank) for m in melds)
                wild = sum(1 for m in melds for c in m if CARDS[c].is_wild)
                found.setdefault(specs, (_risky(view, specs), wild, used))
    if minimum and cap >= CANASTA_SIZE:  # R-MA-INIT-3: a canasta from the hand
        cheap = sorted(wilds, key=lambda c: CARDS[c].value)
        for group in groups:
            need = max(0, CANASTA_SIZE - len(group))
            if need > min(len(cheap), v.max_wilds, len(group) - 1):
                continue
            canasta = MeldSpec((*group[:CANASTA_SIZE], *cheap[:need]), CARDS[group[0]].rank)
            sets = [(canasta,)] + [
                (canasta, MeldSpec(tuple(other), CARDS[other[0]].rank))
                for other in groups
                if other is not group and len(other) >= 3
            ]
            for specs in sets:
                used = sum(len(spec.cards) for spec in specs)
                if len(cards) - used >= keep:
                    found.setdefault(specs, (_risky(view, specs), need, used))
    return sorted(found, key=lambda specs: found[specs])


def _with_wilds(
    most: int,
    cap: int,
    groups: Sequence[list[str]],
    wilds: Sequence[str],
    minimum: int,
    keep_clean: bool = True,
) -> list[list[str]] | None:
    """The groups as melds: each pair given the cheapest wild card left; then, while the
    melds count less than ``minimum``, a pair's wild card swapped for a more valuable one
    left in hand (no card more spent), then the most valuable wild cards added (at most
    ``most`` a meld, fewer than its naturals), to the melds holding one already first and,
    with ``keep_clean``, never to the last meld without one (modern_american's initial
    meld needs a clean meld, R-MA-INIT-2). None if a pair finds no wild card."""

    def value(card: str) -> int:
        return CARDS[card].value

    spare = sorted(wilds, key=value)
    melds = []
    for group in groups:
        if len(group) == 2:
            if not spare:
                return None
            melds.append([*group, spare.pop(0)])
        else:
            melds.append(list(group))
    total = points([c for cards in melds for c in cards])
    while total < minimum and spare:
        used = [
            (value(c), i, c) for i, cards in enumerate(melds) for c in cards if CARDS[c].is_wild
        ]
        if not used or min(used)[0] >= value(spare[-1]):
            break
        _, i, cheap = min(used)
        dear = spare.pop()
        melds[i][melds[i].index(cheap)] = dear
        total += value(dear) - value(cheap)
        spare = sorted([*spare, cheap], key=value)
    order = sorted(melds, key=lambda cards: not any(CARDS[c].is_wild for c in cards))
    for cards in order:
        naturals = sum(1 for c in cards if CARDS[c].is_natural)
        clean = sum(1 for m in melds if all(CARDS[c].is_natural for c in m))
        if keep_clean and naturals == len(cards) and clean <= 1:
            continue
        while total < minimum and spare and len(cards) < cap:
            if len(cards) - naturals >= min(most, naturals - 1):
                break
            wild = spare.pop()
            cards.append(wild)
            total += CARDS[wild].value
    return melds


def _risky(view: SeatView, specs: Sequence[MeldSpec]) -> int:
    """How many new melds of ``specs`` the entry punishes when incomplete (modern_american:
    sevens, natural aces, wild-card melds)."""
    risky = 0
    for spec in specs:
        rank = spec.rank or ""
        if len(spec.cards) < 3 or least_to_start(view.variant, rank) <= 3:
            continue
        if rank == "A" and any(c != TOP and CARDS[c].is_wild for c in spec.cards):
            continue
        risky += 1
    return risky


def counts_wild(menu: Menu) -> int:
    return sum(len(cards) for rank, cards in menu.hand_by_rank.items() if rank in ("2", "BJ", "LJ"))


def _cards_used(move: Meld) -> int:
    return sum(len(s.cards) for s in move.melds) + (move.discard is not None)


def _wilds(move: Meld) -> int:
    return sum(1 for s in move.melds for c in s.cards if CARDS[c].is_wild)


# --- the end of the deal -------------------------------------------------------------------


def hand_penalty(view: SeatView) -> int:
    """What the entry charges for this hand at the end of the deal beyond its cards' values:
    modern_american's 1,500 for three aces or more and for three sevens or more
    (R-MA-SCORE-2); nothing elsewhere."""
    if view.variant != "modern_american":
        return 0
    ranks = [CARDS[c].rank for c in view.hand]
    return HAND_GROUP_PENALTY * ((ranks.count("A") >= 3) + (ranks.count("7") >= 3))


def punished_melds(view: SeatView) -> int:
    """How many of the side's melds the entry would punish if the deal ended now: incomplete
    (under seven cards) melds of a rank it punishes (modern_american: sevens, natural aces,
    wild cards, −2,000 to −2,500 each, R-MA-SCORE-2)."""
    count = 0
    for meld in view.deal["melds"].get(view.side, []):
        cards = meld["cards"]
        if len(cards) >= CANASTA_SIZE or least_to_start(view.variant, meld["rank"]) <= 3:
            continue
        if meld["rank"] == "A" and any(CARDS[c].is_wild for c in cards):
            continue
        count += 1
    return count


def _wait(view: SeatView, policy: Policy) -> bool:
    """Rather not go out yet: the side has a meld the entry punishes when incomplete and the
    stock still holds enough turns to complete it (going out would end the deal with it)."""
    stock = int(view.deal.get("stock_size") or 0)
    return punished_melds(view) > 0 and stock >= policy.wait_stock


def ending_loses(view: SeatView, menu: Menu, policy: Policy) -> bool:
    """Would going out now end the game with this side not among the winners? Each side's
    deal score is estimated from what is public (melds, canastas, red threes, hand counts)
    and this seat's own hand."""
    v = get_variant(view.variant)
    totals = dict(view.memory.scores_before)
    if not totals:
        return False
    mine = view.side
    estimate: dict[str, int] = {}
    for side, melds in view.deal["melds"].items():
        score = sum(CARDS[c].value for m in melds for c in m["cards"])
        score += sum(500 if _natural(m) else 300 for m in melds if len(m["cards"]) >= 7)
        score += 100 * len(view.deal["red_threes"].get(side, []))
        for seat in view.order:
            if view.side_of(seat) != side:
                continue
            if seat == view.seat:
                continue  # his own hand goes out
            score -= policy.unseen_card_cost * int(view.deal["hand_counts"][str(seat)])
        if side == mine:
            score += v.going_out_bonus
        estimate[side] = totals.get(side, 0) + score
    if max(estimate.values()) < view.target:
        return False
    return estimate[mine] < max(estimate.values())


def _natural(meld: dict[str, object]) -> bool:
    cards = meld["cards"]
    assert isinstance(cards, list)
    return not any(CARDS[c].is_wild for c in cards)
