"""Absent players (docs/tables.md): leave a seat, give a vacant seat, the missed turns limit.
A player away from his seat takes it back with ``POST /tables/{id}/seats``."""

from __future__ import annotations

from typing import Annotated, Any
from uuid import UUID

from fastapi import APIRouter, Path

from app.deps import AccountDep, CanastaDep
from app.routes.tables import table_view
from app.schemas import ErrorOut
from app.schemas_seats import GiveIn, LeaveOut, MissedTurnsIn
from app.schemas_views import TableView

router = APIRouter(tags=["tables"])


@router.post(
    "/tables/{table_id}/leave",
    response_model=LeaveOut,
    responses={
        403: {"model": ErrorOut, "description": "not_seated: you have no seat here"},
        409: {"model": ErrorOut, "description": "seat_away: you are away already"},
    },
)
def leave(table_id: UUID, account: AccountDep, canasta: CanastaDep) -> LeaveOut:
    """You leave your seat. Before the start the seat is free again. During the game it
    stays yours and the basic bot plays it (``played_by``) until you take it back with
    ``POST /tables/{id}/seats``; meanwhile your commands are refused (403
    ``seat_not_yours``) and you see the deal as a spectator does. The host may give the seat
    to somebody else while you are away."""
    seat, by = canasta.leave_table(table_id, account.name)
    return LeaveOut(seat=seat, played_by=by)


@router.post(
    "/tables/{table_id}/seats/{seat}/give",
    response_model=TableView,
    responses={
        404: {"model": ErrorOut, "description": "no such table, or no such player"},
        409: {
            "model": ErrorOut,
            "description": "seat_not_vacant: its player plays it; host_seat: the host's own "
            "seat (he takes it back)",
        },
    },
)
def give(
    table_id: UUID,
    seat: Annotated[int, Path(ge=0, le=5)],
    body: GiveIn,
    account: AccountDep,
    canasta: CanastaDep,
) -> dict[str, Any]:
    """The host gives a vacant seat (one the bot plays while its player is away) to
    another registered player, who sits and plays there from now on (R-SEAT-3: the host
    only; R-SEAT-5: a game in play, a player without a seat here)."""
    table = canasta.get_table(table_id)
    table.check_host(account.name)  # a stranger learns nothing about the accounts
    player = canasta.account(body.player).name  # 404 for an unknown player
    canasta.give_seat(table_id, account.name, seat, player)
    return table_view(canasta.get_table(table_id))


@router.put("/tables/{table_id}/missed-turns", response_model=TableView)
def missed_turns(
    table_id: UUID, body: MissedTurnsIn, account: AccountDep, canasta: CanastaDep
) -> dict[str, Any]:
    """The host chooses, before the start, after how many turns missed in a row (the turn
    clock's timeouts) the basic bot takes a seat over; 0: never (R-SEAT-3 after the
    start)."""
    canasta.set_missed_turns_limit(table_id, account.name, body.limit)
    return table_view(canasta.get_table(table_id))
