"""The dry run of a command: ``POST /deals/{id}/commands/check`` (docs/dry_run.md)."""

from __future__ import annotations

from uuid import UUID

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from app.command_io import expectation, to_command
from app.deps import AccountDep, CanastaDep
from app.errors import COMMAND_ERRORS
from app.schemas_check import CheckIn, CheckOut, check_answer

router = APIRouter(tags=["deals"])


@router.post(
    "/deals/{deal_id}/commands/check",
    response_model=CheckOut,
    responses={403: COMMAND_ERRORS[403], 404: COMMAND_ERRORS[404]},
)
def check_command(
    deal_id: UUID, body: CheckIn, account: AccountDep, canasta: CanastaDep
) -> JSONResponse:
    """Would this command be accepted now? Answers 200 either way: ``accepted`` with the
    events it would record as you would see them (those that cards hidden from you decide
    are told as kind and counts only), the points its melds count and the initial-meld
    minimum; or the refusal the command would get (the rule id, R-CMD-1 for a stale
    ``expect`` or a used ``seq``, ``seq_too_far``). Records nothing: no event, no sequence
    number used, no command-log entry."""
    command = to_command(body.command)
    answer = canasta.check(deal_id, account.name, body.seq, command, expectation(body))
    return JSONResponse(check_answer(answer))
