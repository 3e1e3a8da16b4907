"""Generate the long `ponytail` scenarios that play a deal down to the stock's end (R-PT-END-1).

Run from the repository root:

    .venv/bin/python tests/scenarios/tools/gen_ponytail_stock_exhausted.py

It writes (the committed JSON is what the tests run; this script only saves typing):

- ponytail/r-pt-end-1_stock_exhausted_deal_ends_after_the_turn.json
- ponytail/r-pt-end-1_stock_emptied_by_a_ponytail_red_three_ends_the_deal.json

Every card of the 324 is named in full notation (hands, ponytails and the whole stock), so the
deal does not depend on the fill order. The script plays the deal with its own small model
(draw two, discard the first plain natural drawn; seat 0 opens with seven kings in his first
turn and picks up his ponytail at once) and computes the expected deal scores itself from
docs/rules/ponytail.md (R-PT-SCORE-1, R-PT-PONY-1) and the R-CARD-3 values; it does not ask the
engine.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scenario_cards import (  # type: ignore[import-not-found]
    full_deck,
    is_black_three,
    is_natural,
    is_red_three,
    rank,
    value,
)
from scenario_json import write  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parents[1]  # tests/scenarios
DECKS = 6
SIDE = {0: "A", 1: "B", 2: "A", 3: "B"}


def left_value(card: str) -> int:
    """R-PT-SCORE-1: a black three left in a hand (or an unpicked ponytail) counts 100."""
    return 100 if is_black_three(card) else value(card)


KINGS = ["KS/1", "KH/1", "KD/1", "KC/1", "KS/2", "KH/2", "KD/2"]


class Deal:
    """A 4-player ponytail deal, dealer seat 3 (seat 0 plays first), every card named."""

    def __init__(self, turned_sevens: int) -> None:
        deck = full_deck(DECKS)
        used: set[str] = set()

        def name(*cards: str) -> list[str]:
            for c in cards:
                assert c not in used, c
                used.add(c)
            return list(cards)

        # Red threes: three dealt (laid and replaced), some in ponytails, two in the stock.
        hand_special = {
            0: name(*KINGS, "3H/1"),
            1: name("3H/2", "3S/1"),
            2: name("3C/2"),
            3: name("3D/3"),
        }
        pony_special = {
            0: name("3D/1"),  # laid and replaced when seat 0 picks up his ponytail
            1: name("3D/2", "3C/1", "3H/5", "3D/5"),
            2: name("3H/3"),  # never picked up (0), or picked up at the very end
            3: name("3S/2", "3H/6", "3D/6"),
        }
        stock_reds = name("3H/4", "3D/4")
        sevens = name(*[c for c in deck if rank(c) == "7"][:turned_sevens])
        turn_up = name("9S/1")
        rest = [c for c in deck if c not in used]
        plain = [c for c in rest if is_natural(c) and rank(c) != "K"]
        other = [c for c in rest if c not in set(plain)]
        # Hands and ponytails are filled with plain naturals from the back (high ranks last
        # in the deck order), the stock interleaves plain naturals with the other cards.
        self.hands: dict[int, list[str]] = {}
        self.ponytails: dict[int, list[str]] = {}
        for seat in range(4):
            need = 15 - len(hand_special[seat])
            self.hands[seat] = hand_special[seat] + [plain.pop() for _ in range(need)]
        for seat in range(4):
            need = 13 - len(pony_special[seat])
            self.ponytails[seat] = pony_special[seat] + [plain.pop() for _ in range(need)]
        middle: list[str] = []
        while plain or other:
            if plain:
                middle.append(plain.pop(0))
            if other:
                middle.append(other.pop(0))
            elif plain:
                middle.append(plain.pop(0))
        middle.insert(41, stock_reds[0])  # drawn mid-deal, laid and replaced
        middle.insert(121, stock_reds[1])
        self.dealt_hands = {s: list(h) for s, h in self.hands.items()}
        self.dealt_ponytails = {s: list(p) for s, p in self.ponytails.items()}
        # R-DEAL-6: replacements first, from the dealer's left; then the turn-up, then draws.
        replacements = [c for c in middle if is_natural(c) and rank(c) in ("4", "5", "6")][:3]
        for c in replacements:
            middle.remove(c)
        self.stock_order = replacements + sevens + turn_up + middle
        assert sorted(
            self.stock_order
            + [c for h in self.hands.values() for c in h]
            + [c for p in self.ponytails.values() for c in p]
        ) == sorted(deck)
        self.stock = list(self.stock_order)
        self.red: dict[str, list[str]] = {"A": [], "B": []}
        self.melds: dict[str, list[list[str]]] = {"A": [], "B": []}
        self.pile: list[str] = []
        self.picked = {s: False for s in range(4)}
        self.steps: list[dict[str, Any]] = []
        for seat in range(4):  # dealer 3: seat 0 is on his left
            for card in [c for c in self.hands[seat] if is_red_three(c)]:
                self.hands[seat].remove(card)
                self.red[SIDE[seat]].append(card)
                repl = self.stock.pop(0)
                assert not is_red_three(repl)
                self.hands[seat].append(repl)
        for _ in range(turned_sevens):
            assert rank(self.stock[0]) == "7"
            self.pile.append(self.stock.pop(0))
        self.pile.append(self.stock.pop(0))
        assert self.pile[-1] == "9S/1"
        self.over = False

    # --- the model -----------------------------------------------------------------------
    def _lay_and_replace(self, seat: int, cards: list[str]) -> list[str]:
        """R-PT-DRAW-1: red threes laid and replaced (repeatedly); returns the replacements."""
        replacements: list[str] = []
        queue = list(cards)
        while queue:
            card = queue.pop(0)
            if not is_red_three(card):
                continue
            assert self.stock, "no red three as the stock's last card in these deals"
            self.hands[seat].remove(card)
            self.red[SIDE[seat]].append(card)
            repl = self.stock.pop(0)
            self.hands[seat].append(repl)
            replacements.append(repl)
            queue.append(repl)
        return replacements

    def draw(self, seat: int) -> list[str]:
        n = min(2, len(self.stock))  # R-DRAW-1 [decision]: draw what is there
        drawn = self.stock[:n]
        self.stock = self.stock[n:]
        self.hands[seat] += drawn
        extra = self._lay_and_replace(seat, drawn)
        self.steps.append(
            {
                "seat": seat,
                "do": "draw",
                "expect": "ok",
                "then": {
                    "stock_size": len(self.stock),
                    "hand_count": {str(seat): len(self.hands[seat])},
                    "red_threes": {s: len(r) for s, r in self.red.items()},
                },
            }
        )
        return drawn + extra

    def pick_up(self, seat: int, check: dict[str, Any] | None = None) -> None:
        pony = self.ponytails[seat]
        self.ponytails[seat] = []
        self.picked[seat] = True
        self.hands[seat] += pony
        self._lay_and_replace(seat, pony)
        then = {
            "hand_count": {str(seat): len(self.hands[seat])},
            "stock_size": len(self.stock),
            "red_threes": {s: len(r) for s, r in self.red.items()},
        }
        then.update(check or {})
        self.steps.append({"seat": seat, "do": "pick_up_ponytail", "expect": "ok", "then": then})

    def discard(self, seat: int, card: str, check: dict[str, Any] | None = None) -> None:
        self.hands[seat].remove(card)
        self.pile.append(card)
        then: dict[str, Any] = {"pile_top": card, "pile_size": len(self.pile)}
        if self.stock:
            then["turn"] = (seat + 1) % 4
        then.update(check or {})
        self.steps.append(
            {"seat": seat, "do": "discard", "card": card, "expect": "ok", "then": then}
        )

    def meld(self, seat: int, cards: list[str], check: dict[str, Any]) -> None:
        for card in cards:
            self.hands[seat].remove(card)
        self.melds[SIDE[seat]].append(list(cards))
        self.steps.append(
            {"seat": seat, "do": "meld", "melds": [cards], "expect": "ok", "then": check}
        )

    def plain_discard(self, seat: int, drawn: list[str]) -> str:
        for card in drawn + self.hands[seat]:
            if card in self.hands[seat] and is_natural(card) and rank(card) != "K":
                return card
        raise AssertionError("no plain natural to discard")

    def plain_turn(self, seat: int) -> None:
        drawn = self.draw(seat)
        self.discard(seat, self.plain_discard(seat, drawn))

    def scores(self) -> dict[str, int]:
        """R-PT-SCORE-1, R-PT-PONY-1: no going out; red threes 100 each (against a side with
        no meld); cards left in hands and in ponytails never picked up count against, a black
        three 100; a red three in such a ponytail was never laid and counts 0."""
        out = {}
        for side in ("A", "B"):
            seats = [s for s in range(4) if SIDE[s] == side]
            melded = sum(value(c) for m in self.melds[side] for c in m)
            bonus = sum(500 for m in self.melds[side] if len(m) == 7)  # natural canastas only here
            red = 100 * len(self.red[side])
            if not self.melds[side]:
                red = -red
            hands = sum(left_value(c) for s in seats for c in self.hands[s])
            ponies = sum(left_value(c) for s in seats for c in self.ponytails[s])
            out[side] = melded + bonus + red - hands - ponies
        return out


def opening(d: Deal) -> None:
    """Seat 0 draws, lays seven kings (70 >= 50, a natural canasta), picks up his ponytail
    at once (its 3D/1 is laid and replaced) and discards."""
    drawn = d.draw(0)
    d.meld(0, KINGS, {"melds": {"A": {"K": 7}}})
    d.pick_up(0)
    d.discard(0, d.plain_discard(0, drawn))


def stock_exhausted() -> dict[str, Any]:
    """The last draw takes the one card left (R-DRAW-1 [decision]); the turn-up's length
    (sevens turned crosswise, R-PT-DEAL-2) sets the stock's parity."""
    for sevens in range(1, 4):
        d = Deal(turned_sevens=sevens)
        opening(d)
        seat = 1
        while len(d.stock) > 2:
            d.plain_turn(seat)
            seat = (seat + 1) % 4
        if len(d.stock) == 1:
            break
    else:
        raise AssertionError("no turn-up length leaves one card for the last draw")
    # The stock holds the last cards: this draw empties it (one card if one is left).
    left = len(d.stock)
    drawn = d.draw(seat)
    assert not d.stock
    d.discard(
        seat, d.plain_discard(seat, drawn), {"deal_over": True, "phase": "over", "stock_size": 0}
    )
    nxt = (seat + 1) % 4
    d.steps.append({"seat": nxt, "do": "draw", "expect": {"error": "R-TURN-1"}})
    d.steps.append(
        {"seat": nxt, "do": "take_pile", "melds": [["TOP"]], "expect": {"error": "R-TURN-1"}}
    )
    d.steps.append({"seat": 2, "do": "pick_up_ponytail", "expect": {"error": "R-TURN-1"}})
    return {
        "name": f"R-PT-END-1 [decision], R-DRAW-1, R-PT-DRAW-1, R-PT-SCORE-1: nobody goes out; seat {seat}'s "
        f"last draw takes the {'one card' if left == 1 else 'two cards'} left and the deal ends right after "
        "his discard: the next player (seat 2) may neither draw, nor play on the pile, nor pick up his "
        "ponytail first (his side has a canasta); scored without a going-out "
        "bonus: A has melded (seven kings, 500) so its red threes count for it, B has not; black threes "
        "left in hands and unpicked ponytails -100, red threes in unpicked ponytails 0. Generated by "
        "tests/scenarios/tools/gen_ponytail_stock_exhausted.py",
        "entry": "ponytail",
        "players": 4,
        "deal": {
            "dealer": 3,
            "cut": 100,
            "hands": {str(s): h for s, h in d.dealt_hands.items()},
            "ponytails": {str(s): p for s, p in d.dealt_ponytails.items()},
            "stock": d.stock_order,
        },
        "steps": d.steps,
        "expect_end": {
            "deal_over": True,
            "stock_size": 0,
            "red_threes": {s: len(r) for s, r in d.red.items()},
            "deal_scores": d.scores(),
            "game_over": False,
        },
    }


def emptied_by_replacement() -> dict[str, Any]:
    """Seat 2 keeps his ponytail (with 3H/3) face down; when his turn starts with one card
    on the stock he picks it up before drawing: the red three takes the last card as its
    replacement, and he must now draw from an empty stock, so the deal ends (R-PT-END-1)."""
    for sevens in range(1, 12):
        d = Deal(turned_sevens=sevens)
        opening(d)
        seat = 1
        while len(d.stock) > 2:
            d.plain_turn(seat)
            seat = (seat + 1) % 4
        if seat == 2 and len(d.stock) == 1:
            break
    else:
        raise AssertionError("no turn-up length gives seat 2 a one-card stock")
    d.pick_up(2, {"deal_over": True, "phase": "over", "stock_size": 0})
    d.steps.append({"seat": 2, "do": "draw", "expect": {"error": "R-TURN-1"}})
    d.steps.append(
        {"seat": 2, "do": "take_pile", "melds": [["TOP"]], "expect": {"error": "R-TURN-1"}}
    )
    return {
        "name": "R-PT-END-1 [decision], R-PT-PONY-1, R-PT-DRAW-1: seat 2's turn starts with one card on the "
        "stock; he picks up his ponytail before drawing and its red three 3H/3 is laid and replaced by "
        "that last card; he must draw and the stock is empty, so the deal ends at once (no draw, no "
        f"play on the pile), scored without a going-out bonus ({sevens} sevens turned up crosswise "
        "set the stock's length). Generated by tests/scenarios/tools/gen_ponytail_stock_exhausted.py",
        "entry": "ponytail",
        "players": 4,
        "deal": {
            "dealer": 3,
            "cut": 100,
            "hands": {str(s): h for s, h in d.dealt_hands.items()},
            "ponytails": {str(s): p for s, p in d.dealt_ponytails.items()},
            "stock": d.stock_order,
        },
        "steps": d.steps,
        "expect_end": {
            "deal_over": True,
            "stock_size": 0,
            "red_threes": {s: len(r) for s, r in d.red.items()},
            "deal_scores": d.scores(),
        },
    }


def main() -> None:
    outputs = {
        "ponytail/r-pt-end-1_stock_exhausted_deal_ends_after_the_turn.json": stock_exhausted(),
        "ponytail/r-pt-end-1_stock_emptied_by_a_ponytail_red_three_ends_the_deal.json": (
            emptied_by_replacement()
        ),
    }
    for rel, data in outputs.items():
        write(ROOT / rel, data)


if __name__ == "__main__":
    main()
