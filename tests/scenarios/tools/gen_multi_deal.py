"""Generate the `classic` and `modern_american` scenarios that play several deals on one table.

Run from the repository root:

    .venv/bin/python tests/scenarios/tools/gen_multi_deal.py

It writes (the committed JSON is what the tests run; this script only saves typing):

- game/r-deal-2_r-seat-2_five_players_dealer_and_sit_outs_rotate_over_three_deals.json
- game/r-deal-2_r-seat-2_six_players_dealer_and_sit_outs_rotate_over_three_deals.json
- game/r-game-1_classic_equal_totals_at_the_target_share_the_win.json
- game/r-ma-game-1_selectable_target_5000_equal_totals_share_the_win.json
- game/r-init-1_minimum_follows_the_running_totals_across_a_band.json

The deals are short on purpose: a player goes out (or lays an initial meld) in his first turn
from a stacked hand. Every card of every active hand is named in full notation, so the deals do
not depend on the fill order; only the stock's first cards are named. The script computes the
expected scores itself with a small model of docs/rules/ (R-CARD-3, R-SCORE-1, R-OUT-5, and
R-MA-SCORE-1/2 for `modern_american`); it does not ask the engine. The dealers and sit-outs of
the later deals are written as the script reads R-DEAL-2 and R-SEAT-2, and the engine must agree.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scenario_cards import (  # type: ignore[import-not-found]
    SUITS,
    is_wild,
    rank,
    value,
)
from scenario_json import write  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parents[1]  # tests/scenarios
OUT = ROOT / "game"
FILLER_RANKS = ("4", "5", "6", "8", "9", "10", "J")  # never wild, never a three, no A or 7


class Cards:
    """The cards of one fresh deal (two decks): named ones are taken, fillers come next."""

    def __init__(self) -> None:
        faces = [r + s for r in ("A", "K", "Q", *FILLER_RANKS, "7", "2") for s in SUITS]
        self.left = [f"{f}/{d}" for d in (1, 2) for f in faces] + ["BJ/1", "BJ/2", "LJ/1", "LJ/2"]

    def take(self, r: str, n: int) -> list[str]:
        got = [c for c in self.left if rank(c) == r][:n]
        assert len(got) == n, f"no {n} {r} left"
        for c in got:
            self.left.remove(c)
        return got

    def fillers(self, n: int) -> list[str]:
        """``n`` low naturals spread over the filler ranks (no A, no 7: no R-MA-SCORE-2 group)."""
        got: list[str] = []
        while len(got) < n:
            before = len(got)
            for r in FILLER_RANKS:
                found = [c for c in self.left if rank(c) == r]
                if found and len(got) < n:
                    got.append(found[0])
                    self.left.remove(found[0])
            assert len(got) > before, "out of fillers"
        return got


def hand_value(cards: list[str]) -> int:
    return sum(value(c) for c in cards)


def classic_out_deal(
    first: int, dealer: int, active: list[int], side_of: dict[int, str], cut: int
) -> tuple[dict[str, Any], dict[str, int]]:
    """`classic`, 4 active players of 11 cards: ``first`` (the dealer's left) draws a Q and
    goes out at once: A x7, Q x4, discard a 5. Nobody else plays. Returns the deal and the
    deal's scores per side (R-SCORE-1; concealed, R-OUT-5: +100 more)."""
    cards = Cards()
    out_hand = cards.take("A", 7) + cards.take("Q", 3) + cards.take("5", 1)
    turn_up, drawn = cards.take("9", 1)[0], cards.take("Q", 1)[0]
    hands = {first: out_hand}
    for seat in active:
        if seat != first:
            hands[seat] = cards.fillers(11)
    melds = [out_hand[:7], [*out_hand[7:10], drawn]]
    scores = {side: 0 for side in sorted(set(side_of.values()))}  # A before B, any hash seed
    for seat in active:
        if seat != first:
            scores[side_of[seat]] -= hand_value(hands[seat])
    scores[side_of[first]] += sum(value(c) for m in melds for c in m) + 500 + 100 + 100
    deal = {
        "deal": {
            "dealer": dealer,
            "cut": cut,
            "hands": {str(s): hands[s] for s in sorted(hands)},
            "stock": [turn_up, drawn],
        },
        "steps": [
            {"seat": first, "do": "draw", "expect": "ok", "then": {"hand_count": {str(first): 12}}},
            {
                "seat": first,
                "do": "meld",
                "melds": melds,
                "discard": out_hand[10],
                "expect": "ok",
                "then": {"deal_over": True},
            },
        ],
    }
    return deal, scores


def totals_after(before: dict[str, int], scores: dict[str, int]) -> dict[str, int]:
    return {side: before[side] + scores[side] for side in before}


def rotation(
    name: str,
    players: int,
    teams: list[list[int]],
    plan: list[tuple[int, list[int]]],
) -> dict[str, Any]:
    """Three deals in which the first player goes out at once; ``plan`` lists each deal's
    dealer and sit-outs as R-DEAL-2 and R-SEAT-2 choose them."""
    side_of = {s: "AB"[i] for i, team in enumerate(teams) for s in team}
    totals = {"A": 0, "B": 0}
    deals = []
    order_of = {}
    for number, (dealer, sit_out) in enumerate(plan, start=1):
        a = [s for s in teams[0] if s not in sit_out]
        b = [s for s in teams[1] if s not in sit_out]
        order = [a[0], b[0], a[1], b[1]]  # R-SEAT-2: A1 B1 A2 B2
        order_of[number] = order
        first = order[(order.index(dealer) + 1) % 4]
        deal, scores = classic_out_deal(first, dealer, order, side_of, 40 + number)
        deal["deal"]["sit_out"] = sit_out
        totals = totals_after(totals, scores)
        deal["expect_end"] = {
            "deal_over": True,
            "hand_count": {str(s): 11 for s in order if s != first},
            "deal_scores": scores,
            "totals": totals,
            "game_over": False,
        }
        deals.append(deal)
    return {
        "name": name,
        "entry": "classic",
        "players": players,
        "teams": teams,
        "deals": deals,
    }


def classic_shared_win() -> dict[str, Any]:
    """R-GAME-1: deal 1 leaves both sides below 5000; deal 2 brings both to exactly 5000."""
    side_of = {0: "A", 1: "B", 2: "A", 3: "B"}
    deal1, s1 = classic_out_deal(0, 3, [0, 1, 2, 3], side_of, 30)
    deal2, s2 = both_gain_deal()
    before = {side: 5000 - s1[side] - s2[side] for side in ("A", "B")}
    mid = totals_after(before, s1)
    assert all(3000 <= t < 5000 for t in (*before.values(), *mid.values()))
    deal1["expect_end"] = {"deal_scores": s1, "totals": mid, "game_over": False, "winners": None}
    deal2["expect_end"] = {
        "deal_scores": s2,
        "totals": {"A": 5000, "B": 5000},
        "game_over": True,
        "winners": ["A", "B"],
    }
    return {
        "name": "R-GAME-1 [decision: reaching the target means a total equal to it or above; "
        "equal highest totals share the win]: classic, 4 players. Deal 1 (dealer 3): seat 0 goes "
        "out at once, both sides stay below 5000 (initial minimum 120 from 3000, R-INIT-1). "
        "Deal 2 (dealer 0, R-DEAL-2): seat 1 lays seven aces, seat 2 goes out with seven kings "
        "and Q Q Q BJ; both sides end on exactly 5000: the game is over and A and B share the "
        "win. Generated by tests/scenarios/tools/gen_multi_deal.py",
        "entry": "classic",
        "players": 4,
        "scores_before": before,
        "deals": [deal1, deal2],
    }


def both_gain_deal() -> tuple[dict[str, Any], dict[str, int]]:
    """`classic` deal 2 of the shared win, dealer 0: seat 1 (B) draws, lays A x7 (140: his
    side's minimum is 120) and discards; seat 2 (A) draws and goes out with K x7 and
    Q Q Q BJ (150), discarding. Both sides score positive."""
    cards = Cards()
    s1 = cards.take("A", 7) + cards.fillers(4)
    s2 = cards.take("K", 7) + cards.take("Q", 3) + cards.take("BJ", 1)
    s0, s3 = cards.fillers(11), cards.fillers(11)
    turn_up, d1, d2 = cards.take("9", 1)[0], cards.take("8", 1)[0], cards.take("6", 1)[0]
    a_melds = [s2[:7], s2[7:11]]
    b_melds = [s1[:7]]
    scores = {
        "A": sum(value(c) for m in a_melds for c in m) + 500 + 100 + 100 - hand_value(s0),
        "B": sum(value(c) for m in b_melds for c in m) + 500 - hand_value(s1[7:] + s3),
    }
    deal = {
        "deal": {
            "dealer": 0,
            "cut": 31,
            "hands": {"0": s0, "1": s1, "2": s2, "3": s3},
            "stock": [turn_up, d1, d2],
        },
        "steps": [
            {"seat": 1, "do": "draw", "expect": "ok"},
            {"seat": 1, "do": "meld", "melds": b_melds, "discard": d1, "expect": "ok"},
            {"seat": 2, "do": "draw", "expect": "ok"},
            {
                "seat": 2,
                "do": "meld",
                "melds": a_melds,
                "discard": d2,
                "expect": "ok",
                "then": {"deal_over": True},
            },
        ],
    }
    return deal, scores


def band() -> dict[str, Any]:
    """R-INIT-1: the minimum of each deal comes from the totals before it."""
    cards = Cards()
    s0 = cards.take("5", 3) + cards.fillers(8)
    s1 = cards.take("A", 7) + cards.take("Q", 3) + cards.take("4", 1)
    s2, s3 = cards.fillers(11), cards.fillers(11)
    turn_up, d0, d1 = cards.take("9", 1)[0], cards.take("8", 1)[0], cards.take("Q", 1)[0]
    out = [s1[:7], [*s1[7:10], d1]]
    s_1 = {
        "A": -hand_value(s0) - hand_value(s2),
        "B": sum(value(c) for m in out for c in m) + 700 - hand_value(s3),
    }
    before = {"A": 0, "B": 1000}
    mid = totals_after(before, s_1)
    assert mid["A"] < 0 and 1500 <= mid["B"] < 3000
    deal1 = {
        "deal": {
            "dealer": 3,
            "cut": 20,
            "hands": {"0": s0, "1": s1, "2": s2, "3": s3},
            "stock": [turn_up, d0, d1],
        },
        "steps": [
            {"seat": 0, "do": "draw", "expect": "ok"},
            {"seat": 0, "do": "meld", "melds": [s0[:3]], "expect": {"error": "R-INIT-1"}},
            {"seat": 0, "do": "discard", "card": d0, "expect": "ok"},
            {"seat": 1, "do": "draw", "expect": "ok"},
            {"seat": 1, "do": "meld", "melds": out, "discard": s1[10], "expect": "ok"},
        ],
        "expect_end": {"deal_over": True, "deal_scores": s_1, "totals": mid, "game_over": False},
    }
    cards = Cards()
    t1 = cards.take("K", 3) + cards.take("Q", 3) + cards.take("J", 3) + cards.take("5", 2)
    t2 = cards.take("5", 3)
    turn_up, e1, e2 = cards.take("9", 1)[0], cards.take("5", 1)[0], cards.take("8", 1)[0]
    t2 += cards.fillers(8)
    t0, t3 = cards.fillers(11), cards.fillers(11)
    seventy_five = [t1[0:3], t1[3:6], [t1[9], t1[10], e1]]
    ninety = [t1[0:3], t1[3:6], t1[6:9]]
    deal2 = {
        "deal": {
            "dealer": 0,
            "cut": 21,
            "hands": {"0": t0, "1": t1, "2": t2, "3": t3},
            "stock": [turn_up, e1, e2],
        },
        "steps": [
            {"seat": 1, "do": "draw", "expect": "ok"},
            {"seat": 1, "do": "meld", "melds": seventy_five, "expect": {"error": "R-INIT-1"}},
            {"seat": 1, "do": "meld", "melds": ninety, "discard": e1, "expect": "ok"},
            {"seat": 2, "do": "draw", "expect": "ok"},
            {"seat": 2, "do": "meld", "melds": [t2[:3]], "discard": e2, "expect": "ok"},
        ],
        "expect_end": {
            "deal_over": False,
            "turn": 3,
            "melds": {"A": {"5": 3}, "B": {"K": 3, "Q": 3, "J": 3}},
            "totals": mid,
        },
    }
    return {
        "name": "R-INIT-1: the initial minimum of each deal comes from the side's total before "
        "it. Deal 1: A at 0 (minimum 50) is refused 5 5 5 (15); B at 1000 goes out. Deal 2 "
        f"(dealer 0, R-DEAL-2): B is at {mid['B']} (minimum 90): K K K Q Q Q 5 5 5 (75, enough "
        f"in deal 1) is refused, K K K Q Q Q J J J (90) accepted; A is at {mid['A']} (below 0: "
        "minimum 15): 5 5 5 is accepted. Generated by tests/scenarios/tools/gen_multi_deal.py",
        "entry": "classic",
        "players": 4,
        "scores_before": before,
        "deals": [deal1, deal2],
    }


def ma_deal(
    dealer: int, canasta_rank: str, middle_rank: str | None, out_ranks: tuple[str, str, str]
) -> tuple[dict[str, Any], dict[str, int]]:
    """`modern_american`, dealer ``dealer``: seat p (his left) lays seven ``canasta_rank``
    from the hand (no minimum, R-MA-INIT-3; a natural canasta is a clean meld); seat p+1
    lays seven ``middle_rank`` (or only draws); seat p+2 goes out with seven, three and
    three of ``out_ranks`` and a discard (two canastas, R-MA-OUT-1). Every discard is the 9
    just drawn (R-MA-DISC-1). Returns the deal and its scores (R-MA-SCORE-1/2: no threes are
    laid, no aces or sevens are held)."""
    p = (dealer + 1) % 4
    seats = [p, (p + 1) % 4, (p + 2) % 4, (p + 3) % 4]
    side_of = {0: "A", 1: "B", 2: "A", 3: "B"}
    cards = Cards()
    hands = {seats[0]: cards.take(canasta_rank, 7)}
    hands[seats[1]] = cards.take(middle_rank, 7) if middle_rank else []
    r7, r3a, r3b = out_ranks
    hands[seats[2]] = cards.take(r7, 7) + cards.take(r3a, 3) + cards.take(r3b, 3)
    hands[seats[3]] = []
    draws = cards.take("9", 3)
    for seat in seats:
        hands[seat] += cards.fillers(13 - len(hands[seat]))
    dealt = {str(s): list(hands[s]) for s in sorted(hands)}
    melded: dict[str, list[list[str]]] = {"A": [], "B": []}
    steps: list[dict[str, Any]] = []
    for i, seat in enumerate(seats[:3]):
        steps.append({"seat": seat, "do": "draw", "expect": "ok"})
        hand = [*hands[seat], draws[i]]
        if i == 0:
            melds = [hand[:7]]
        elif i == 1:
            melds = [hand[:7]] if middle_rank else []
        else:
            melds = [hand[:7], hand[7:10], hand[10:13]]
        if melds:
            step = {"seat": seat, "do": "meld", "melds": melds, "discard": draws[i]}
        else:
            step = {"seat": seat, "do": "discard", "card": draws[i]}
        step["expect"] = "ok"
        steps.append(step)
        melded[side_of[seat]] += melds
        hands[seat] = [c for c in hand if c != draws[i] and all(c not in m for m in melds)]
    steps[-1]["then"] = {"deal_over": True}
    scores = {}
    for side in ("A", "B"):
        melds = melded[side]
        canastas = [m for m in melds if len(m) == 7]
        assert not any(is_wild(c) for m in melds for c in m)
        points = sum(value(c) for m in melds for c in m)
        score = (points if canastas else -points) + 500 * len(canastas)
        score += 100 if side == side_of[seats[2]] else 0
        score -= sum(hand_value(hands[s]) for s in hands if side_of[s] == side)
        scores[side] = score
    deal = {"dealer": dealer, "cut": 54, "hands": dealt, "stock": draws}
    return {"deal": deal, "steps": steps}, scores


def ma_shared_win() -> dict[str, Any]:
    """R-MA-GAME-1: a table set up for 5000; both sides end deal 2 on exactly 5000."""
    deal1, s1 = ma_deal(3, "K", None, ("Q", "J", "10"))
    deal2, s2 = ma_deal(0, "K", "Q", ("J", "10", "8"))
    before = {side: 5000 - s1[side] - s2[side] for side in ("A", "B")}
    mid = totals_after(before, s1)
    assert all(t < 5000 for t in (*before.values(), *mid.values()))
    deal1["expect_end"] = {"deal_scores": s1, "totals": mid, "game_over": False}
    deal2["expect_end"] = {
        "deal_scores": s2,
        "totals": {"A": 5000, "B": 5000},
        "game_over": True,
        "winners": ["A", "B"],
    }
    return {
        "name": "R-MA-GAME-1, R-GAME-1 [decision: reaching the target means a total equal to it or "
        "above; equal highest totals share the win]: modern_american on a table set up for the "
        "selectable target 5000. Deal 1 (dealer 3): seat 0 lays seven kings, seat 2 goes out; "
        f"totals {mid['A']} and {mid['B']}, below 5000 (at 8500 too). Deal 2 (dealer 0, R-DEAL-2): "
        "seat 1 lays seven kings, seat 2 seven queens, seat 3 goes out; both sides end on exactly "
        "5000: the game is over and A and B share the win. Generated by "
        "tests/scenarios/tools/gen_multi_deal.py",
        "entry": "modern_american",
        "players": 4,
        "target": 5000,
        "scores_before": before,
        "deals": [deal1, deal2],
    }


def main() -> None:
    files = {
        "r-deal-2_r-seat-2_five_players_dealer_and_sit_outs_rotate_over_three_deals": rotation(
            "R-DEAL-2, R-SEAT-2 [decisions]: five players, team A = seats 0 1 2, team B = 3 4. "
            "Team A's sit-out rotates 0, 1, 2 (room-seat order); the virtual tables are 1 3 2 4, "
            "0 3 2 4, 0 3 1 4. The dealer passes to the left on the previous deal's virtual table, "
            "skipping a seat that sits out: 4, then 3 (seat 1 sits out), then 4 (seat 2 sits out). "
            "In each deal the dealer's left goes out at once. Generated by "
            "tests/scenarios/tools/gen_multi_deal.py",
            5,
            [[0, 1, 2], [3, 4]],
            [(4, [0]), (3, [1]), (4, [2])],
        ),
        "r-deal-2_r-seat-2_six_players_dealer_and_sit_outs_rotate_over_three_deals": rotation(
            "R-DEAL-2, R-SEAT-2 [decisions]: six players, team A = seats 0 1 2, team B = 3 4 5. "
            "The sit-outs rotate 0+3, 1+4, 2+5; the virtual tables are 1 4 2 5, 0 3 2 5, 0 3 1 4. "
            "The dealer passes to the left on the previous deal's virtual table, skipping seats "
            "that sit out: 5, then 2 (seats 1 and 4 sit out), then 0 (seat 5 sits out). In each "
            "deal the dealer's left goes out at once. Generated by "
            "tests/scenarios/tools/gen_multi_deal.py",
            6,
            [[0, 1, 2], [3, 4, 5]],
            [(5, [0, 3]), (2, [1, 4]), (0, [2, 5])],
        ),
        "r-game-1_classic_equal_totals_at_the_target_share_the_win": classic_shared_win(),
        "r-ma-game-1_selectable_target_5000_equal_totals_share_the_win": ma_shared_win(),
        "r-init-1_minimum_follows_the_running_totals_across_a_band": band(),
    }
    for name, data in files.items():
        write(OUT / f"{name}.json", data)


if __name__ == "__main__":
    main()
