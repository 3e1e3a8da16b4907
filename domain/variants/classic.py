"""`classic`: Winning Moves base game for 2–6 players with sit-outs (docs/rules/classic.md)."""

from __future__ import annotations

from domain.variants.base import Variant

CLASSIC = Variant(
    key="classic",
    title="Classic Canasta (2–6 players, sit-outs at 5 and 6)",
    player_counts=(2, 3, 4, 5, 6),
    decks=2,
    hand_size={2: 15, 3: 13, 4: 11, 5: 11, 6: 11},
    draw_count={2: 2, 3: 1, 4: 1, 5: 1, 6: 1},
    canastas_to_go_out={2: 2, 3: 1, 4: 1, 5: 1, 6: 1},
    target=5000,
    host_chooses_teams=frozenset({5, 6}),
    # R-SEAT-2: 5p team A of three against two; 6p three against three
    team_shapes={5: ((3, 2),), 6: ((3, 3),)},
    sit_outs=True,
)
