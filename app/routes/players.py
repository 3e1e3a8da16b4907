"""Accounts: register for a bearer token (R-CMD-2)."""

from __future__ import annotations

from fastapi import APIRouter

from app.deps import AccountDep, CanastaDep, SettingsDep, roles_of
from app.schemas import Me, RegisterIn, RegisterOut

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
