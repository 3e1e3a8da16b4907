"""Sides, sit-out rotation, the per-deal virtual table and dealer rotation (R-SEAT-*, R-DEAL-1/2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from domain.errors import SetupError
from domain.variants import get_variant
from domain.variants.base import Variant

SIDE_NAMES = ("A", "B", "C")


def fixed_sides(players: int) -> dict[str, list[int]]:
    """Sides that do not depend on the host (R-SEAT-1): 2p/3p alone, 4p partners opposite."""
    if players in (2, 3):
        return {SIDE_NAMES[seat]: [seat] for seat in range(players)}
    if players == 4:
        return {"A": [0, 2], "B": [1, 3]}
    raise SetupError("R-SEAT-2", "teams.host_chooses", players=players)


def default_teams(entry: str, players: int) -> list[list[int]] | None:
    """Team A on the even seats, so that teams alternate around the room (None where the
    host does not choose teams)."""
    if players not in get_variant(entry).host_chooses_teams:
        return None
    return [list(range(0, players, 2))]


def choose_sides(
    variant: Variant, players: int, teams: Sequence[Sequence[int]] | None
) -> dict[str, list[int]]:
    """The sides of a table: fixed, or from the host's choice (R-SEAT-2/3, docs/rules/extra_six.md).

    ``teams`` lists team A (and team B when the entry has three teams); the remaining
    seats form the last team.
    """
    if players not in variant.host_chooses_teams:
        return fixed_sides(players)
    if not teams:
        raise SetupError("R-SEAT-3", "teams.choose_for", players=players)
    chosen: list[list[int]] = []
    taken: set[int] = set()
    for team in teams:
        seats = sorted(team)
        if len(set(seats)) != len(seats) or any(not 0 <= s < players for s in seats):
            raise SetupError("R-SEAT-3", "teams.bad_seats", seats=list(team))
        if taken & set(seats):
            raise SetupError("R-SEAT-3", "teams.seat_twice")
        taken |= set(seats)
        chosen.append(seats)
    rest = [s for s in range(players) if s not in taken]
    if rest:
        chosen.append(rest)
    shape = tuple(len(t) for t in chosen)
    if shape not in variant.team_shapes[players]:
        allowed = ["+".join(map(str, s)) for s in variant.team_shapes[players]]
        raise SetupError("R-SEAT-2", "teams.shape", shape=shape, allowed=allowed)
    return {SIDE_NAMES[i]: seats for i, seats in enumerate(chosen)}


def active_members(seats: Sequence[int], deal_index: int, sit_outs: bool) -> list[int]:
    """R-SEAT-2: a team of three sits one member out per deal, in room-seat order."""
    if sit_outs and len(seats) == 3:
        out = seats[deal_index % 3]
        return [s for s in seats if s != out]
    return list(seats)


def virtual_table(sides: Mapping[str, Sequence[int]], deal_index: int, sit_outs: bool) -> list[int]:
    """The clockwise order of the deal's active room seats: A1 B1 (C1) A2 B2 (C2) ..."""
    actives = [active_members(sides[name], deal_index, sit_outs) for name in sorted(sides)]
    order: list[int] = []
    for i in range(max(len(a) for a in actives)):
        for members in actives:
            if i < len(members):
                order.append(members[i])
    return order


def rotation_for(
    sides: Mapping[str, Sequence[int]], sit_out: Sequence[int], sit_outs: bool, players: int
) -> int:
    """R-SEAT-2: the shift of the sit-out rotation whose first deal sits out exactly the
    seats ``sit_out`` (set up for tests and scenarios)."""
    wanted = sorted(sit_out)
    for rotation in range(3):
        active = virtual_table(sides, rotation, sit_outs)
        if sorted(set(range(players)) - set(active)) == wanted:
            return rotation
    raise SetupError("R-SEAT-2", "teams.sit_out", seats=wanted)


def side_of_seats(sides: Mapping[str, Sequence[int]], players: int) -> list[str]:
    side_of = [""] * players
    for name, seats in sides.items():
        for seat in seats:
            side_of[seat] = name
    return side_of


def check_first_dealer(dealer: int, order: Sequence[int]) -> None:
    """R-DEAL-1: the first dealer (drawn by chance, or fixed for tests) plays deal 1."""
    if dealer not in order:
        raise SetupError("R-DEAL-1", "game.dealer_sits_out", seat=dealer)


def next_dealer(previous_order: Sequence[int], previous_dealer: int, active: Sequence[int]) -> int:
    """R-DEAL-2: from the previous dealer, the next seat to the left on the previous
    deal's virtual table whose player plays the new deal."""
    n = len(previous_order)
    start = previous_order.index(previous_dealer)
    for step in range(1, n + 1):
        seat = previous_order[(start + step) % n]
        if seat in active:
            return seat
    return active[0]  # unreachable for the entries' shapes; keeps the function total
