"""Accounts: register for a bearer token (R-CMD-2)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from app.deps import UNKNOWN_TOKEN, AccountDep, CanastaDep, SettingsDep, Unauthenticated, roles_of
from app.schemas import Me, NewToken, RegisterIn, RegisterOut
from app.services.accounts import TokenRevoked

router = APIRouter(tags=["players"])


@router.post("/players", status_code=201, response_model=RegisterOut)
def register(body: RegisterIn, canasta: CanastaDep) -> RegisterOut:
    """Create an account. The token is shown once; the server keeps only its hash."""
    return RegisterOut(name=body.name, token=canasta.register(body.name))


@router.get("/me", response_model=Me)
def me(account: AccountDep, canasta: CanastaDep, settings: SettingsDep) -> Me:
    """Who the bearer token (or session cookie) signs in: the account's name as registered,
    and its roles (``auditor``: granted by the operator, ``canasta grant-auditor``)."""
    return Me(name=account.name, roles=roles_of(canasta, settings, account.name))


@router.post("/me/token", status_code=201, response_model=NewToken)
async def replace_token(account: AccountDep, canasta: CanastaDep) -> JSONResponse:
    """Replace the player's bearer token (a token that leaked, say): every token of the
    account is revoked and a new one is answered, shown once. The old token is refused (401,
    as an unknown token) at once by the server process that answered, and within 2 seconds
    by every other one (docs/api.md, "Replacing a token"); live streams opened with it end.
    Every browser session of the account is closed too (they were opened with a token that
    may have leaked): refused (401) at once by every server process, their live streams end.
    Signed in by the session cookie instead (with ``X-Canasta-CSRF: 1``), that one session
    stays signed in (every other one is closed): the way back for a player whose tokens the
    operator revoked."""
    try:
        token, _revoked, _closed = await run_in_threadpool(
            canasta.replace_tokens, account.name, "player", account.token, account.session
        )
    except TokenRevoked:  # let in here a moment ago, but revoked (closed) in the store
        raise Unauthenticated(UNKNOWN_TOKEN) from None
    response = JSONResponse(NewToken(name=account.name, token=token).model_dump(), 201)
    response.headers["Cache-Control"] = "no-store"
    return response
