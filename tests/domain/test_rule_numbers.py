"""The numbers of the rules, entry by entry, at every boundary (docs/rules/): the entries'
table (players, hand, draw, canastas to go out, target), the card values (R-CARD-3), the
initial minimums by total (R-INIT-1, R-MA-INIT-1, R-PT-INIT-1) and the red threes' value
(R-SCORE-4). A wrong number in an entry's rule data fails one line here; the scenarios under
tests/scenarios/ show each rule played.

Table-driven, on the entries' rule data: no state, no store.
"""

from __future__ import annotations

import pytest

from domain.cards import CARDS
from domain.variants import get_variant


@pytest.mark.parametrize(
    ("entry", "players", "hand", "draw", "canastas", "target"),
    [
        # docs/rules/README.md, "Entries at a glance"
        ("classic", 2, 15, 2, 2, 5000),
        ("classic", 3, 13, 1, 1, 5000),
        ("classic", 4, 11, 1, 1, 5000),
        ("classic", 5, 11, 1, 1, 5000),  # four play each deal (R-SEAT-2)
        ("classic", 6, 11, 1, 1, 5000),
        ("extra_six", 6, 13, 1, 2, 10000),
        ("modern_american", 4, 13, 1, 2, 8500),
        ("ponytail", 4, 15, 2, 4, 50000),  # four kinds of canasta (R-PT-OUT-1)
    ],
)
def test_the_entries_table(
    entry: str, players: int, hand: int, draw: int, canastas: int, target: int
) -> None:
    v = get_variant(entry)
    assert players in v.player_counts
    assert v.hand_size_for(players) == hand
    assert v.draw_count_for(players) == draw
    assert v.canastas_needed(players) == canastas
    assert v.target == target


@pytest.mark.parametrize(
    ("entry", "decks", "players"),
    [
        ("classic", 2, (2, 3, 4, 5, 6)),
        ("extra_six", 3, (6,)),
        ("modern_american", 2, (4,)),
        ("ponytail", 6, (4,)),
    ],
)
def test_decks_and_player_counts(entry: str, decks: int, players: tuple[int, ...]) -> None:
    v = get_variant(entry)
    assert v.decks == decks
    assert v.player_counts == players


@pytest.mark.parametrize(
    ("card", "value"),
    [
        ("BJ/1", 50),
        ("LJ/2", 50),
        ("AS/1", 20),
        ("2H/1", 20),
        *((f"{rank}C/1", 10) for rank in ("K", "Q", "J", "10", "9", "8")),
        *((f"{rank}D/1", 5) for rank in ("7", "6", "5", "4")),
        ("3S/1", 5),  # black three
        ("3C/2", 5),
        ("3H/1", 0),  # a red three has no card value: only a bonus or a penalty
        ("3D/3", 0),
    ],
)
def test_card_values_r_card_3(card: str, value: int) -> None:
    assert CARDS[card].value == value


@pytest.mark.parametrize(
    ("entry", "total", "minimum"),
    [
        # R-INIT-1: below 0, 15; 0 to 1495, 50; 1500 to 2995, 90; 3000 or more, 120
        ("classic", -5000, 15),
        ("classic", -5, 15),
        ("classic", 0, 50),
        ("classic", 1495, 50),
        ("classic", 1500, 90),
        ("classic", 2995, 90),
        ("classic", 3000, 120),
        ("classic", 4995, 120),
        ("classic", 7500, 120),  # the 150 step is extra_six's alone
        # extra_six adds 150 at 7500 or more
        ("extra_six", -5, 15),
        ("extra_six", 0, 50),
        ("extra_six", 1495, 50),
        ("extra_six", 1500, 90),
        ("extra_six", 2995, 90),
        ("extra_six", 3000, 120),
        ("extra_six", 7495, 120),
        ("extra_six", 7500, 150),
        ("extra_six", 9995, 150),
        # R-MA-INIT-1: 125 below 3000 (negative totals too), 155 from 3000, 180 from 5000
        ("modern_american", -1000, 125),
        ("modern_american", 0, 125),
        ("modern_american", 2995, 125),
        ("modern_american", 3000, 155),
        ("modern_american", 4995, 155),
        ("modern_american", 5000, 180),
        ("modern_american", 9995, 180),
        # R-PT-INIT-1: 50 below 15000 (negative totals too), 90 from 15000, 120 from 30000
        ("ponytail", -1000, 50),
        ("ponytail", 0, 50),
        ("ponytail", 14995, 50),
        ("ponytail", 15000, 90),
        ("ponytail", 29995, 90),
        ("ponytail", 30000, 120),
        ("ponytail", 49995, 120),
    ],
)
def test_initial_minimum_by_total(entry: str, total: int, minimum: int) -> None:
    assert get_variant(entry).initial_minimum(total) == minimum


@pytest.mark.parametrize(
    ("entry", "count", "value"),
    [
        # R-SCORE-4 (classic): 100 each, 800 for all four
        ("classic", 0, 0),
        ("classic", 1, 100),
        ("classic", 2, 200),
        ("classic", 3, 300),
        ("classic", 4, 800),
        # extra_six: 100 each, nothing more for four, 600 more for five or six
        ("extra_six", 3, 300),
        ("extra_six", 4, 400),
        ("extra_six", 5, 1100),
        ("extra_six", 6, 1200),
    ],
)
def test_red_three_value(entry: str, count: int, value: int) -> None:
    assert get_variant(entry).red_three_bonus(count) == value
