"""Dependencies shared by the routes: the application service and who is asking."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyCookie, HTTPAuthorizationCredentials, HTTPBearer

from app.application import CanastaApp
from app.auth import account_name
from app.infra.projection_runner import ReadModels
from app.sessions import COOKIE, CSRF_HEADER, check_csrf, session_account
from app.settings import Settings
from domain.accounts import AUDITOR, name_key
from domain.errors import DomainError, Forbidden, NotFound


class Unauthenticated(DomainError):
    """No valid bearer token or session cookie where one is needed (HTTP 401)."""

    def __init__(self, message: str) -> None:
        super().__init__("R-CMD-2", message)


# Dependencies that do no I/O are ``async def``: FastAPI runs a plain ``def`` dependency in
# the threadpool, a hop to another thread and back for every request.
async def get_canasta(request: Request) -> CanastaApp:
    canasta: CanastaApp = request.app.state.canasta
    return canasta


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_read_models(request: Request) -> ReadModels:
    read_models: ReadModels = request.app.state.read_models
    return read_models


CanastaDep = Annotated[CanastaApp, Depends(get_canasta)]
ReadModelsDep = Annotated[ReadModels, Depends(get_read_models)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
_bearer = HTTPBearer(auto_error=False, description="the token returned by POST /players")
_cookie = APIKeyCookie(
    name=COOKIE,
    auto_error=False,
    scheme_name="SessionCookie",
    description="a browser session (POST /sessions); a request that changes something also "
    f"needs the header {CSRF_HEADER}: 1. Ignored when an Authorization header is sent.",
)


@dataclass(frozen=True)
class Caller:
    """Who sent the request: the account name its bearer token or session cookie belongs
    to (R-CMD-2). Roles are read from the store where they matter (``auditor``, ``GET /me``).
    ``session``: the session key that signed him in, when it was the cookie (a live stream
    ends with its session: ``app.routes.stream``); ``token``: the bearer token, when it was
    that (a live stream ends when it is revoked)."""

    name: str
    session: str | None = None
    token: str | None = None


#: What a request whose Authorization header is not ``Bearer <token>`` is told.
NOT_BEARER = (
    "the Authorization header is not 'Bearer <token>': send the token of POST /players as "
    "'Authorization: Bearer <token>'"
)


#: What an unknown, revoked or malformed bearer token is told: the same words for each, so a
#: leaked token's holder learns nothing of why (docs/api.md, "Replacing a token").
UNKNOWN_TOKEN = "unknown, revoked or malformed bearer token"

#: What a session cookie that signs nobody in (unknown, expired, signed out, closed) is told.
STALE_SESSION = "unknown, expired or signed-out session cookie (sign in again: POST /sessions)"


async def bearer_account(
    request: Request,
    canasta: CanastaDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Caller | None:
    """The account of the request's bearer token, or None if it sends none (see
    ``app.auth``: the command lane checks tokens with the same functions). A header that is
    a bare value, the token without ``Bearer``, is refused rather than read as nobody: the
    deal's view would otherwise be a spectator's, without a word (a ``Basic ...`` header,
    which a proxy in front may send, still counts as no token)."""
    if credentials is None:
        raw = request.headers.get("authorization", "").strip()
        if raw and " " not in raw:
            raise Unauthenticated(NOT_BEARER)
        return None
    name = await account_name(canasta, credentials.credentials)
    if name is None:
        raise Unauthenticated(UNKNOWN_TOKEN)
    return Caller(name, token=credentials.credentials)


async def optional_account(
    request: Request,
    canasta: CanastaDep,
    bearer: Annotated[Caller | None, Depends(bearer_account)],
    session: Annotated[str | None, Depends(_cookie)],
) -> Caller | None:
    """Who is calling (R-CMD-2), the one place that decides it: the bearer token's account if
    the request sends one (its cookie is then ignored); else the session cookie's, the CSRF
    header required if the request changes something (``app.sessions``); else None, an
    anonymous spectator."""
    if bearer is not None or session is None:
        return bearer
    check_csrf(request)
    name = await session_account(canasta, session)
    if name is None:
        raise Unauthenticated(STALE_SESSION)
    return Caller(name, session)


async def lenient_account(
    canasta: CanastaDep,
    bearer: Annotated[Caller | None, Depends(bearer_account)],
    session: Annotated[str | None, Depends(_cookie)],
) -> Caller | None:
    """As ``optional_account`` for a read, but a session cookie that signs nobody in (expired,
    signed out, unknown) is nobody rather than a refusal (``GET /sessions/current``); an
    unknown bearer token is still refused."""
    if bearer is not None or session is None:
        return bearer
    name = await session_account(canasta, session)
    return Caller(name) if name is not None else None


async def required_account(
    request: Request,
    account: Annotated[Caller | None, Depends(optional_account)],
) -> Caller:
    if account is None:
        if request.headers.get("authorization"):  # the token alone, "Token ...", "Basic ..."
            raise Unauthenticated(NOT_BEARER)
        raise Unauthenticated(
            "this needs a bearer token (register with POST /players) or a session cookie"
        )
    return account


MaybeAccount = Annotated[Caller | None, Depends(optional_account)]
#: The session cookie's key as sent, unchecked (``GET /sessions/current``).
SessionKey = Annotated[str | None, Depends(_cookie)]
AccountDep = Annotated[Caller, Depends(required_account)]


def roles_of(canasta: CanastaApp, settings: Settings, name: str) -> list[str]:
    """The caller's roles now: granted in the store, or named in the settings."""
    roles = list(canasta.account(name).roles)
    if AUDITOR not in roles and named_auditor(canasta, settings, name):
        roles.append(AUDITOR)
    return roles


def named_auditor(canasta: CanastaApp, settings: Settings, name: str) -> bool:
    """Whether ``CANASTA_AUDITORS`` names this account. A configured name is looked up like
    any name, in any case (``canasta.account``): ``Audrey`` there names the account
    ``audrey``; where an older store holds two accounts of one name in different cases, the
    exact spelling names its own account only."""
    if name in settings.auditors:
        return True
    for configured in settings.auditors:
        if name_key(configured) == name_key(name):
            try:
                if canasta.account(configured).name == name:
                    return True
            except NotFound:
                pass
    return False


def auditor(account: AccountDep, canasta: CanastaDep, settings: SettingsDep) -> Caller:
    """R-VIEW-4: only an auditor, a role granted by the operator, may audit (checked
    against the store on every request, so a revoked role stops at once)."""
    if AUDITOR in roles_of(canasta, settings, account.name):
        return account
    raise Forbidden("R-VIEW-4", "audit.not_auditor")


AuditorDep = Annotated[Caller, Depends(auditor)]
