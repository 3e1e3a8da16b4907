"""Generate the long `modern_american` scenarios that play a deal down to the stock's end.

Run from the repository root:

    .venv/bin/python tests/scenarios/tools/gen_modern_american.py

It writes (the committed JSON is what the tests run; this script only saves typing):

- modern_american/r-ma-end-1_stock_runs_out_last_drawer_finishes_his_turn_then_the_deal_ends.json
- modern_american/r-ma-three-1_three_as_the_stocks_last_card_stays_in_the_hand_and_ends_the_deal.json

Every card is named in full notation (all four hands and the whole stock), so the deal does not
depend on the fill order of docs/scenarios.md. Both deals share one layout: dealer 3 (seat 0 plays first);
every wild card, every K, Q and J and every three is dealt, so the stock holds only aces and 4-10
(natural cards that may always be discarded once the pile is not empty). Seat 0 lays seven kings
in his first turn, seat 1 seven queens, seat 3 seven jacks; every other turn draws a card and
discards it. The script plays the deal with its own tiny model of
docs/rules/modern_american.md and computes the expected scores itself (R-MA-SCORE-1/2,
R-MA-THREE-2, R-CARD-3 values); it does not ask the engine.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scenario_cards import (  # type: ignore[import-not-found]
    full_deck,
    is_natural,
    is_red_three,
    is_wild,
    rank,
)
from scenario_cards import value as classic_value
from scenario_json import write  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parents[1]  # tests/scenarios
OUT = ROOT / "modern_american"
SIDE = {0: "A", 1: "B", 2: "A", 3: "B"}


def is_three(card: str) -> bool:
    face: str = rank(card)
    return face == "3"


def value(card: str) -> int:
    """R-CARD-3; R-MA-THREE-1: a three left in a hand counts 5, whatever its colour."""
    points: int = 5 if is_red_three(card) else classic_value(card)
    return points


THREES = {0: 0, 1: 100, 2: 300, 3: 500, 4: 1000}  # R-MA-THREE-2, per colour


class Deal:
    """A 4-player modern_american deal, dealer seat 3 (seat 0 plays first), every card named."""

    def __init__(self, hands: dict[int, list[str]], replacements: list[str], draws: list[str]):
        assert all(len(h) == 13 for h in hands.values())
        named = [c for h in hands.values() for c in h] + replacements + draws
        assert sorted(named) == sorted(full_deck()), "every card exactly once"
        self.dealt = {s: list(h) for s, h in hands.items()}
        self.stock_order = replacements + draws
        self.hands = {s: list(h) for s, h in hands.items()}
        self.stock = list(self.stock_order)
        self.pile: list[str] = []
        self.threes: dict[str, list[str]] = {"A": [], "B": []}
        self.melds: dict[str, list[list[str]]] = {"A": [], "B": []}
        self.steps: list[dict[str, Any]] = []
        self.over = False
        self.turn = 0
        # R-MA-THREE-1 / R-DEAL-6: threes laid and replaced, seat by seat from the dealer's left
        for seat in (0, 1, 2, 3):
            while any(is_three(c) for c in self.hands[seat]):
                card = next(c for c in self.hands[seat] if is_three(c))
                self.hands[seat].remove(card)
                self.threes[SIDE[seat]].append(card)
                self.hands[seat].append(self.stock.pop(0))

    def threes_laid(self) -> dict[str, dict[str, int]]:
        """The `red_threes` and `black_threes` checks: each counts its own colour only."""
        red = {s: sum(1 for c in t if is_red_three(c)) for s, t in self.threes.items()}
        black = {s: len(t) - red[s] for s, t in self.threes.items()}
        return {"red_threes": red, "black_threes": black}

    def dead(self) -> set[str]:
        """R-MA-MELD-2: ranks of a complete natural canasta."""
        return {
            rank(m[0])
            for ms in self.melds.values()
            for m in ms
            if len(m) == 7 and not any(is_wild(c) for c in m)
        }

    def draw(self, check: dict[str, Any] | None = None) -> str:
        seat = self.turn
        card = self.stock.pop(0)
        then: dict[str, Any] = {"stock_size": len(self.stock)}
        if is_three(card):
            # only the stock's last card is a three in these deals: it stays in the hand
            assert not self.stock, "a three inside the stock would be laid and replaced"
            self.over = True
        self.hands[seat].append(card)
        then["hand_count"] = {str(seat): len(self.hands[seat])}
        then.update(check or {})
        self.steps.append({"seat": seat, "do": "draw", "expect": "ok", "then": then})
        return card

    def meld(self, melds: list[list[str]], check: dict[str, Any] | None = None) -> None:
        seat = self.turn
        for cards in melds:
            assert len({rank(c) for c in cards}) == 1 and 3 <= len(cards) <= 7
            assert rank(cards[0]) not in self.dead()
            for card in cards:
                self.hands[seat].remove(card)
            self.melds[SIDE[seat]].append(list(cards))
        assert len(self.hands[seat]) >= 2, "keep a card to discard (R-MA-DISC-1)"
        step: dict[str, Any] = {"seat": seat, "do": "meld", "melds": melds, "expect": "ok"}
        if check:
            step["then"] = check
        self.steps.append(step)

    def discard(self, card: str, check: dict[str, Any] | None = None) -> None:
        """R-MA-DISC-1, as far as these deals need it."""
        seat = self.turn
        others = [c for c in self.hands[seat] if c != card]
        assert not is_wild(card) and not is_three(card) and rank(card) not in self.dead()
        if not self.pile and rank(card) in ("A", "7"):
            assert not any(is_natural(c) and rank(c) not in ("A", "7") for c in others)
        self.hands[seat].remove(card)
        self.pile.append(card)
        then: dict[str, Any] = {"pile_top": card, "pile_size": len(self.pile)}
        if not self.stock:  # R-MA-END-1: the turn that emptied the stock is over
            self.over = True
            then.update({"deal_over": True, "phase": "over"})
        else:
            then["turn"] = (seat + 1) % 4
        then.update(check or {})
        self.steps.append(
            {"seat": seat, "do": "discard", "card": card, "expect": "ok", "then": then}
        )
        self.turn = (seat + 1) % 4

    def plain_turn(self) -> None:
        self.discard(self.draw())

    def scores(self) -> dict[str, int]:
        """R-MA-SCORE-1/2 and R-MA-THREE-2 for a deal that ended without going out."""
        out = {}
        for side, seats in (("A", (0, 2)), ("B", (1, 3))):
            melds = self.melds[side]
            complete = [m for m in melds if len(m) == 7]
            melded = sum(value(c) for m in melds for c in m)
            total = melded if complete else -melded
            for m in complete:
                natural = not any(is_wild(c) for c in m)
                if natural and rank(m[0]) in ("7", "A"):
                    total += 2500
                else:
                    total += 500 if natural else 300  # no wild-card melds in these deals
            for m in melds:  # R-MA-SCORE-2: incomplete sevens / natural aces
                if len(m) < 7 and rank(m[0]) in ("7", "A"):
                    total -= 2500
            reds = sum(1 for c in self.threes[side] if is_red_three(c))
            blacks = len(self.threes[side]) - reds
            threes = THREES[reds] + THREES[blacks]
            total += -threes if not complete else (0 if len(complete) == 1 else threes)
            for seat in seats:
                hand = self.hands[seat]
                total -= sum(value(c) for c in hand)
                ranks = [rank(c) for c in hand]
                total -= 1500 * ((ranks.count("A") >= 3) + (ranks.count("7") >= 3))
            out[side] = total
        return out


KINGS = ["KS/1", "KH/1", "KD/1", "KC/1", "KS/2", "KH/2", "KD/2"]
QUEENS = ["QS/1", "QH/1", "QD/1", "QC/1", "QS/2", "QH/2", "QD/2"]
JACKS = ["JS/1", "JH/1", "JD/1", "JC/1", "JS/2", "JH/2", "JD/2"]
SEAT2 = ["KC/2", "QC/2", "JC/2", "2D/2", "2C/2", "BJ/2", "LJ/1", "LJ/2", "3S/2"]
SEAT2_FILL = ["9S/1", "9H/1", "5S/1", "5H/1"]
SEAT0 = [*KINGS, "3H/1", "3H/2", "3D/1", "2S/1", "2H/1", "2D/1"]
SEAT1 = [*QUEENS, "3D/2", "3S/1", "2C/1", "2S/2", "2H/2", "BJ/1"]
SIXES = ["6S/1", "6H/1", "6D/1", "6C/1", "6S/2", "6H/2", "6D/2", "6C/2"]


def middle(exclude: set[str]) -> list[str]:
    """The stock's draws between the first and the last: every other ace and 4-10, in a
    fixed interleaved order (aces and sevens among them are discarded on a non-empty pile)."""
    cards = [c for c in full_deck() if is_natural(c) and rank(c) not in ("K", "Q", "J")]
    cards = [c for c in cards if c not in exclude]
    by_rank: dict[str, list[str]] = {}
    for c in cards:
        by_rank.setdefault(rank(c), []).append(c)
    order: list[str] = []
    while any(by_rank.values()):
        for r in ("4", "A", "5", "7", "8", "9", "10", "6"):
            if by_rank.get(r):
                order.append(by_rank[r].pop(0))
    return order


def opening_turns(d: Deal) -> None:
    """Turns 1-4: seat 0 lays seven kings, seat 1 seven queens, seat 2 draws and discards,
    seat 3 seven jacks (each a canasta laid from the hand: no minimum, R-MA-INIT-3)."""
    card = d.draw()
    d.meld([KINGS], {"melds": {"A": {"K": 7}}})
    d.discard(card)
    card = d.draw()
    d.meld([QUEENS], {"melds": {"B": {"Q": 7}}})
    d.discard(card)
    d.plain_turn()
    card = d.draw()
    d.meld([JACKS], {"melds": {"A": {"K": 7}, "B": {"Q": 7, "J": 7}}})
    d.discard(card)


def stock_runs_out() -> dict[str, Any]:
    """R-MA-END-1: all eight threes are dealt, so the stock holds 56 - 8 = 48 cards; the 48th
    draw is seat 3's: he melds with it and discards, then the deal ends (no going-out bonus)."""
    hands = {
        0: SEAT0,
        1: SEAT1,
        2: SEAT2 + SEAT2_FILL,
        3: [*JACKS, "3C/1", "3C/2", "10S/1", "10H/1", "8S/1", "8H/1"],
    }
    replacements = SIXES  # seat 0: 3, seat 1: 2, seat 2: 1, seat 3: 2
    first, last = ["4S/1"], ["10D/1"]
    used = {c for h in hands.values() for c in h} | set(replacements) | set(first) | set(last)
    d = Deal(hands, replacements, first + middle(used) + last)
    assert len(d.stock) == 48
    opening_turns(d)
    while len(d.stock) > 1:
        d.plain_turn()
    assert d.turn == 3
    d.draw({"stock_size": 0, "phase": "play", "deal_over": False, "turn": 3})
    d.meld([["10S/1", "10H/1", "10D/1"]], {"deal_over": False, "phase": "play"})
    d.discard("8S/1")
    assert d.over
    d.steps.append({"seat": 0, "do": "draw", "expect": {"error": "R-TURN-1"}})
    d.steps.append({"seat": 0, "do": "decline_pile", "expect": {"error": "R-TURN-1"}})
    return {
        "name": "R-MA-END-1 [decision: the player who draws the stock's last card finishes his "
        "turn, then the deal ends; nobody plays on the pile]: all eight threes are dealt (laid and "
        "replaced), 48 cards are drawn; seat 3 draws the last, melds 10 10 10 and discards, and the "
        "deal ends with no going-out bonus. Side A has one canasta (its threes score 0), side B "
        "two (its one red and three black threes score 100 + 500). Generated by "
        "tests/scenarios/tools/gen_modern_american.py",
        "entry": "modern_american",
        "players": 4,
        "deal": {
            "dealer": 3,
            "cut": 54,
            "hands": {str(s): h for s, h in hands.items()},
            "stock": d.stock_order,
        },
        "steps": d.steps,
        "expect_end": {
            "deal_over": True,
            "stock_size": 0,
            **d.threes_laid(),
            "melds": {"A": {"K": 7}, "B": {"Q": 7, "J": 7, "10": 3}},
            "deal_scores": d.scores(),
        },
    }


def three_last() -> dict[str, Any]:
    """R-MA-THREE-1: seven threes are dealt, the eighth (3C/2) is the stock's last card:
    56 - 7 = 49 draws; the 49th is seat 0's: the three stays in his hand (-5) and the deal
    ends at once, before he can meld or discard."""
    hands = {
        0: SEAT0,
        1: SEAT1,
        2: SEAT2 + SEAT2_FILL,
        3: [*JACKS, "3C/1", "8D/1", "10S/1", "10H/1", "8S/1", "8H/1"],
    }
    replacements = SIXES[:7]  # seat 0: 3, seat 1: 2, seat 2: 1, seat 3: 1
    first, last = ["4S/1"], ["3C/2"]
    used = {c for h in hands.values() for c in h} | set(replacements) | set(first) | set(last)
    d = Deal(hands, replacements, first + middle(used) + last)
    assert len(d.stock) == 49
    opening_turns(d)
    while len(d.stock) > 1:
        d.plain_turn()
    assert d.turn == 0
    before = len(d.hands[0])
    d.draw(
        {
            "stock_size": 0,
            "deal_over": True,
            "phase": "over",
            "hand_count": {"0": before + 1},
            **d.threes_laid(),
        }
    )
    assert d.over and "3C/2" in d.hands[0] and "6S/1" in d.hands[0]
    d.steps.append(
        {
            "seat": 0,
            "do": "discard",
            "card": "6S/1",
            "expect": {"error": "R-TURN-1"},
        }
    )
    d.steps.append({"seat": 1, "do": "draw", "expect": {"error": "R-TURN-1"}})
    return {
        "name": "R-MA-THREE-1: the stock's last card is a three (3C/2); seat 0 draws it, it stays in "
        "his hand (not laid: side B's threes area keeps two black threes) and counts -5 for side A, "
        "and the deal ends at once: he may neither meld nor discard (R-TURN-1); no going-out bonus. "
        "Generated by tests/scenarios/tools/gen_modern_american.py",
        "entry": "modern_american",
        "players": 4,
        "deal": {
            "dealer": 3,
            "cut": 54,
            "hands": {str(s): h for s, h in hands.items()},
            "stock": d.stock_order,
        },
        "steps": d.steps,
        "expect_end": {
            "deal_over": True,
            "stock_size": 0,
            "hand": {"0": d.hands[0]},
            "deal_scores": d.scores(),
        },
    }


def main() -> None:
    outputs = {
        "r-ma-end-1_stock_runs_out_last_drawer_finishes_his_turn_then_the_deal_ends.json": (
            stock_runs_out()
        ),
        "r-ma-three-1_three_as_the_stocks_last_card_stays_in_the_hand_and_ends_the_deal.json": (
            three_last()
        ),
    }
    for name, data in outputs.items():
        write(OUT / name, data)
        print(f"  deal_scores {data['expect_end']['deal_scores']}")


if __name__ == "__main__":
    main()
