"""Rules the server used to decide in its application service, now asked of the domain
alone: who cuts (R-DEAL-4, R-PT-DEAL-1), the sit-out rotation (R-SEAT-2), the first and next
dealer and the next-deal guards (R-DEAL-1/2, R-GAME-1, R-SEAT-3), the opening totals, the
options of a table, a stacked deck (R-DEAL-3) and the account names (R-CMD-2).

Table-driven, on plain objects: no application service, no store.
"""

from __future__ import annotations

import pytest

from domain.accounts import check_name
from domain.cards import full_deck
from domain.errors import DomainError, Forbidden, SetupError
from domain.seating import check_first_dealer, fixed_sides, rotation_for, virtual_table
from domain.table import Table
from domain.variants import get_variant

SIX = {"A": [0, 2, 4], "B": [1, 3, 5]}  # two teams of three (classic 6p: sit-outs)
FIVE = {"A": [0, 2, 4], "B": [1, 3]}


@pytest.mark.parametrize(
    ("entry", "order", "dealer", "cutter"),
    [
        ("classic", [0, 1, 2, 3], 0, 1),  # R-DEAL-4: the dealer's left cuts
        ("classic", [0, 1, 2, 3], 3, 0),  # ... around the table
        ("classic", [0, 1], 1, 0),
        ("classic", [0, 1, 4, 3], 1, 4),  # on the deal's virtual table, not the room
        ("extra_six", [0, 1, 2, 3, 4, 5], 5, 0),
        ("modern_american", [0, 1, 2, 3], 2, 3),
        ("ponytail", [0, 1, 2, 3], 0, 3),  # R-PT-DEAL-1: the dealer's right cuts
        ("ponytail", [0, 1, 2, 3], 2, 1),
    ],
)
def test_who_cuts(entry: str, order: list[int], dealer: int, cutter: int) -> None:
    assert get_variant(entry).cutter(order, dealer) == cutter


@pytest.mark.parametrize(
    ("sides", "sit_out", "players", "rotation"),
    [
        (SIX, [0, 1], 6, 0),  # deal 1 sits out the first member of each team of three
        (SIX, [2, 3], 6, 1),
        (SIX, [3, 2], 6, 1),  # in any order
        (SIX, [4, 5], 6, 2),
        (FIVE, [0], 5, 0),  # 5p: only the team of three sits one out
        (FIVE, [4], 5, 2),
    ],
)
def test_sit_out_rotation(
    sides: dict[str, list[int]], sit_out: list[int], players: int, rotation: int
) -> None:
    assert rotation_for(sides, sit_out, True, players) == rotation
    active = virtual_table(sides, rotation, True)
    assert sorted(set(range(players)) - set(active)) == sorted(sit_out)


@pytest.mark.parametrize(
    ("sides", "sit_out", "players"),
    [(SIX, [0, 3], 6), (SIX, [0], 6), (FIVE, [1], 5), (fixed_sides(4), [0], 4)],
)
def test_sit_out_rotation_refuses_what_no_deal_sits_out(
    sides: dict[str, list[int]], sit_out: list[int], players: int
) -> None:
    with pytest.raises(SetupError) as refused:
        rotation_for(sides, sit_out, True, players)
    assert refused.value.code == "R-SEAT-2"


@pytest.mark.parametrize(("dealer", "ok"), [(0, True), (3, True), (4, False), (-1, False)])
def test_first_dealer_plays_the_first_deal(dealer: int, ok: bool) -> None:
    if ok:
        check_first_dealer(dealer, [0, 1, 2, 3])
    else:
        with pytest.raises(SetupError) as refused:
            check_first_dealer(dealer, [0, 1, 2, 3])
        assert refused.value.code == "R-DEAL-1"


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("ann", True),
        ("A.b_c-9", True),
        ("x" * 32, True),
        ("x" * 33, False),
        ("", False),
        ("ann bob", False),
        ("änn", False),
        ("ann/1", False),
        (".", False),
        ("..", False),
        (".ann", False),
        ("-ann", False),
        ("_ann", False),
        ("9lives", True),
        ("ann.", True),
    ],
)
def test_account_names(name: str, ok: bool) -> None:
    if ok:
        check_name(name)
    else:
        with pytest.raises(SetupError) as refused:
            check_name(name)
        assert refused.value.code == "R-CMD-2"


@pytest.mark.parametrize(
    ("entry", "options", "full"),
    [
        ("classic", {}, {"always_frozen": False}),
        ("classic", {"always_frozen": True}, {"always_frozen": True}),
        ("modern_american", {}, {}),
    ],
)
def test_table_options(entry: str, options: dict[str, bool], full: dict[str, bool]) -> None:
    assert get_variant(entry).table_options(options) == full


@pytest.mark.parametrize(
    ("entry", "deck", "ok"),
    [
        ("classic", full_deck(2), True),
        ("classic", full_deck(2)[::-1], True),
        ("classic", full_deck(2)[:-1], False),
        ("classic", full_deck(3), False),
        ("extra_six", full_deck(3), True),
        ("classic", [*full_deck(2)[:-1], full_deck(2)[0]], False),
    ],
)
def test_stacked_deck(entry: str, deck: list[str], ok: bool) -> None:
    if ok:
        get_variant(entry).check_stacked_deck(deck)
    else:
        with pytest.raises(SetupError) as refused:
            get_variant(entry).check_stacked_deck(deck)
        assert refused.value.code == "R-DEAL-3"


@pytest.mark.parametrize(
    ("scores_before", "totals", "code"),
    [
        (None, {"A": 0, "B": 0}, None),
        ({}, {"A": 0, "B": 0}, None),
        ({"A": 1500}, {"A": 1500, "B": 0}, None),
        ({"A": 100, "B": -20}, {"A": 100, "B": -20}, None),
        ({"C": 5}, None, "R-SEAT-3"),
    ],
)
def test_opening_totals(
    scores_before: dict[str, int] | None, totals: dict[str, int] | None, code: str | None
) -> None:
    if code is None:
        assert Table.opening_totals(fixed_sides(4), scores_before) == totals
    else:
        with pytest.raises(SetupError) as refused:
            Table.opening_totals(fixed_sides(4), scores_before)
        assert refused.value.code == code


# --- the next deal -------------------------------------------------------------------------


def _table(players: int = 4, entry: str = "classic") -> Table:
    table = Table(host="p0", entry=entry, players=players, options={}, target=5000)
    for seat in range(players):
        table.join(f"p{seat}", seat)
    return table


def _started(players: int = 4, dealer: int = 0) -> Table:
    table = _table(players)
    sides = table.check_can_start("p0")
    table.start(sides=sides, totals=Table.opening_totals(sides), rotation=0)
    order = table.virtual_table(1)
    table.open_deal(deal_id="deal-1", number=1, dealer=dealer, order=order)
    return table


def _refusal(table: Table, player: str) -> tuple[type[DomainError], str]:
    with pytest.raises(DomainError) as refused:
        table.next_deal(player)
    return type(refused.value), refused.value.code


def test_next_deal_after_a_finished_deal() -> None:
    table = _started(dealer=3)
    table.record_deal("deal-1", {"A": 120, "B": -30})
    number, order, dealer = table.next_deal("p0")
    assert (number, order) == (2, [0, 1, 2, 3])
    assert dealer == 0  # R-DEAL-2: the next seat to the left of the previous dealer


@pytest.mark.parametrize(
    ("setup", "player", "refusal"),
    [
        ("deal under way", "p0", (SetupError, "R-GAME-1")),
        ("deal under way", "p1", (Forbidden, "R-SEAT-3")),  # only the host
        ("not started", "p0", (SetupError, "R-SEAT-3")),
        ("stopped", "p0", (SetupError, "R-SEAT-3")),
        ("finished", "p0", (SetupError, "R-SEAT-3")),
    ],
)
def test_next_deal_guards(setup: str, player: str, refusal: tuple[type, str]) -> None:
    if setup == "not started":
        table = _table()
    else:
        table = _started()
        if setup == "stopped":
            table.stop("p0")
        elif setup == "finished":
            table.record_deal("deal-1", {"A": 5000, "B": 0})  # R-GAME-1: target reached
    assert _refusal(table, player) == refusal


def test_next_deal_rotates_the_sit_outs() -> None:
    table = Table(host="p0", entry="classic", players=6, options={}, target=5000)
    for seat in range(6):
        table.join(f"p{seat}", seat)
    table.choose_teams("p0", [[0, 2, 4]])
    sides = table.check_can_start("p0")
    table.start(sides=sides, totals=Table.opening_totals(sides), rotation=0)
    table.open_deal(deal_id="deal-1", number=1, dealer=2, order=table.virtual_table(1))
    assert table.order == [2, 3, 4, 5]  # seats 0 and 1 sit out deal 1
    table.record_deal("deal-1", {"A": 0, "B": 0})
    number, order, dealer = table.next_deal("p0")
    assert (number, order) == (2, [0, 1, 4, 5])
    assert dealer == 4  # R-DEAL-2: left of 2 on deal 1's table is 3, who sits out; then 4
