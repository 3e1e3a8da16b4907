"""Scoring a deal (R-SCORE-1..4) and the end of the game (R-GAME-1)."""

from __future__ import annotations

from collections.abc import Mapping

from domain.cards import CARDS
from domain.state import DealState
from domain.variants.base import Variant

NATURAL_CANASTA = 500  # R-MELD-6
MIXED_CANASTA = 300
GOING_OUT = 100  # R-SCORE-1
CONCEALED = 100


def score_deal(st: DealState, v: Variant) -> dict[str, dict[str, int]]:
    """Each side's score for the deal with its breakdown; ``total`` is the deal's score."""
    result: dict[str, dict[str, int]] = {}
    for side in st.sides:
        melds = st.melds[side]
        melded = sum(CARDS[c].value for m in melds for c in m["cards"])
        natural = mixed = 0
        for m in melds:
            if m["rank"] != "3" and len(m["cards"]) >= 7:
                if any(CARDS[c].is_wild for c in m["cards"]):
                    mixed += 1
                else:
                    natural += 1
        going_out = GOING_OUT if st.went_out is not None and st.side_of[st.went_out] == side else 0
        concealed = CONCEALED if going_out and st.concealed else 0
        red = v.red_three_bonus(len(st.red_threes[side]))
        if not melds:  # R-SCORE-4: no meld, the red threes count against the side
            red = -red
        in_hand = sum(
            CARDS[c].value for s in st.order if st.side_of[s] == side for c in st.hands[s]
        )
        canasta_bonus = NATURAL_CANASTA * natural + MIXED_CANASTA * mixed
        result[side] = {
            "melds": melded,
            "natural_canastas": natural,
            "mixed_canastas": mixed,
            "canasta_bonus": canasta_bonus,
            "going_out": going_out,
            "concealed": concealed,
            "red_threes": red,
            "hands": -in_hand,
            "total": melded + canasta_bonus + going_out + concealed + red - in_hand,
        }
    return result


def winners(totals: Mapping[str, int], target: int) -> list[str] | None:
    """R-GAME-1: after a complete deal, the highest totals win once any side reached the
    target (equal highest totals share the win); None while the game goes on."""
    if not totals or max(totals.values()) < target:
        return None
    best = max(totals.values())
    return sorted(side for side, total in totals.items() if total == best)
