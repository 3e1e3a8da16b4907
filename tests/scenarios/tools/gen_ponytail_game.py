"""Generate the `ponytail` scenarios of one-turn deals: the game's end after four deals, and
the scoring of a ponytail never picked up.

Run from the repository root:

    .venv/bin/python tests/scenarios/tools/gen_ponytail_game.py

It writes (the committed JSON is what the tests run; this script only saves typing):

- game/r-pt-game-1_the_game_ends_after_the_fourth_deal.json
- ponytail/r-pt-pony-1_r-pt-score-1_unpicked_ponytail_counts_as_a_hand_no_concealed_bonus.json

In every deal the dealer's left goes out in his first turn, as in
`r-pt-score-1_going_out_four_canastas_natural_sevens_5000.json`: he takes the turned-up ace
with six aces (a natural canasta), picks up his ponytail at once, lays seven sevens, a mixed
canasta of queens and a wild-card canasta, and discards. Every card is named in full notation.
The script computes the scores itself (R-PT-SCORE-1, R-PT-PONY-1, R-CARD-3); it does not ask
the engine.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scenario_cards import (  # type: ignore[import-not-found]
    SUITS,
    rank,
    value,
)
from scenario_json import write  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parents[1]  # tests/scenarios
FILLER_RANKS = ("4", "5", "6", "8", "9", "10", "J", "K")  # no wild, three, 7 or ace
SIDE = {0: "A", 1: "B", 2: "A", 3: "B"}


def left_value(card: str) -> int:
    """R-PT-SCORE-1, R-PT-PONY-1 [decision]: a card left in a hand or an unpicked ponytail;
    a black three -100 (instead of 5), a red three in an unpicked ponytail 0."""
    face = card.split("/")[0]
    if face in ("3S", "3C"):
        return 100
    if face in ("3H", "3D"):
        return 0
    points: int = value(card)
    return points


class Cards:
    """The 324 cards of one fresh `ponytail` deal (six decks)."""

    def __init__(self) -> None:
        faces = [r + s for r in ("A", "2", "3", *FILLER_RANKS, "7", "Q") for s in SUITS]
        self.left = [f"{f}/{d}" for d in range(1, 7) for f in [*faces, "BJ", "LJ"]]

    def take(self, *names: str) -> list[str]:
        for name in names:
            self.left.remove(name)
        return list(names)

    def fillers(self, n: int) -> list[str]:
        got: list[str] = []
        while len(got) < n:
            for r in FILLER_RANKS:
                found = [c for c in self.left if rank(c) == r]
                if found and len(got) < n:
                    got.append(found[0])
                    self.left.remove(found[0])
        return got


ACES = ["AH/1", "AD/1", "AC/1", "AS/2", "AH/2", "AD/2"]
SEVENS = ["7S/1", "7H/1", "7D/1", "7C/1", "7S/2", "7H/2", "7D/2"]
MIXED = ["QS/1", "QH/1", "QD/1", "QC/1", "2C/1", "2C/2", "BJ/1"]
WILDS = ["2S/1", "2H/1", "2D/1", "2S/2", "2H/2", "2D/2", "LJ/1"]
LAST = "KD/1"


def one_turn_deal(
    dealer: int, cut: int, threes: list[str] | None = None
) -> tuple[dict[str, Any], dict[str, int]]:
    """The dealer's left goes out in his first turn; ``threes`` go into his partner's
    ponytail, which is never picked up. Returns the deal and its scores per side."""
    out = (dealer + 1) % 4
    partner = (out + 2) % 4
    cards = Cards()
    turn_up = cards.take("AS/1")
    hands = {out: cards.take(*ACES, *SEVENS, *MIXED[:2])}
    ponytails = {out: cards.take(*MIXED[2:], *WILDS, LAST)}
    ponytails[partner] = cards.take(*(threes or []))
    for seat in range(4):
        hands.setdefault(seat, [])
        hands[seat] += cards.fillers(15 - len(hands[seat]))
        ponytails.setdefault(seat, [])
        ponytails[seat] += cards.fillers(13 - len(ponytails[seat]))
    melds = [["AS/1", *ACES], SEVENS, MIXED, WILDS]
    bonus = 500 + 5000 + 300 + 2500 + 200  # R-PT-SCORE-1: no concealed bonus
    scores = {"A": 0, "B": 0}
    scores[SIDE[out]] += sum(value(c) for m in melds for c in m) + bonus
    for seat in range(4):
        if seat != out:
            left = hands[seat] + ponytails[seat]  # R-PT-PONY-1: never picked up
            scores[SIDE[seat]] -= sum(left_value(c) for c in left)
    if cut == 61:  # R-PT-DEAL-1: the cutter (the dealer's right) lifted exactly 61 cards
        scores[SIDE[(dealer + 3) % 4]] += 100
    steps = [
        {
            "seat": out,
            "do": "take_pile",
            "melds": [["TOP", *ACES]],
            "expect": "ok",
            "then": {"melds": {SIDE[out]: {"A": 7}}},
        },
        {
            "seat": out,
            "do": "pick_up_ponytail",
            "expect": "ok",
            "then": {"hand_count": {str(out): 22}},
        },
        {"seat": out, "do": "meld", "melds": [SEVENS, MIXED], "expect": "ok"},
        {
            "seat": out,
            "do": "meld",
            "melds": [WILDS],
            "discard": LAST,
            "expect": "ok",
            "then": {"deal_over": True},
        },
    ]
    deal = {
        "dealer": dealer,
        "cut": cut,
        "hands": {str(s): hands[s] for s in range(4)},
        "ponytails": {str(s): ponytails[s] for s in range(4)},
        "stock": turn_up,
    }
    return {"deal": deal, "steps": steps}, scores


def game() -> dict[str, Any]:
    """R-PT-GAME-1: four deals, nobody near 50000; the game ends after the fourth."""
    totals = {"A": 0, "B": 0}
    deals = []
    for number, dealer in enumerate((3, 0, 1, 2), start=1):  # R-DEAL-2: the room's left
        deal, scores = one_turn_deal(dealer, 61 if number == 1 else 50 + number)
        totals = {s: totals[s] + scores[s] for s in totals}
        last = number == 4
        best = max(totals.values())
        deal["expect_end"] = {
            "deal_scores": scores,
            "totals": dict(totals),
            "game_over": last,
            "winners": sorted(s for s, t in totals.items() if t == best) if last else None,
        }
        deals.append(deal)
    assert max(totals.values()) < 50000 and totals["A"] > totals["B"]
    return {
        "name": "R-PT-GAME-1, R-DEAL-2: ponytail, four deals (dealers 3, 0, 1, 2: the seat to the "
        "previous dealer's left), in each the dealer's left goes out in his first turn (sides A, "
        "B, A, B); side A's cutter makes the exact cut 61 in deal 1 (+100, R-PT-DEAL-1). Nobody "
        f"comes near 50000 (totals {totals['A']} and {totals['B']}), yet the game is over after "
        "the fourth deal and the higher total wins. Generated by "
        "tests/scenarios/tools/gen_ponytail_game.py",
        "entry": "ponytail",
        "players": 4,
        "deals": deals,
    }


def unpicked() -> dict[str, Any]:
    """R-PT-PONY-1 and R-PT-SCORE-1 [decisions] in one deal, with their arithmetic."""
    deal, scores = one_turn_deal(3, 60, threes=["3S/1", "3C/1", "3H/1", "3D/1"])
    deal["expect_end"] = {"deal_over": True, "red_threes": {"A": 0, "B": 0}, "deal_scores": scores}
    return {
        "name": "R-PT-PONY-1 [decision: a ponytail never picked up counts as if left in the hand: "
        "card values, a black three -100, a red three 0], R-PT-SCORE-1 [decision: no concealed "
        "bonus]: seat 0 goes out in his first turn, having laid nothing before, with seven aces "
        "(the turned-up one taken), seven sevens, a mixed and a wild-card canasta: 200 for going "
        "out, no concealed 100. His partner's ponytail, never picked up, holds 3S 3C 3H 3D: "
        "-100 -100 0 0 besides its nine other cards; the red threes are not laid. "
        "Generated by tests/scenarios/tools/gen_ponytail_game.py",
        "entry": "ponytail",
        "players": 4,
        **deal,
    }


def main() -> None:
    files = {
        ROOT / "game" / "r-pt-game-1_the_game_ends_after_the_fourth_deal.json": game(),
        ROOT
        / "ponytail"
        / "r-pt-pony-1_r-pt-score-1_unpicked_ponytail_counts_as_a_hand_no_concealed_bonus.json": (
            unpicked()
        ),
    }
    for path, data in files.items():
        write(path, data)


if __name__ == "__main__":
    main()
