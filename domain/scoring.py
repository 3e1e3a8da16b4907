"""What every entry's scoring shares: the parts of a side's deal score and the helpers that
fill them. Each entry scores a deal in its own module (``Variant.score_deal``: classic in
``domain.variants.base``, the others in ``domain.variants.<entry>``).

Every entry reports the same breakdown per side, so that one sum holds everywhere:
``total = melds + canasta_bonus + going_out + concealed + red_threes + hands + penalties
+ ponytails + cut_bonus``. A part an entry does not have is 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from domain.cards import CARDS
from domain.deal_events import Breakdown
from domain.state import DealState

NATURAL_CANASTA = 500  # R-MELD-6
MIXED_CANASTA = 300
PARTS = (
    "melds",
    "canasta_bonus",
    "going_out",
    "concealed",
    "red_threes",
    "hands",
    "penalties",
    "ponytails",
    "cut_bonus",
)


class Bonuses(Protocol):
    """What the common parts of a breakdown need of an entry (a ``Variant`` has it)."""

    @property
    def going_out_bonus(self) -> int: ...

    @property
    def concealed_bonus(self) -> int: ...

    def exact_cut_bonus(self, n: int) -> int: ...


def card_values(cards: Iterable[str], value: Callable[[str], int] | None = None) -> int:
    return sum((value or (lambda c: CARDS[c].value))(c) for c in cards)


def side_hands(st: DealState, side: str) -> list[list[str]]:
    return [st.hands[s] for s in st.order if st.side_of[s] == side]


def finish(b: Breakdown) -> Breakdown:
    b["total"] = sum(b[p] for p in PARTS)
    return b


def start_breakdown(st: DealState, v: Bonuses, side: str) -> Breakdown:
    """Every part 0 but the going-out, concealed and exact-cut bonuses (R-SCORE-1, R-OUT-5)."""
    went_out = st.went_out is not None and st.side_of[st.went_out] == side
    b = dict.fromkeys(PARTS, 0)
    b.update(natural_canastas=0, mixed_canastas=0, wild_canastas=0, special_canastas=0)
    b["going_out"] = v.going_out_bonus if went_out else 0
    b["concealed"] = v.concealed_bonus if went_out and st.concealed else 0
    if st.cut is not None and st.side_of[st.cutter] == side:
        b["cut_bonus"] = v.exact_cut_bonus(st.cut)
    return b
