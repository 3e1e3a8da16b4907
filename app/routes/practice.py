"""A practice table in one call (docs/bots.md): its sender and bots, started at once."""

from __future__ import annotations

from fastapi import APIRouter

from app.deps import AccountDep, CanastaDep
from app.schemas import PracticeIn, PracticeOut

router = APIRouter(tags=["tables"])


@router.post("/tables/practice", status_code=201, response_model=PracticeOut)
def start_practice(body: PracticeIn, account: AccountDep, canasta: CanastaDep) -> PracticeOut:
    """The sender hosts a table of ``entry`` and sits in seat 0; bots of level ``bot`` take
    the other seats (teams: the even seats against the odd ones where the host chooses them);
    the game starts at once. ``private``: left out of the lobby (nobody else may sit; there
    is no invite code to give); ``spectators: false``: only its player watches;
    ``turn_seconds``: the turn clock, as for any table. The bots play their turns from the
    bot process (``canasta bots`` or the server's own, ``CANASTA_RUN_BOTS``)."""
    table_id, deal_id = canasta.start_practice(
        account.name,
        body.entry,
        body.players,
        body.bot,
        body.options.model_dump(),
        body.target,
        private=body.private,
        spectators=body.spectators,
        turn_seconds=body.turn_seconds,
    )
    return PracticeOut(table=table_id, deal=deal_id)
