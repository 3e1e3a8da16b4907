"""Scoring a deal: R-SCORE-1..4 (classic, extra_six), R-MA-SCORE-*/R-MA-THREE-2
(modern_american) and R-PT-SCORE-1 (ponytail).

Every entry reports the same breakdown per side, so that one sum holds everywhere:
``total = melds + canasta_bonus + going_out + concealed + red_threes + hands + penalties
+ ponytails + cut_bonus``. A part an entry does not have is 0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from domain.cards import CARDS
from domain.state import DealState
from domain.variants.base import WILD_RANK, Variant

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


def _values(cards: Iterable[str], value: Callable[[str], int] | None = None) -> int:
    return sum((value or (lambda c: CARDS[c].value))(c) for c in cards)


def _has_wild(meld: dict[str, Any]) -> bool:
    return any(CARDS[c].is_wild for c in meld["cards"])


def _side_hands(st: DealState, side: str) -> list[list[str]]:
    return [st.hands[s] for s in st.order if st.side_of[s] == side]


def _finish(b: dict[str, int]) -> dict[str, int]:
    b["total"] = sum(b[p] for p in PARTS)
    return b


def _base(st: DealState, v: Variant, side: str) -> dict[str, int]:
    went_out = st.went_out is not None and st.side_of[st.went_out] == side
    b = dict.fromkeys(PARTS, 0)
    b.update(natural_canastas=0, mixed_canastas=0, wild_canastas=0, special_canastas=0)
    b["going_out"] = v.going_out_bonus if went_out else 0
    b["concealed"] = v.concealed_bonus if went_out and st.concealed else 0
    if st.cut is not None and st.side_of[st.cutter] == side:
        b["cut_bonus"] = v.exact_cut_bonus(st.cut)
    return b


def score_classic(st: DealState, v: Variant) -> dict[str, dict[str, int]]:
    """R-SCORE-1..4: melded values, canasta bonuses, going out (and concealed), red threes
    (negative without a meld), minus the cards left in the side's hands."""
    result: dict[str, dict[str, int]] = {}
    for side in st.sides:
        b = _base(st, v, side)
        melds = st.melds[side]
        b["melds"] = sum(_values(m["cards"]) for m in melds)
        for m in st.completed(side):
            b["mixed_canastas" if _has_wild(m) else "natural_canastas"] += 1
        b["canasta_bonus"] = (
            NATURAL_CANASTA * b["natural_canastas"] + MIXED_CANASTA * b["mixed_canastas"]
        )
        red = v.red_three_bonus(len(st.red_threes[side]))
        b["red_threes"] = red if melds else -red  # R-SCORE-4
        b["hands"] = -sum(_values(h) for h in _side_hands(st, side))
        result[side] = _finish(b)
    return result


# --- modern_american ----------------------------------------------------------------------

MA_THREES = {0: 0, 1: 100, 2: 300, 3: 500, 4: 1000}  # R-MA-THREE-2, per colour


def _ma_wild_canasta(meld: dict[str, Any]) -> int:
    """R-MA-SCORE-1: seven 2s 3000; four jokers and three 2s 2500; any other 2000."""
    jokers = sum(1 for c in meld["cards"] if CARDS[c].rank in ("BJ", "LJ"))
    if jokers == 0:
        return 3000
    if jokers == 4:
        return 2500
    return 2000


def _ma_hand_value(card: str) -> int:
    return 5 if CARDS[card].is_three else CARDS[card].value  # R-MA-THREE-1: a three in hand −5


def score_modern_american(st: DealState, v: Variant) -> dict[str, dict[str, int]]:
    result: dict[str, dict[str, int]] = {}
    for side in st.sides:
        b = _base(st, v, side)
        melds = st.melds[side]
        complete = [m for m in melds if len(m["cards"]) >= 7]
        bonus = 0
        for m in complete:
            if m["rank"] == WILD_RANK:
                b["wild_canastas"] += 1
                bonus += _ma_wild_canasta(m)
            elif _has_wild(m):
                b["mixed_canastas"] += 1
                bonus += MIXED_CANASTA
            elif m["rank"] in ("7", "A"):
                b["special_canastas"] += 1
                bonus += 2500
            else:
                b["natural_canastas"] += 1
                bonus += NATURAL_CANASTA
        b["canasta_bonus"] = bonus
        melded = sum(_values(m["cards"]) for m in melds)
        b["melds"] = melded if complete else -melded  # R-MA-SCORE-2
        penalties = 0
        for m in melds:
            if len(m["cards"]) >= 7:
                continue
            if m["rank"] == "7" or (m["rank"] == "A" and not _has_wild(m)):
                penalties -= 2500
            elif m["rank"] == WILD_RANK:
                jokers = sum(1 for c in m["cards"] if CARDS[c].rank in ("BJ", "LJ"))
                penalties -= 2500 if jokers == 4 else 2000
        for hand in _side_hands(st, side):
            ranks = [CARDS[c].rank for c in hand]
            penalties -= 1500 * ((ranks.count("A") >= 3) + (ranks.count("7") >= 3))
        b["penalties"] = penalties
        b["hands"] = -sum(_values(h, _ma_hand_value) for h in _side_hands(st, side))
        laid = st.red_threes[side]
        reds = sum(1 for c in laid if CARDS[c].is_red_three)
        threes = MA_THREES[min(reds, 4)] + MA_THREES[min(len(laid) - reds, 4)]
        b["red_threes"] = -threes if not complete else (0 if len(complete) == 1 else threes)
        result[side] = _finish(b)
    return result


# --- ponytail -----------------------------------------------------------------------------


def _pt_hand_value(card: str) -> int:
    return 100 if CARDS[card].is_black_three else CARDS[card].value  # R-PT-SCORE-1


def score_ponytail(st: DealState, v: Variant) -> dict[str, dict[str, int]]:
    result: dict[str, dict[str, int]] = {}
    for side in st.sides:
        b = _base(st, v, side)
        melds = st.melds[side]
        b["melds"] = sum(_values(m["cards"]) for m in melds)
        bonus = 0
        for m in st.completed(side):
            if m["rank"] == WILD_RANK:
                b["wild_canastas"] += 1
                bonus += 2500
            elif _has_wild(m):
                b["mixed_canastas"] += 1
                bonus += MIXED_CANASTA
            elif m["rank"] == "7":
                b["special_canastas"] += 1
                bonus += 5000
            else:
                b["natural_canastas"] += 1
                bonus += NATURAL_CANASTA
        b["canasta_bonus"] = bonus
        red = 100 * len(st.red_threes[side])
        b["red_threes"] = red if melds else -red
        seats = [s for s in st.order if st.side_of[s] == side]
        b["hands"] = -sum(_values(st.hands[s], _pt_hand_value) for s in seats)
        b["ponytails"] = -sum(_values(st.ponytails[s], _pt_hand_value) for s in seats)
        result[side] = _finish(b)
    return result
