"""`extra_six`: the third-deck expansion for exactly six players (docs/rules/extra_six.md)."""

from __future__ import annotations

from dataclasses import dataclass

from domain.variants.base import Variant


@dataclass(frozen=True)
class ExtraSix(Variant):
    def red_three_bonus(self, count: int) -> int:
        """R-SCORE-4 (extra_six): 100 each, no extra for four, +600 for five or six."""
        return 100 * count + (600 if count >= 5 else 0)


EXTRA_SIX = ExtraSix(
    key="extra_six",
    title="Extra Six: three decks, six players, no sit-outs",
    player_counts=(6,),
    decks=3,
    hand_size={6: 13},
    draw_count={6: 1},
    canastas_to_go_out={6: 2},
    target=10000,
    initial_minimums=((7500, 150), (3000, 120), (1500, 90), (0, 50)),
    host_chooses_teams=frozenset({6}),
    # two teams of three, or three teams of two (R-SEAT-3)
    team_shapes={6: ((3, 3), (2, 2, 2))},
    sit_outs=False,
)
