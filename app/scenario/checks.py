"""The checks of a step's ``then`` and of a deal's ``expect_end`` (docs/scenarios.md)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any
from uuid import UUID

from app.application import CanastaApp
from app.scenario.load import CHECK_KEYS
from app.scenario.model import Failure, require
from domain.cards import CARDS
from domain.state import OVER, DealState
from domain.table import FINISHED, Table


def _same_card(expected: str, actual: str | None) -> bool:
    if actual is None:
        return False
    return expected == actual if "/" in expected else expected == CARDS[actual].face


def _meld_counts(st: DealState, side: str) -> dict[str, Any]:
    by_rank: dict[str, list[int]] = {}
    for meld in st.melds[side]:
        rank = "W" if all(CARDS[c].is_wild for c in meld.cards) else meld.rank
        by_rank.setdefault(rank, []).append(meld.size)
    return {r: (n[0] if len(n) == 1 else n) for r, n in by_rank.items()}


def _threes(st: DealState, side: str, black: bool) -> int:
    """Threes laid in the side's area of one colour (`modern_american` lays both)."""
    return sum(1 for c in st.red_threes[side] if CARDS[c].is_black_three == black)


def check(
    app: CanastaApp, table_id: UUID, st: DealState, expect: Mapping[str, Any], where: str
) -> list[Failure]:
    unknown = set(expect) - CHECK_KEYS
    require(not unknown, f"{where}: unknown checks {sorted(unknown)}")
    table = app.get_table(table_id)
    failures: list[Failure] = []

    def compare(key: str, expected: Any, actual: Any) -> None:
        if expected != actual:
            failures.append(Failure(f"{where} {key}", expected, actual))

    for key, expected in expect.items():
        if key == "pile_top":
            if expected is None:
                compare(key, None, st.pile_top)
            elif not _same_card(expected, st.pile_top):
                failures.append(Failure(f"{where} pile_top", expected, st.pile_top))
        elif key == "pile_size":
            compare(key, expected, len(st.pile))
        elif key == "pile_frozen":
            compare(key, expected, st.pile_frozen)
        elif key == "stock_size":
            compare(key, expected, len(st.stock))
        elif key == "hand_count":
            for seat, n in expected.items():
                compare(f"hand_count[{seat}]", n, len(st.hands[int(seat)]))
        elif key == "hand":
            for seat, cards in expected.items():
                actual = st.hands[int(seat)]
                full = all("/" in c for c in cards)
                got = Counter(actual if full else [CARDS[c].face for c in actual])
                want = Counter(c if full or "/" not in c else CARDS[c].face for c in cards)
                if got != want:
                    failures.append(Failure(f"{where} hand[{seat}]", sorted(want), sorted(got)))
        elif key == "melds":
            for side, ranks in expected.items():
                compare(f"melds[{side}]", ranks, _meld_counts(st, side))
        elif key == "red_threes":
            for side, n in expected.items():
                compare(f"red_threes[{side}]", n, _threes(st, side, black=False))
        elif key == "black_threes":
            for side, n in expected.items():
                compare(f"black_threes[{side}]", n, _threes(st, side, black=True))
        elif key == "turn":
            compare(key, expected, st.turn if st.phase != OVER else None)
        elif key == "phase":
            compare(key, expected, st.phase)
        elif key == "deal_over":
            compare(key, expected, st.phase == OVER)
        elif key == "deal_scores":
            actual_scores = {s: b["total"] for s, b in (st.scores or {}).items()}
            compare(key, expected, {s: actual_scores.get(s) for s in expected})
        elif key == "totals":
            compare(key, expected, {s: table.totals.get(s) for s in expected})
        elif key == "game_over":
            compare(key, expected, table.status == FINISHED)
        elif key == "winners":
            compare(key, expected, table.winners)
    return failures


def final_report(st: DealState, table: Table) -> dict[str, Any]:
    return {
        "deals": len(table.deals),
        "phase": st.phase,
        "turn": st.turn,
        "pile": {"top": st.pile_top, "size": len(st.pile), "frozen": st.pile_frozen},
        "stock_size": len(st.stock),
        "hands": {str(s): list(st.hands[s]) for s in st.order},
        "melds": {side: [m.to_json() for m in st.melds[side]] for side in st.sides},
        "red_threes": st.red_threes,
        "deal_scores": st.scores,
        "totals": table.totals,
        "status": table.status,
        "winners": table.winners,
    }
