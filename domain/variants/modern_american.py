"""`modern_american` (docs/rules/modern_american.md): four players, 13 cards, an empty starting
pile, every three laid, high initial minimums from the hand, melds capped at seven with
at most two wilds, dead ranks, wild-card melds, two canastas and a discard to go out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from domain.cards import CARDS, NATURAL_RANKS
from domain.constants import PLAY, WILD_RANK
from domain.deal_events import Breakdown
from domain.errors import RuleViolation
from domain.meld_limits import MeldLimits, WildLimit
from domain.melds import LaidMeld
from domain.scoring import (
    MIXED_CANASTA,
    NATURAL_CANASTA,
    card_values,
    finish,
    side_hands,
    start_breakdown,
)
from domain.state import DealState
from domain.variants.base import PARTNER_SAID_NO, Lack, MeldPlan, Variant

JOKER_RANKS = ("BJ", "LJ")
#: R-MA-OUT-1: going out needs two canastas.
NEEDS_TWO_CANASTAS = Lack("needs_canasta", "R-MA-OUT-1", "out.needs_two_canastas")


#: R-MA-MELD-5: sevens never take wild cards.
SEVENS = WildLimit("R-MA-MELD-5", ("7",), None, "limit.sevens")
#: R-MA-MELD-5: aces take wild cards only in the initial meld.
ACES_AFTER_OPENING = WildLimit("R-MA-MELD-5", ("A",), None, "limit.aces")
#: R-MA-MELD-3: after the initial meld, a wild card joins only a meld of five naturals or more.
FIVE_NATURALS = WildLimit(
    "R-MA-MELD-3",
    NATURAL_RANKS,
    5,
    "limit.five_naturals",
)
#: R-MA-MELD-4: no wild card elsewhere until the side's wild-card meld is complete.
WILD_MELD_FIRST = WildLimit(
    "R-MA-MELD-4",
    NATURAL_RANKS,
    None,
    "limit.wild_meld_first",
)


def dead_ranks(st: DealState) -> set[str]:
    """R-MA-MELD-2: ranks of which either side completed a natural canasta."""
    return {
        m.rank
        for melds in st.melds.values()
        for m in melds
        if m.rank != WILD_RANK and m.size >= 7 and not m.has_wild
    }


def open_wild_meld(st: DealState, side: str) -> bool:
    """R-MA-MELD-4: the side has a wild-card meld that is not complete yet."""
    return any(m.rank == WILD_RANK and m.size < 7 for m in st.melds[side])


@dataclass(frozen=True)
class ModernAmerican(Variant):
    def is_bonus_card(self, card: str) -> bool:
        """R-MA-THREE-1: every three, red or black, is laid at once and replaced."""
        return CARDS[card].is_three

    def last_card_bonus_stays_in_hand(self) -> bool:
        """R-MA-THREE-1: a three drawn as the stock's last card stays in the hand (−5)."""
        return True

    def may_meld_rank(self, st: DealState, rank: str) -> None:
        if rank in dead_ranks(st):
            raise RuleViolation("R-MA-MELD-2", "meld.closed_rank", rank=rank)

    def meld_limits(self, st: DealState, side: str, opening: bool) -> MeldLimits:
        """R-MA-MELD-1 (the fields), R-MA-MELD-3..5 (``wild_limits``): after the initial meld,
        no wild card for aces and wild cards only for five naturals; no wild card elsewhere
        while the side's wild-card meld is incomplete."""
        limits = [SEVENS]
        if not opening:
            limits += [ACES_AFTER_OPENING, FIVE_NATURALS]
        if open_wild_meld(st, side):
            limits.append(WILD_MELD_FIRST)
        return replace(super().meld_limits(st, side, opening), wild_limits=tuple(limits))

    def check_command_melds(self, st: DealState, side: str, plan: MeldPlan) -> None:
        if plan.wilds_outside_wild_meld and open_wild_meld(st, side):
            raise RuleViolation(WILD_MELD_FIRST.rule, "meld.wild_meld_first")

    def check_initial(self, st: DealState, side: str, plan: MeldPlan) -> None:
        """R-MA-INIT-1..3: the minimum from hand cards only, a clean or wild-card meld,
        and no minimum at all for a canasta laid straight from the hand."""
        # R-MA-INIT-3 [decision]: a canasta from the hand waives the minimum only, not R-MA-INIT-2
        hand_canasta = any(
            len(cards) >= 7 and plan.pile_top not in cards for _r, cards in plan.new_melds
        )
        minimum = self.initial_minimum(st.scores_before.get(side, 0))
        count = self.initial_count(plan)
        if not hand_canasta and count < minimum:
            raise RuleViolation(
                "R-MA-INIT-1", "init.short_from_hand", points=count, minimum=minimum
            )
        clean = any(
            rank == WILD_RANK or (len(cards) >= 3 and not any(CARDS[c].is_wild for c in cards))
            for rank, cards in plan.new_melds
        )
        if not clean:
            raise RuleViolation("R-MA-INIT-2", "init.clean_or_wild")

    def initial_count(self, plan: MeldPlan) -> int:
        """R-MA-INIT-1: only the hand's cards count, never the pile's top card."""
        return sum(CARDS[c].value for c in plan.cards if c != plan.pile_top)

    def check_pile_take(
        self,
        st: DealState,
        side: str,
        top: str,
        first: Sequence[str],
        existing: LaidMeld | None,
    ) -> None:
        """R-MA-PILE-1: always a natural pair from the hand; it joins an existing meld only
        of three or four cards."""
        rank = CARDS[top].rank
        pair = sum(1 for c in first if CARDS[c].is_natural and CARDS[c].rank == rank)
        if pair < 2:
            raise RuleViolation("R-MA-PILE-1", "pile.natural_pair", rank=rank)
        if existing is not None and existing.size not in (3, 4):
            raise RuleViolation("R-MA-PILE-1", "pile.pair_joins", rank=rank)

    def forced_to_take(self, st: DealState, side: str) -> bool:
        return False

    def check_discard(self, st: DealState, seat: int, card: str, going_out: bool) -> None:
        """R-MA-DISC-1."""
        hand = list(st.hands[seat])
        hand.remove(card)
        refusal = self._discard_refusal(st, card, hand, going_out)
        if refusal:
            raise RuleViolation("R-MA-DISC-1", refusal)
        if CARDS[card].rank in dead_ranks(st):
            others = [c for c in hand if CARDS[c].rank not in dead_ranks(st)]
            rest = list(st.hands[seat])
            if any(not self._discard_refusal(st, c, _without(rest, c), going_out) for c in others):
                raise RuleViolation("R-MA-DISC-1", "discard.closed_rank")

    @staticmethod
    def _discard_refusal(st: DealState, card: str, others: list[str], going_out: bool) -> str:
        c = CARDS[card]
        if c.is_three:
            return "discard.three"
        if c.is_wild and not going_out and not all(CARDS[o].is_wild for o in others):
            return "discard.wild"
        other_naturals = any(
            CARDS[o].is_natural and CARDS[o].rank not in ("A", "7") for o in others
        )
        if not st.pile and c.rank in ("A", "7") and other_naturals:
            return "discard.ace_seven"
        return ""

    def going_out_lacks(self, st: DealState, seat: int) -> list[Lack]:
        """R-OUT-3, R-MA-OUT-1."""
        lacks = [PARTNER_SAID_NO] if st.answer is False else []
        if st.canastas(st.side_of[seat]) < 2:
            lacks.append(NEEDS_TWO_CANASTAS)
        return lacks

    def must_discard_to_go_out(self) -> bool:
        return True

    def ask_refusal(self, st: DealState, seat: int) -> RuleViolation | None:
        """R-MA-OUT-1: once per deal, right after drawing."""
        if st.asked_in_deal[seat]:
            return RuleViolation("R-MA-OUT-1", "ask.once_per_deal")
        if st.phase != PLAY or st.turn_melded:
            return RuleViolation("R-MA-OUT-1", "ask.after_draw")
        return None

    def score_deal(self, st: DealState) -> dict[str, Breakdown]:
        """R-MA-SCORE-1..3, R-MA-THREE-1/2."""
        result: dict[str, Breakdown] = {}
        for side in st.sides:
            b = start_breakdown(st, self, side)
            melds = st.melds[side]
            complete = [m for m in melds if m.size >= 7]
            bonus = 0
            for m in complete:
                if m.rank == WILD_RANK:
                    b["wild_canastas"] += 1
                    bonus += _wild_canasta(m)
                elif m.has_wild:
                    b["mixed_canastas"] += 1
                    bonus += MIXED_CANASTA
                elif m.rank in ("7", "A"):
                    b["special_canastas"] += 1
                    bonus += 2500
                else:
                    b["natural_canastas"] += 1
                    bonus += NATURAL_CANASTA
            b["canasta_bonus"] = bonus
            melded = sum(card_values(m.cards) for m in melds)
            b["melds"] = melded if complete else -melded  # R-MA-SCORE-2
            penalties = 0
            for m in melds:
                if m.size >= 7:
                    continue
                if m.rank == "7" or (m.rank == "A" and not m.has_wild):
                    penalties -= 2500
                elif m.rank == WILD_RANK:
                    jokers = sum(1 for c in m.cards if CARDS[c].rank in JOKER_RANKS)
                    penalties -= 2500 if jokers == 4 else 2000
            for hand in side_hands(st, side):
                ranks = [CARDS[c].rank for c in hand]
                penalties -= 1500 * ((ranks.count("A") >= 3) + (ranks.count("7") >= 3))
            b["penalties"] = penalties
            b["hands"] = -sum(card_values(h, _hand_value) for h in side_hands(st, side))
            laid = st.red_threes[side]
            reds = sum(1 for c in laid if CARDS[c].is_red_three)
            threes = THREES[min(reds, 4)] + THREES[min(len(laid) - reds, 4)]
            b["red_threes"] = -threes if not complete else (0 if len(complete) == 1 else threes)
            result[side] = finish(b)
        return result


THREES = {0: 0, 1: 100, 2: 300, 3: 500, 4: 1000}  # R-MA-THREE-2, per colour


def _wild_canasta(meld: LaidMeld) -> int:
    """R-MA-SCORE-1: seven 2s 3000; four jokers and three 2s 2500; any other 2000."""
    jokers = sum(1 for c in meld.cards if CARDS[c].rank in JOKER_RANKS)
    if jokers == 0:
        return 3000
    if jokers == 4:
        return 2500
    return 2000


def _hand_value(card: str) -> int:
    return 5 if CARDS[card].is_three else CARDS[card].value  # R-MA-THREE-1: a three in hand −5


def _without(cards: list[str], card: str) -> list[str]:
    rest = list(cards)
    rest.remove(card)
    return rest


MODERN_AMERICAN = ModernAmerican(
    key="modern_american",
    title="Modern American Canasta (four players, 13 cards, two canastas to go out)",
    player_counts=(4,),
    decks=2,
    hand_size={4: 13},
    draw_count={4: 1},
    canastas_to_go_out={4: 2},
    target=8500,
    selectable_targets=(2500, 5000, 7500, 10000),
    options=frozenset(),  # no always_frozen: its pile always needs a natural pair anyway
    initial_minimums=((5000, 180), (3000, 155)),
    minimum_below_zero=125,  # R-MA-INIT-1: below 3000, negative totals too
    max_wilds=2,
    meld_cap=7,
    wild_melds=True,
    turn_up=False,
    going_out_bonus=100,
    concealed_bonus=0,
    stock_end="after_turn",
    meld_rule="R-MA-MELD-1",
    ratio_rules=("R-MA-MELD-1", "R-MA-MELD-1"),
    wilds_outnumbered=False,  # R-MA-MELD-1: Q Q 2 2 is a meld
    wild_meld_rule="R-MA-MELD-4",
    black_three_meld_max=0,
    three_meld_rule="R-MA-THREE-1",
)
