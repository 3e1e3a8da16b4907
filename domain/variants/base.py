"""The rule data every entry provides, and the hooks it may override.

The engine (``domain.rules``) reads only this interface; an entry never forks the
engine's turn logic. ``classic`` is the reference; other entries change data and a few
hooks (initial minimum, red-three score, what freezes the turn-up, going-out needs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from domain.cards import CARDS


@dataclass(frozen=True)
class Variant:
    key: str
    title: str
    player_counts: tuple[int, ...]
    decks: int
    hand_size: Mapping[int, int]  # by number of seats at the table
    draw_count: Mapping[int, int]  # R-DRAW-1
    canastas_to_go_out: Mapping[int, int]  # R-OUT-1
    target: int  # R-GAME-1
    selectable_targets: tuple[int, ...] = ()
    options: frozenset[str] = field(default_factory=lambda: frozenset({"always_frozen"}))
    # R-INIT-1: (lowest cumulative score, minimum), highest threshold first; the last
    # row applies to everything below the others (negative totals).
    initial_minimums: tuple[tuple[int, int], ...] = (
        (3000, 120),
        (1500, 90),
        (0, 50),
    )
    minimum_below_zero: int = 15
    max_wilds: int = 3  # R-MELD-2
    # R-SEAT-*: which player counts play in teams chosen by the host
    host_chooses_teams: frozenset[int] = frozenset()
    team_shapes: Mapping[int, tuple[tuple[int, ...], ...]] = field(default_factory=dict)
    sit_outs: bool = False  # teams of three sit one out per deal (R-SEAT-2)
    turn_up: bool = True  # R-DEAL-7: the pile starts with a turned-up card

    # --- hooks -----------------------------------------------------------------
    def initial_minimum(self, cumulative: int) -> int:
        """R-INIT-1: the count a side's first meld of a deal must reach."""
        for threshold, minimum in self.initial_minimums:
            if cumulative >= threshold:
                return minimum
        return self.minimum_below_zero

    def red_three_bonus(self, count: int) -> int:
        """R-SCORE-4 (classic): 100 each, 800 for all four."""
        return 800 if count == 4 else 100 * count

    def is_bonus_card(self, card: str) -> bool:
        """R-DEAL-6, R-DRAW-2: cards laid at once and replaced (red threes)."""
        return CARDS[card].is_red_three

    def freezes_turn_up(self, card: str) -> bool:
        """R-DEAL-7: a wild or red three turned up freezes the pile and is covered."""
        info = CARDS[card]
        return info.is_wild or info.is_red_three

    def hand_size_for(self, players: int) -> int:
        return self.hand_size[players]

    def draw_count_for(self, players: int) -> int:
        return self.draw_count[players]

    def canastas_needed(self, players: int) -> int:
        return self.canastas_to_go_out[players]
