"""Who sends a request (R-CMD-2): the bearer token check shared by the routes' dependencies
(``app.deps``) and the command lane (``app.command_lane``)."""

from __future__ import annotations

from fastapi.concurrency import run_in_threadpool
from fastapi.security.utils import get_authorization_scheme_param

from app.application import CanastaApp

#: Longer tokens are refused without a look-up (a token is 43 characters).
MAX_TOKEN_LENGTH = 200


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header's value, read as FastAPI's
    ``HTTPBearer`` reads it (the routes' OpenAPI security scheme); None if there is none."""
    scheme, credentials = get_authorization_scheme_param(authorization)
    if not (authorization and scheme and credentials) or scheme.lower() != "bearer":
        return None
    return credentials


def well_formed(token: str) -> bool:
    return 0 < len(token) <= MAX_TOKEN_LENGTH


def known_account(canasta: CanastaApp, token: str) -> str | None:
    """The account name of a well-formed token this process has already authenticated
    (in memory, no I/O); None otherwise."""
    return canasta.known_token(token) if well_formed(token) else None


async def account_name(canasta: CanastaApp, token: str) -> str | None:
    """The account name of a bearer token, or None if it is unknown or malformed. A token
    this process has seen is resolved in memory; any other is looked up in the store, in
    the threadpool."""
    name = known_account(canasta, token)
    if name is None and well_formed(token):
        name = await run_in_threadpool(canasta.authenticate, token)
    return name
