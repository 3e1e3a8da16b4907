"""Dependencies shared by the routes: the application service and who is asking."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.application import CanastaApp
from app.settings import Settings
from domain.accounts import AUDITOR, Account
from domain.errors import DomainError, Forbidden
from projections.runner import ReadModels


class Unauthenticated(DomainError):
    """No valid bearer token where one is needed (HTTP 401)."""

    def __init__(self, message: str) -> None:
        super().__init__("R-CMD-2", message)


def get_canasta(request: Request) -> CanastaApp:
    canasta: CanastaApp = request.app.state.canasta
    return canasta


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_read_models(request: Request) -> ReadModels:
    read_models: ReadModels = request.app.state.read_models
    return read_models


CanastaDep = Annotated[CanastaApp, Depends(get_canasta)]
ReadModelsDep = Annotated[ReadModels, Depends(get_read_models)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
_bearer = HTTPBearer(auto_error=False, description="the token returned by POST /players")


def optional_account(
    canasta: CanastaDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Account | None:
    """The authenticated account (R-CMD-2), or None for an anonymous spectator."""
    if credentials is None:
        return None
    token = credentials.credentials
    account = canasta.authenticate(token) if 0 < len(token) <= 200 else None
    if account is None:
        raise Unauthenticated("unknown or malformed bearer token")
    return account


def required_account(account: Annotated[Account | None, Depends(optional_account)]) -> Account:
    if account is None:
        raise Unauthenticated("this needs a bearer token (register with POST /players)")
    return account


MaybeAccount = Annotated[Account | None, Depends(optional_account)]
AccountDep = Annotated[Account, Depends(required_account)]


def auditor(account: AccountDep, settings: SettingsDep) -> Account:
    """R-VIEW-4: only an auditor, a role granted by the operator, may audit."""
    if AUDITOR in account.roles or account.name in settings.auditors:
        return account
    raise Forbidden("R-VIEW-4", "auditing needs the auditor role, granted by the operator")


AuditorDep = Annotated[Account, Depends(auditor)]
