"""`ponytail` (docs/rules/ponytail.md): six decks, 15-card hands and 13-card face-down
ponytails, draw two, melds capped at seven, wild-card canastas, four kinds of canasta to
go out, and a game of 50000 points or four deals."""

from __future__ import annotations

from dataclasses import dataclass

from domain.cards import CARDS
from domain.constants import WILD_RANK
from domain.deal_events import Breakdown
from domain.melds import LaidMeld
from domain.scoring import MIXED_CANASTA, NATURAL_CANASTA, card_values, finish, start_breakdown
from domain.state import DealState
from domain.variants.base import PARTNER_SAID_NO, Lack, Variant

EXACT_CUT = 61  # R-PT-DEAL-1: 4 x 15 + 1


@dataclass(frozen=True)
class Ponytail(Variant):
    def freezes_turn_up(self, card: str) -> bool:
        """R-PT-DEAL-2: a wild, a 7 or a red three turned up lies crosswise."""
        info = CARDS[card]
        return info.is_wild or info.is_red_three or info.rank == "7"

    def exact_cut_bonus(self, n: int) -> int:
        return 100 if n == EXACT_CUT else 0

    def going_out_lacks(self, st: DealState, seat: int) -> list[Lack]:
        """R-OUT-3, R-PT-PONY-1, then R-PT-OUT-1: one lack per kind of canasta missing (each
        refusal names them all)."""
        lacks = [PARTNER_SAID_NO] if st.answer is False else []
        if not st.ponytail_up[seat]:
            lacks.append(
                Lack(
                    "ponytail_face_down",
                    "R-PT-PONY-1",
                    "out.ponytail_down",
                )
            )
        kinds = {canasta_kind(m) for m in st.completed(st.side_of[seat])}
        missing = [k for k in CANASTA_KINDS if k not in kinds]
        named = {"kinds": tuple(missing)}
        lacks += [Lack(CANASTA_LACKS[k], "R-PT-OUT-1", "out.canasta_kinds", named) for k in missing]
        return lacks

    def score_deal(self, st: DealState) -> dict[str, Breakdown]:
        """R-PT-SCORE-1: wild canastas 2500, natural 7s 5000; black threes left in a hand
        or a ponytail count 100 against it."""
        result: dict[str, Breakdown] = {}
        for side in st.sides:
            b = start_breakdown(st, self, side)
            melds = st.melds[side]
            b["melds"] = sum(card_values(m.cards) for m in melds)
            bonus = 0
            for m in st.completed(side):
                if m.rank == WILD_RANK:
                    b["wild_canastas"] += 1
                    bonus += 2500
                elif m.has_wild:
                    b["mixed_canastas"] += 1
                    bonus += MIXED_CANASTA
                elif m.rank == "7":
                    b["special_canastas"] += 1
                    bonus += 5000
                else:
                    b["natural_canastas"] += 1
                    bonus += NATURAL_CANASTA
            b["canasta_bonus"] = bonus
            red = 100 * len(st.red_threes[side])
            b["red_threes"] = red if melds else -red
            seats = [s for s in st.order if st.side_of[s] == side]
            b["hands"] = -sum(card_values(st.hands[s], _hand_value) for s in seats)
            b["ponytails"] = -sum(card_values(st.ponytails[s], _hand_value) for s in seats)
            result[side] = finish(b)
        return result


def _hand_value(card: str) -> int:
    return 100 if CARDS[card].is_black_three else CARDS[card].value  # R-PT-SCORE-1


#: R-PT-OUT-1: the kinds of canasta going out needs, and the menu's code for each one missing.
CANASTA_KINDS = ("natural", "mixed", "natural 7s", "wild")
CANASTA_LACKS = {
    "natural": "needs_natural_canasta",
    "mixed": "needs_mixed_canasta",
    "natural 7s": "needs_natural_sevens_canasta",
    "wild": "needs_wild_canasta",
}


def canasta_kind(meld: LaidMeld) -> str:
    """R-PT-OUT-1 [decision]: a natural-7s canasta is its own kind, not a natural one."""
    if meld.rank == WILD_RANK:
        return "wild"
    if meld.has_wild:
        return "mixed"
    return "natural 7s" if meld.rank == "7" else "natural"


PONYTAIL = Ponytail(
    key="ponytail",
    title="Ponytail Canasta (four players, six decks, ponytails, four canastas to go out)",
    player_counts=(4,),
    decks=6,
    hand_size={4: 15},
    draw_count={4: 2},
    canastas_to_go_out={4: 4},
    target=50000,
    initial_minimums=((30000, 120), (15000, 90)),
    minimum_below_zero=50,  # R-PT-INIT-1: below 15000, negative totals too [decision]
    max_wilds=3,
    meld_cap=7,
    wild_melds=True,
    cutter_offset=-1,  # R-PT-DEAL-1: the dealer's right cuts
    ponytail_size=13,
    going_out_bonus=200,
    concealed_bonus=0,
    stock_end="after_turn",
    max_deals=4,
    meld_rule="R-PT-MELD-1",
    ratio_rules=("R-PT-MELD-1", "R-PT-MELD-1"),
    initial_rule="R-PT-INIT-1",
    black_three_stops_turn_up=True,  # R-PT-DEAL-2: "until it is none of these"
    black_three_meld_max=24,  # R-PT-MELD-2: three or more
)
