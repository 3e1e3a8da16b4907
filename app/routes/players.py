"""Accounts: register for a bearer token (R-CMD-2)."""

from __future__ import annotations

from fastapi import APIRouter

from app.deps import AccountDep, CanastaDep, SettingsDep
from app.schemas import Me, RegisterIn, RegisterOut
from domain.accounts import AUDITOR

router = APIRouter(tags=["players"])


@router.post("/players", status_code=201, response_model=RegisterOut)
def register(body: RegisterIn, canasta: CanastaDep) -> RegisterOut:
    """Create an account. The token is shown once; the server keeps only its hash."""
    return RegisterOut(name=body.name, token=canasta.register(body.name))


@router.get("/me", response_model=Me)
def me(account: AccountDep, settings: SettingsDep) -> Me:
    roles = list(account.roles)
    if account.name in settings.auditors and AUDITOR not in roles:
        roles.append(AUDITOR)
    return Me(name=account.name, roles=roles)
