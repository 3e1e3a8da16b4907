"""The move menu: ``GET /deals/{id}/moves`` (docs/api.md)."""

from __future__ import annotations

from dataclasses import asdict
from uuid import UUID

from fastapi import APIRouter

from app.application import Expected
from app.deps import AccountDep, CanastaDep
from app.errors import MENU_FORBIDDEN
from app.schemas_moves import MovesOut, moves_out
from app.services.seats import refuse_away
from domain.errors import Forbidden
from domain.menu import menu

router = APIRouter(tags=["deals"])


@router.get("/deals/{deal_id}/moves", response_model=MovesOut, responses={403: MENU_FORBIDDEN})
def moves(deal_id: UUID, canasta: CanastaDep, account: AccountDep) -> MovesOut:
    """The requester's legal moves now, as complete command bodies to send back with the
    given ``expect`` and ``next_seq``; with his cards by rank, his side's melds, the initial
    minimum left and whether he may go out, to compose the moves no menu lists. Only for a
    player seated at the table (R-CMD-2: 401 without a token, 403 without a seat)."""
    deal = canasta.get_deal(deal_id)
    st = deal.state
    if account.name not in st.player_ids:
        refuse_away(canasta.get_table(UUID(st.table_id)), st.player_ids, account.name)
        raise Forbidden("R-CMD-2", "moves.not_seated")
    seat = st.player_ids.index(account.name)
    return moves_out(
        menu(st, seat),
        expect=asdict(Expected.now(deal)),
        step=deal.version,
        phase=st.phase,
        next_seq=canasta.last_seq(st.table_id, account.name) + 1,
    )
