"""The move menu: every move of one seat that the rules accept right now, as commands, and
what a client needs to compose the moves no menu can list (``GET /deals/{id}/moves``,
docs/api.md).

``menu(state, seat)`` reads only what that seat's player may see (R-VIEW-1/2): his own hand
and the public table (phase, turn, the pile's top card, size and crosswise cards, the stock's
and the deck's sizes, the melds, who has opened, the question asked, the scores before the
deal). Each move it lists is checked by the rules engine (``domain.rules.decide``) before it
is listed, or is legal by construction (below); ``decide`` reads the whole state, but no
verdict on a listed form depends on a hidden card (other hands, the stock, face-down
ponytails, the deck's order), which ``tests/property/test_move_menu.py`` checks by permuting
them.

Cards of one rank (in the notation: ``A``, ``2`` .. ``K``, ``BJ``, ``LJ``) are
interchangeable for every rule: the rules read a card's rank and value, never its suit
(threes apart, which are never melded as a choice here) or its deck. So the menu lists one
command per *shape*: the command with each card replaced by its rank (``shape``), using the
first cards of that rank in the sorted hand; a client may swap in any other card of the same
rank from ``hand_by_rank``. Discards are the exception: every distinct card code is listed.

The forms (only when the seat is the one the deal waits for; otherwise the menu is empty):

- cut phase (the cutter): ``cut`` with every ``n`` from 1 to the deck's size minus one
  (legal by construction, R-DEAL-4);
- answer phase (the partner asked): ``answer`` yes and ``answer`` no (always legal);
- draw step: ``draw`` (when the stock has cards: legal by construction); ``decline_pile``;
  ``ask_partner`` naming each partner; ``pick_up_ponytail``; and ``take_pile`` whose only meld
  is one of: the top alone (``[TOP]``: onto the side's meld of its rank), the top with two
  naturals of its rank, the top with one natural of its rank and one wild of each wild rank
  held. For a side that has not opened, when none of those is accepted, one *opening take* is
  searched: the top with the pair (or with every natural of its rank), plus the fewest melds
  from the hand, largest count first, that make the rules accept it (best effort);
- play step: ``pick_up_ponytail``; ``ask_partner`` naming each partner; ``meld`` with one new
  meld of exactly three naturals of one rank, or two naturals of one rank and one wild (of each
  wild rank held), or, where the entry has wild-card melds, three wild cards (rank ``W``, one
  per mix of wild ranks); ``meld`` adding one card to one of the side's melds that still takes
  cards (a natural of its rank, or a wild of each wild rank held); ``discard`` of every
  distinct card code (legal by construction when two cards or more are held and the entry's
  discard rule, ``Variant.check_discard``, allows it; the last card is decided);
  best effort: for a side that has not opened, up to two *opening melds* (the fewest hand melds,
  largest count first, without and with wild cards, that reach the minimum), and when the side
  may go out, one *going-out meld* (every card melded, the last one discarded).

Beside the moves, ``meld_limits``: what a meld of the seat's side may hold now
(``Variant.meld_limits``, the limits the rules check every meld with), for a client that
composes several melds from a selection (the table page).

Every ``MeldSpec`` names its rank (``W`` for wild cards), except a black-three meld's.
"Complete" means: every command of one of the forms above (the best-effort ones apart) that
the rules accept has its shape in the menu (``tests/property/test_move_menu.py`` enumerates
the forms over every card code to check it).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations_with_replacement

from domain.cards import CARDS, NATURAL_RANKS, RANKS, points
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
from domain.constants import ANSWER, BLACK_THREE_RANK, CUT, DRAW, PLAY, WILD_RANK
from domain.errors import RuleViolation
from domain.legal import seat_to_act
from domain.meld_limits import MeldLimits
from domain.rules import decide
from domain.state import DealState
from domain.variants import Variant, get_variant
from domain.variants.base import PARTNER_SAID_NO

#: ``go_out.lacks`` of a seat the deal is not waiting for (the rules' lacks follow it).
NOT_YOUR_TURN = "not_your_turn"
#: The order of ``hand_by_rank`` (the notation's ranks, then the jokers).
RANK_ORDER = (*RANKS, "BJ", "LJ")
WILD_RANKS = ("2", "BJ", "LJ")


@dataclass(frozen=True)
class MeldSummary:
    """One of the side's melds, as everybody sees it (R-VIEW-2)."""

    rank: str
    size: int
    naturals: int
    wilds: int
    closed: bool  # complete at the entry's cap: it takes no more cards
    canasta: bool


@dataclass(frozen=True)
class GoingOut:
    """May the seat go out in this turn, and if not, why not (stable codes, docs/api.md)."""

    allowed: bool
    lacks: tuple[str, ...]


@dataclass(frozen=True)
class Menu:
    seat: int
    moves: tuple[Command, ...]
    hand_by_rank: dict[str, tuple[str, ...]]
    melds: tuple[MeldSummary, ...]
    initial_minimum_left: int
    go_out: GoingOut
    #: what a meld of the side may hold now (``Variant.meld_limits``; a command of this
    #: side now makes its initial meld exactly when it has not melded)
    meld_limits: MeldLimits


def menu(state: DealState, seat: int, *, moves: bool = True) -> Menu:
    """The move menu of room seat ``seat`` (see the module's docstring); ``moves=False``:
    all of it but the moves (a bot's rollouts list their own, ``bots.rollout``)."""
    v = get_variant(state.variant)
    side = state.side_of[seat]
    hand = sorted(state.hands[seat]) if seat in state.order else []
    acting = seat_to_act(state) == seat and seat in state.order
    listed = _Builder(state, seat, v, hand).moves() if acting and moves else []
    minimum = 0 if state.opened[side] else v.initial_minimum(state.scores_before.get(side, 0))
    return Menu(
        seat=seat,
        moves=tuple(listed),
        hand_by_rank={rank: tuple(cards) for rank, cards in by_rank(hand).items()},
        melds=tuple(
            MeldSummary(
                rank=m.rank,
                size=m.size,
                naturals=sum(1 for c in m.cards if CARDS[c].is_natural),
                wilds=sum(1 for c in m.cards if CARDS[c].is_wild),
                closed=m.closed,
                canasta=m.is_canasta,
            )
            for m in state.melds[side]
        ),
        initial_minimum_left=minimum,
        go_out=going_out(state, seat, v, acting=acting),
        meld_limits=v.meld_limits(state, side, not state.opened[side]),
    )


def going_out(state: DealState, seat: int, v: Variant, *, acting: bool) -> GoingOut:
    """The entry's going-out lacks (``Variant.going_out_lacks``: the rules' own check) for
    ``seat``; a partner's "no" binds only the turn it was given in."""
    lacks = [
        lack.code
        for lack in v.going_out_lacks(state, seat)
        if seat == state.turn or lack != PARTNER_SAID_NO
    ]
    if not (acting and state.phase in (DRAW, PLAY)):
        lacks.insert(0, NOT_YOUR_TURN)
    return GoingOut(allowed=not lacks, lacks=tuple(lacks))


def by_rank(cards: Sequence[str]) -> dict[str, list[str]]:
    """The cards by rank (``RANK_ORDER``), each rank's cards sorted."""
    groups: dict[str, list[str]] = {}
    for card in sorted(cards):
        groups.setdefault(CARDS[card].rank, []).append(card)
    return {rank: groups[rank] for rank in RANK_ORDER if rank in groups}


def shape(command: Command) -> Hashable:
    """The command with every card replaced by its rank (order within a meld ignored): the
    menu lists one command per shape, every distinct discard apart."""
    if isinstance(command, TakePile | Meld):
        specs = tuple(
            (spec.rank, tuple(sorted(c if c == TOP else CARDS[c].rank for c in spec.cards)))
            for spec in command.melds
        )
        discard = command.discard if isinstance(command, Meld) else None
        return (type(command).__name__, specs, discard and CARDS[discard].rank)
    return command


class _Builder:
    """The moves of the seat to act, each decided (or legal by construction) once."""

    def __init__(self, st: DealState, seat: int, v: Variant, hand: list[str]) -> None:
        self.st, self.seat, self.v, self.hand = st, seat, v, hand
        self.side = st.side_of[seat]
        self.ranks = by_rank(hand)
        self.wild_ranks = [r for r in WILD_RANKS if r in self.ranks]
        self.out: list[Command] = []
        self.seen: set[Command] = set()

    def moves(self) -> list[Command]:
        st = self.st
        if st.phase == CUT:
            return [Cut(n) for n in range(1, len(st.deck))]  # R-DEAL-4
        if st.phase == ANSWER:
            return [Answer(yes=True), Answer(yes=False)]
        if st.phase == DRAW:
            if st.stock:
                self.trust(Draw())  # R-DRAW-1: the turn is his and the stock has cards
            else:
                self.offer(DeclinePile())
            self.takes()
            self.partner_and_ponytail()
        elif st.phase == PLAY:
            self.partner_and_ponytail()
            self.going_out_meld()
            self.openings()
            self.new_melds()
            self.additions()
            self.discards()
        return self.out

    # --- listing -------------------------------------------------------------------------
    def trust(self, command: Command) -> None:
        if command not in self.seen:
            self.seen.add(command)
            self.out.append(command)

    def offer(self, command: Command) -> bool:
        """List ``command`` if the rules accept it; True if listed (now or before)."""
        if command in self.seen:
            return True
        try:
            decide(self.st, self.seat, command)
        except RuleViolation:
            return False
        self.trust(command)
        return True

    # --- the forms -----------------------------------------------------------------------
    def partner_and_ponytail(self) -> None:
        if self.v.ponytail_size:
            self.offer(PickUpPonytail())
        for partner in self.st.partners(self.seat):
            self.offer(AskPartner(partner))

    def takes(self) -> None:
        top = self.st.pile_top
        if top is None or not CARDS[top].is_natural:
            return  # R-PILE-1: an empty pile, or a wild card or a three on top
        rank = CARDS[top].rank
        naturals = self.ranks.get(rank, [])
        firsts: list[tuple[str, ...]] = [(TOP,)]
        if len(naturals) >= 2:
            firsts.append((TOP, naturals[0], naturals[1]))
        if naturals:
            firsts += [(TOP, naturals[0], self.ranks[w][0]) for w in self.wild_ranks]
        taken = [self.offer(TakePile((MeldSpec(first, rank),))) for first in firsts]
        if any(taken) or self.st.opened[self.side] or len(naturals) < 2:
            return
        for first in dict.fromkeys(((TOP, *naturals[:2]), (TOP, *naturals))):
            rest = _without(self.hand, first)
            counted = [top, *first[1:]]
            for extra in self.hand_melds(rest, counted=counted, exclude=rank):
                if self.offer(TakePile((MeldSpec(first, rank), *extra))):
                    return

    def openings(self) -> None:
        """Up to two opening melds (without and with wild cards), the fewest melds each."""
        if self.st.opened[self.side]:
            return
        for wilds in (False, True):
            for melds in self.hand_melds(self.hand, wilds=wilds):
                if self.offer(Meld(tuple(melds))):
                    break

    def hand_melds(
        self,
        cards: Sequence[str],
        *,
        counted: Sequence[str] = (),
        exclude: str | None = None,
        wilds: bool | None = None,
    ) -> Iterator[tuple[MeldSpec, ...]]:
        """Growing sets of melds from ``cards`` (not of rank ``exclude``), largest count
        first: the sets worth asking the rules about for an initial meld that already holds
        ``counted`` (``wilds`` None: without, then with wild cards). A set worth less than
        the minimum with ``counted`` is not worth asking: no entry counts more than the
        values of the cards melded, and only R-MA-INIT-3 (a canasta from the hand) waives
        the minimum."""
        minimum = self.v.initial_minimum(self.st.scores_before.get(self.side, 0))
        for with_wilds in (False, True) if wilds is None else (wilds,):
            melds = _sets(self.v, cards, exclude, with_wilds)
            for k in range(1, len(melds) + 1):
                chosen = melds[:k]
                named = [*counted, *(c for spec in chosen for c in spec.cards)]
                if points(named) >= minimum or any(len(s.cards) >= 7 for s in chosen):
                    yield tuple(chosen)

    def new_melds(self) -> None:
        for rank in NATURAL_RANKS:
            naturals = self.ranks.get(rank, [])
            if len(naturals) >= 3:
                self.offer(Meld((MeldSpec(tuple(naturals[:3]), rank),)))
            if len(naturals) >= 2:
                for w in self.wild_ranks:
                    pair = (naturals[0], naturals[1], self.ranks[w][0])
                    self.offer(Meld((MeldSpec(pair, rank),)))
        if self.v.wild_melds:
            for mix in combinations_with_replacement(self.wild_ranks, 3):
                wild = _pick(self.ranks, mix)
                if wild is not None:
                    self.offer(Meld((MeldSpec(wild, WILD_RANK),)))

    def additions(self) -> None:
        ranks = dict.fromkeys(m.rank for m in self.st.melds[self.side] if not m.closed)
        for rank in ranks:
            if rank == BLACK_THREE_RANK:
                continue
            joining = [*([] if rank == WILD_RANK else [rank]), *self.wild_ranks]
            for r in joining:
                if r in self.ranks:
                    self.offer(Meld((MeldSpec((self.ranks[r][0],), rank),)))

    def discards(self) -> None:
        for card in dict.fromkeys(self.hand):
            if len(self.hand) < 2:
                self.offer(Discard(card))  # going out: the rules decide
                continue
            try:  # R-DISC-1 (R-MA-DISC-1): the one discard rule that can refuse now
                self.v.check_discard(self.st, self.seat, card, False)
            except RuleViolation:
                continue
            self.trust(Discard(card))

    def going_out_meld(self) -> None:
        """Every card melded (naturals onto the side's melds or as new melds, wild cards
        spread over them, black threes together) and the one left discarded, if that is
        all the hand and the side may go out (best effort, decided)."""
        if going_out(self.st, self.seat, self.v, acting=True).lacks:
            return
        specs: list[MeldSpec] = []
        left: list[str] = []
        open_ranks = {m.rank for m in self.st.melds[self.side] if not m.closed}
        for rank, cards in self.ranks.items():
            if rank in WILD_RANKS:
                continue
            if CARDS[cards[0]].is_black_three and 3 <= len(cards) <= self.v.black_three_meld_max:
                specs.append(MeldSpec(tuple(cards)))
            elif CARDS[cards[0]].is_natural and (rank in open_ranks or len(cards) >= 3):
                specs.append(MeldSpec(tuple(cards), rank))
            else:
                left += cards
        wilds = [c for r in self.wild_ranks for c in self.ranks[r]]
        targets = [s.rank for s in specs if s.rank] + sorted(open_ranks - {BLACK_THREE_RANK})
        if wilds and targets:
            specs += [MeldSpec((w,), targets[i % len(targets)]) for i, w in enumerate(wilds)]
        else:
            left += wilds
        if not specs or len(left) > 1:
            return
        if left:
            self.offer(Meld(tuple(specs), discard=left[0]))
            return
        if not self.offer(Meld(tuple(specs))):  # an entry may want a discard to go out
            last = specs[-1]
            kept = (MeldSpec(last.cards[:-1], last.rank),) if len(last.cards) > 1 else ()
            self.offer(Meld((*specs[:-1], *kept), discard=last.cards[-1]))


def _sets(v: Variant, cards: Sequence[str], exclude: str | None, wilds: bool) -> list[MeldSpec]:
    """The hand's melds, largest count first: every natural rank held three times or more
    (all its cards, within the entry's cap), and with ``wilds`` each of them and each pair
    with one wild card, or where the entry has them, one wild-card meld of all the wilds."""
    ranks = by_rank(cards)
    cap = v.meld_cap or len(cards)
    spare = [c for r in WILD_RANKS for c in ranks.get(r, [])] if wilds else []
    melds: list[MeldSpec] = []
    if wilds and v.wild_melds and len(spare) >= 3:
        melds.append(MeldSpec(tuple(spare[:cap]), WILD_RANK))
        spare = spare[cap:]
    for rank in NATURAL_RANKS:
        naturals = ranks.get(rank, [])[:cap]
        if rank == exclude or len(naturals) < 2 or (len(naturals) == 2 and not spare):
            continue
        if spare and len(naturals) < cap:
            melds.append(MeldSpec((*naturals, spare.pop()), rank))
        elif len(naturals) >= 3:
            melds.append(MeldSpec(tuple(naturals), rank))
    melds.sort(key=lambda spec: -points(list(spec.cards)))
    return melds


def _pick(ranks: dict[str, list[str]], mix: Sequence[str]) -> tuple[str, ...] | None:
    """The first cards of the ranks in ``mix`` (a rank may repeat), if the hand holds them."""
    taken: dict[str, int] = {}
    cards = []
    for rank in mix:
        i = taken.get(rank, 0)
        held = ranks.get(rank, [])
        if i >= len(held):
            return None
        cards.append(held[i])
        taken[rank] = i + 1
    return tuple(cards)


def _without(cards: Sequence[str], used: Sequence[str]) -> list[str]:
    rest = list(cards)
    for card in used:
        if card != TOP:
            rest.remove(card)
    return rest
