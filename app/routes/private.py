"""Private tables, spectators and rematches (docs/tables.md)."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from fastapi import APIRouter, Response

from app.deps import AccountDep, CanastaDep
from app.routes.tables import table_view
from app.schemas import ErrorOut, SpectatorsIn
from app.schemas_views import InviteOut, RematchOut, TableView

router = APIRouter(tags=["tables"])


@router.post("/tables/{table_id}/invite", response_model=InviteOut)
def rotate_invite(table_id: UUID, account: AccountDep, canasta: CanastaDep) -> InviteOut:
    """The host of a private table gets a new invite code, shown this once; the old code
    stops working (players already seated keep their seats). The server keeps only codes'
    hashes, so this is also how a host who lost the code gets one again."""
    return InviteOut(invite=canasta.rotate_invite(table_id, account.name))


@router.put("/tables/{table_id}/spectators", response_model=TableView)
def allow_spectators(
    table_id: UUID, body: SpectatorsIn, account: AccountDep, canasta: CanastaDep
) -> dict[str, Any]:
    """The host allows spectators or not, before the start (R-SEAT-3 after it)."""
    return table_view(canasta.allow_spectators(table_id, account.name, body.allowed))


@router.post(
    "/tables/{table_id}/rematch",
    status_code=201,
    response_model=RematchOut,
    responses={
        200: {"model": RematchOut, "description": "the rematch was opened already: the same"},
        409: {"model": ErrorOut, "description": "game_not_over: the game is open or in play"},
    },
)
def rematch(
    table_id: UUID, account: AccountDep, canasta: CanastaDep, response: Response
) -> RematchOut:
    """A seated player or the host opens the rematch of a game that ended or was stopped:
    a new open table with the same host, entry, options, target, privacy (the same invite
    code) and teams, with the same players already in the same seats; the host starts it.
    201 the first time; every later request answers 200 with the same table. The old
    table records it (``rematch`` in its view, ``RematchOpened`` in its stream)."""
    new_id, opened = canasta.rematch(table_id, account.name)
    if not opened:
        response.status_code = 200
    return RematchOut(id=new_id)
