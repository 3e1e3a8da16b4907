"""Generate the long rule scenarios that play a 2-player classic deal down to the stock's end.

Run from the repository root:

    .venv/bin/python tests/scenarios/tools/gen_stock_exhausted.py

It writes (the committed JSON is what the tests run; this script only saves typing):

- turn_pile/r-draw-3_red_three_as_last_stock_card_ends_the_deal.json
- turn_pile/r-end-1_stock_empty_forced_take_then_decline_ends_the_deal.json
- always_frozen/r-end-1_always_frozen_nobody_is_forced_to_take.json
- turn_pile/r-draw-2_red_three_above_the_last_stock_card_is_laid_unreplaced_the_deal_goes_on.json
- turn_pile/r-draw-3_red_three_replacing_a_red_three_is_the_last_card_ends_the_deal.json

Every card is named in full notation (hands and the whole stock), so the deal does not
depend on the fill order. The script plays the deal with its own tiny model (draw two,
discard the first natural drawn) and computes the expected deal scores itself from
the scoring rules (docs/rules/common.md) and the R-CARD-3 values; it does not ask the engine.
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
    rank,
    value,
)
from scenario_json import write  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parents[1]  # tests/scenarios


class Deal:
    """A 2-player classic deal, dealer seat 1 (seat 0 plays first), every card named."""

    def __init__(self, hands: dict[int, list[str]], stock_head: list[str], last: list[str]) -> None:
        deck = full_deck()
        used = [c for h in hands.values() for c in h] + stock_head + last
        assert len(set(used)) == len(used), "a card is named twice"
        assert all(len(h) == 15 for h in hands.values())
        rest = [c for c in deck if c not in set(used)]
        # Draw pairs start with a natural that is not a K, Q, J or A (the discard), then
        # any other card; wilds, black threes and the melding ranks are kept in hands.
        plain = [c for c in rest if is_natural(c) and rank(c) not in ("K", "Q", "J", "A")]
        other = [c for c in rest if c not in set(plain)]
        assert not any(is_red_three(c) for c in rest), "red threes are placed by hand"
        middle: list[str] = []
        while plain or other:
            if plain:
                middle.append(plain.pop(0))
            if other:
                middle.append(other.pop(0))
            elif plain:
                middle.append(plain.pop(0))
        self.stock_order = stock_head + middle + last
        assert len(self.stock_order) + 30 == 108
        self.hands = {s: list(h) for s, h in hands.items()}
        self.stock = list(self.stock_order)
        self.pile: list[str] = []
        self.red: dict[int, list[str]] = {0: [], 1: []}
        self.melds: dict[int, list[list[str]]] = {0: [], 1: []}
        self.steps: list[dict[str, Any]] = []
        self.over = False
        # R-DEAL-6: red threes laid and replaced, seat 0 (dealer's left) first
        for seat in (0, 1):
            for card in [c for c in self.hands[seat] if is_red_three(c)]:
                self.hands[seat].remove(card)
                self.red[seat].append(card)
                repl = self.stock.pop(0)
                assert not is_red_three(repl)
                self.hands[seat].append(repl)
        turn_up = self.stock.pop(0)
        assert is_natural(turn_up)
        self.pile.append(turn_up)

    def draw(self, seat: int, check: dict[str, Any] | None = None) -> list[str]:
        n = min(2, len(self.stock))  # R-DRAW-1 [decision]: draw what is there
        drawn = self.stock[:n]
        self.stock = self.stock[n:]
        last = drawn[-1] if not self.stock else None  # the card that emptied the stock
        queue = list(drawn)
        while queue:
            card = queue.pop(0)
            if not is_red_three(card):
                self.hands[seat].append(card)
                continue
            self.red[seat].append(card)  # R-DRAW-2: laid at once ...
            if card == last:  # R-DRAW-3: the stock's last card ends the deal at once
                self.over = True
                break
            if self.stock:  # ... and replaced, if the stock has a card left
                repl = self.stock.pop(0)
                queue.append(repl)
                if not self.stock:
                    last = repl
        then: dict[str, Any] = {"stock_size": len(self.stock)}
        then["hand_count"] = {str(seat): len(self.hands[seat])}
        then.update(check or {})
        self.steps.append({"seat": seat, "do": "draw", "expect": "ok", "then": then})
        return drawn

    def discard(self, seat: int, card: str, check: dict[str, Any] | None = None) -> None:
        self.hands[seat].remove(card)
        self.pile.append(card)
        then = {"pile_top": card, "pile_size": len(self.pile), "turn": 1 - seat}
        then.update(check or {})
        self.steps.append(
            {"seat": seat, "do": "discard", "card": card, "expect": "ok", "then": then}
        )

    def meld(self, seat: int, melds: list[list[str]]) -> None:
        for cards in melds:
            for card in cards:
                self.hands[seat].remove(card)
            self.melds[seat].append(list(cards))
        self.steps.append({"seat": seat, "do": "meld", "melds": melds, "expect": "ok"})

    def plain_turn(self, seat: int) -> None:
        drawn = self.draw(seat)
        if self.over:
            return
        card = next(c for c in drawn if is_natural(c) and rank(c) not in ("K", "Q", "J", "A"))
        self.discard(seat, card)

    def scores(self, went_out: int | None = None) -> dict[str, int]:
        """The scoring of docs/rules/common.md for sides A (seat 0) and B (seat 1); no going-out
        bonus here."""
        assert went_out is None
        out = {}
        for seat, side in ((0, "A"), (1, "B")):
            melded = sum(value(c) for m in self.melds[seat] for c in m)
            bonus = 0
            for m in self.melds[seat]:
                if len(m) >= 7:
                    bonus += 300 if any(not is_natural(c) for c in m) else 500
            n = len(self.red[seat])
            red = 800 if n == 4 else 100 * n
            if not self.melds[seat]:
                red = -red
            out[side] = melded + bonus + red - sum(value(c) for c in self.hands[seat])
        return out


FILL0 = ["4S/1", "4S/2", "4H/1", "4H/2", "5S/1", "5S/2", "5H/1"]
FILL1 = ["6S/1", "6S/2", "6H/1", "6H/2", "7S/1", "7S/2", "7H/1"]
OPEN0 = ["KS/1", "KS/2", "KH/1", "AS/1", "AS/2", "AH/1"]  # 30 + 60 = 90
OPEN1 = ["QS/1", "QS/2", "QH/1", "JS/1", "JS/2", "JH/1"]  # 30 + 30 = 60
REPLACEMENTS = ["8S/1", "8S/2", "8H/1", "8H/2"]
TURN_UP = ["9S/1"]


def opening_turns(d: Deal, *, seat1_melds: bool) -> None:
    drawn = d.draw(0)
    d.meld(0, [OPEN0[:3], OPEN0[3:]])
    d.steps[-1]["then"] = {"melds": {"A": {"K": 3, "A": 3}}}
    d.discard(0, next(c for c in drawn if is_natural(c) and rank(c) not in ("K", "Q", "J", "A")))
    if seat1_melds:
        drawn = d.draw(1)
        d.meld(1, [OPEN1[:3], OPEN1[3:]])
        d.steps[-1]["then"] = {"melds": {"B": {"Q": 3, "J": 3}}}
        d.discard(
            1, next(c for c in drawn if is_natural(c) and rank(c) not in ("K", "Q", "J", "A"))
        )
    else:
        d.plain_turn(1)


def scenario(
    name: str,
    hands: dict[int, list[str]],
    d: Deal,
    *,
    red_threes: dict[str, int],
    options: dict[str, bool] | None = None,
) -> dict[str, Any]:
    """The scenario of a classic deal of two dealt by seat 1 and cut at 54, played to the
    stock's end by ``d``'s steps."""
    data: dict[str, Any] = {"name": name, "entry": "classic", "players": 2}
    if options:
        data["options"] = options
    data["deal"] = {
        "dealer": 1,
        "cut": 54,
        "hands": {"0": hands[0], "1": hands[1]},
        "stock": d.stock_order,
    }
    data["steps"] = d.steps
    data["expect_end"] = {
        "deal_over": True,
        "stock_size": 0,
        "red_threes": red_threes,
        "deal_scores": d.scores(),
    }
    return data


def red_three_last() -> dict[str, Any]:
    """R-DRAW-3: three red threes are dealt (laid and replaced), the fourth is the stock's
    last card: 108 - 30 - 3 replacements - 1 turn-up = 74 cards, 37 draws of two; seat 0's
    last draw takes it and the deal ends at once, scored without a going-out bonus."""
    hands = {0: [*OPEN0, "3H/1", "3H/2", *FILL0], 1: [*OPEN1, "3D/1", *FILL1, "7H/2"]}
    d = Deal(hands, REPLACEMENTS[:3] + TURN_UP, ["QD/1", "3D/2"])
    opening_turns(d, seat1_melds=False)
    seat = 0
    while not d.over:
        if len(d.stock) == 2:
            d.draw(seat, {"deal_over": True, "phase": "over", "red_threes": {"A": 3, "B": 1}})
            break
        d.plain_turn(seat)
        seat = 1 - seat
    assert seat == 0 and d.over and not d.stock
    d.steps.append(
        {
            "seat": 0,
            "do": "discard",
            "card": "QD/1",
            "expect": {"error": "R-TURN-1"},
            "then": {"hand_count": {"0": len(d.hands[0])}, "deal_over": True},
        }
    )
    d.steps.append({"seat": 1, "do": "decline_pile", "expect": {"error": "R-TURN-1"}})
    return scenario(
        "R-DRAW-3, R-SCORE-3: the stock's last card is a red three; seat 0 draws it (with the "
        "card above it) and the deal ends at once: he neither melds nor discards, the red three is laid "
        "in A's area and scores (A has melded: +300 for three; B has not: -100), no going-out bonus. "
        "Generated by tests/scenarios/tools/gen_stock_exhausted.py",
        hands,
        d,
        red_threes={"A": 3, "B": 1},
    )


def red_three_above_last() -> dict[str, Any]:
    """R-DRAW-1/2/3: the last two stock cards are a red three and, under it, the stock's last
    card, a natural. Seat 0's last draw of two takes both: the red three is laid and, the stock
    being empty, nothing replaces it; it was not the last card, so the deal goes on (R-DRAW-3
    does not apply): he discards. Seat 1 may not draw (R-END-1); side B has not melded, so the
    pile is frozen for him and he is not forced to take it, though he holds a pair of its top's
    rank: he declines and the deal ends with no going-out bonus (R-SCORE-3)."""
    hands = {0: [*OPEN0, "3H/1", "3H/2", *FILL0], 1: [*OPEN1, "3D/1", *FILL1, "7H/2"]}
    d = Deal(hands, REPLACEMENTS[:3] + TURN_UP, ["3D/2", "QD/1"])
    opening_turns(d, seat1_melds=False)
    seat = 0
    while len(d.stock) > 2:
        d.plain_turn(seat)
        seat = 1 - seat
    assert seat == 0 and len(d.stock) == 2
    before = len(d.hands[0])
    d.draw(
        0,
        {
            "stock_size": 0,
            "hand_count": {"0": before + 1},
            "red_threes": {"A": 3, "B": 1},
            "deal_over": False,
            "phase": "play",
        },
    )
    assert not d.over
    d.discard(0, "QD/1", {"stock_size": 0, "phase": "draw"})
    d.steps.append({"seat": 1, "do": "draw", "expect": {"error": "R-END-1"}})
    d.steps.append(
        {
            "seat": 1,
            "do": "decline_pile",
            "expect": "ok",
            "then": {"deal_over": True, "phase": "over", "pile_size": len(d.pile)},
        }
    )
    return scenario(
        "R-DRAW-2, R-DRAW-3, R-END-1: the stock's last two cards are 3D/2 and QD/1; seat 0's "
        "draw of two takes both: the red three is laid with nothing left to replace it, and as it "
        "was not the last card the deal goes on and he discards QD/1; seat 1 may not draw, the pile "
        "is frozen for side B (no meld yet), so he need not take it with his Q pair: he declines "
        "and the deal ends without a going-out bonus (A +300 for three red threes, B -100 without "
        "a meld, R-SCORE-3/4). Generated by tests/scenarios/tools/gen_stock_exhausted.py",
        hands,
        d,
        red_threes={"A": 3, "B": 1},
    )


def red_three_replacement_last() -> dict[str, Any]:
    """R-DRAW-2/3: a red three drawn with two cards left in the stock is replaced by the
    stock's last card, itself a red three: that draw takes the last card, so the deal ends at
    once (R-DRAW-3 says any draw, a replacement too). Two red threes are dealt, so 108 - 30 - 2
    - 1 = 75 cards; after 36 draws of two, seat 0 draws 3D/2 and QD/1, lays 3D/2 and draws its
    replacement 3H/2, the last card: laid, and the deal is over."""
    hands = {0: [*OPEN0, "3H/1", *FILL0, "5D/2"], 1: [*OPEN1, "3D/1", *FILL1, "7H/2"]}
    d = Deal(hands, REPLACEMENTS[:2] + TURN_UP, ["3D/2", "QD/1", "3H/2"])
    opening_turns(d, seat1_melds=False)
    seat = 0
    while len(d.stock) > 3:
        d.plain_turn(seat)
        seat = 1 - seat
    assert seat == 0 and len(d.stock) == 3
    d.draw(0, {"deal_over": True, "phase": "over", "red_threes": {"A": 3, "B": 1}})
    assert d.over and not d.stock
    d.steps.append(
        {
            "seat": 0,
            "do": "discard",
            "card": "QD/1",
            "expect": {"error": "R-TURN-1"},
            "then": {"hand_count": {"0": len(d.hands[0])}, "deal_over": True},
        }
    )
    return scenario(
        "R-DRAW-2, R-DRAW-3: seat 0's draw of two takes 3D/2 and QD/1 with three cards in "
        "the stock; the red three is laid and replaced by the stock's last card, 3H/2, a red three "
        "again: that replacement took the last card, so it is laid and the deal ends at once (he "
        "neither melds nor discards), scored without a going-out bonus (A +300 for three red "
        "threes, B -100 without a meld, R-SCORE-3/4). Generated by "
        "tests/scenarios/tools/gen_stock_exhausted.py",
        hands,
        d,
        red_threes={"A": 3, "B": 1},
    )


def stock_exhausted(*, always_frozen: bool) -> dict[str, Any]:
    """R-END-1: all four red threes are dealt, so 108 - 30 - 4 - 1 = 73 cards are drawn:
    36 draws of two, then seat 0's last draw takes the one card left (R-DRAW-1 [decision]).
    Seat 0 discards a Q, which matches side B's Q meld."""
    hands = {0: [*OPEN0, "3H/1", "3H/2", *FILL0], 1: [*OPEN1, "3D/1", "3D/2", *FILL1]}
    d = Deal(hands, REPLACEMENTS + TURN_UP, ["QD/1"])
    opening_turns(d, seat1_melds=True)
    seat = 0
    while len(d.stock) > 1:
        d.plain_turn(seat)
        seat = 1 - seat
    assert seat == 0
    before = len(d.hands[0])
    d.draw(0, {"stock_size": 0, "hand_count": {"0": before + 1}, "phase": "play"})
    d.discard(0, "QD/1", {"pile_frozen": always_frozen, "stock_size": 0})
    d.steps.append(
        {
            "seat": 1,
            "do": "draw",
            "expect": {"error": "R-END-1"},
            "then": {"turn": 1, "phase": "draw", "hand_count": {"1": len(d.hands[1])}},
        }
    )
    if always_frozen:
        # always_frozen: top Q could join B's Q meld of three (way 2), yet nobody is forced to take
        d.steps.append(
            {
                "seat": 1,
                "do": "decline_pile",
                "expect": "ok",
                "then": {"deal_over": True, "phase": "over", "pile_size": len(d.pile)},
            }
        )
        name = (
            "R-END-1 (always_frozen): the stock runs out (seat 0's last draw takes the one card "
            "left, R-DRAW-1); drawing is refused; the top Q could join side B's Q meld of three "
            "(way 2), but under always_frozen nobody is forced to take: seat 1 declines, the deal "
            "ends with no going-out bonus. Generated by tests/scenarios/tools/gen_stock_exhausted.py"
        )
    else:
        d.steps.append(
            {
                "seat": 1,
                "do": "decline_pile",
                "expect": {"error": "R-END-1"},
                "then": {"deal_over": False, "pile_size": len(d.pile)},
            }
        )
        taken = d.pile[:-1]
        top = d.pile[-1]
        d.pile = []
        d.melds[1][0].append(top)
        d.hands[1] += taken
        d.steps.append(
            {
                "seat": 1,
                "do": "take_pile",
                "melds": [["TOP"]],
                "expect": "ok",
                "then": {
                    "pile_size": 0,
                    "melds": {"B": {"Q": 4, "J": 3}},
                    "hand_count": {"1": len(d.hands[1])},
                    "stock_size": 0,
                },
            }
        )
        d.discard(1, next(c for c in d.hands[1] if rank(c) in ("4", "5", "6", "7")))
        # top card's rank matches no meld of side A: not forced, so seat 0 may decline
        d.steps.append({"seat": 0, "do": "draw", "expect": {"error": "R-END-1"}})
        d.steps.append(
            {
                "seat": 0,
                "do": "decline_pile",
                "expect": "ok",
                "then": {"deal_over": True, "phase": "over", "pile_size": 1},
            }
        )
        name = (
            "R-END-1: the stock runs out (seat 0's last draw takes the one card left, R-DRAW-1); "
            "seat 1 may not draw; the top Q matches side B's Q meld and the pile is not frozen, so "
            "declining is refused and he takes it; seat 0 then faces a top card matching none of A's "
            "melds, declines, and the deal ends with no going-out bonus (R-SCORE-3). Generated by "
            "tests/scenarios/tools/gen_stock_exhausted.py"
        )
    options = {"always_frozen": True} if always_frozen else None
    return scenario(name, hands, d, red_threes={"A": 2, "B": 2}, options=options)


def main() -> None:
    outputs = {
        "turn_pile/r-draw-3_red_three_as_last_stock_card_ends_the_deal.json": red_three_last(),
        "turn_pile/r-end-1_stock_empty_forced_take_then_decline_ends_the_deal.json": stock_exhausted(
            always_frozen=False
        ),
        "always_frozen/r-end-1_always_frozen_nobody_is_forced_to_take.json": stock_exhausted(
            always_frozen=True
        ),
        "turn_pile/r-draw-2_red_three_above_the_last_stock_card_is_laid_unreplaced_the_deal_goes_on"
        ".json": red_three_above_last(),
        "turn_pile/r-draw-3_red_three_replacing_a_red_three_is_the_last_card_ends_the_deal.json": (
            red_three_replacement_last()
        ),
    }
    for rel, data in outputs.items():
        write(ROOT / rel, data)


if __name__ == "__main__":
    main()
