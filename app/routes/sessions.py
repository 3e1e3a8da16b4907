"""Browser sessions (R-CMD-2): sign a web page in with the bearer token once, then act with
an HttpOnly cookie (``app.sessions`` holds the cookie and the CSRF rule)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from app.auth import well_formed
from app.deps import (
    STALE_SESSION,
    UNKNOWN_TOKEN,
    Caller,
    CanastaDep,
    SessionKey,
    SettingsDep,
    Unauthenticated,
    bearer_account,
    lenient_account,
    roles_of,
)
from app.schemas import ErrorOut
from app.services.sessions import TokenRevoked
from app.sessions import COOKIE, check_csrf, is_https, session_cookie

router = APIRouter(tags=["players"])


class SessionOut(BaseModel):
    """The player the new session signs in, and when it ends (UTC, ISO 8601)."""

    name: str
    expires: datetime


class CurrentSession(BaseModel):
    """Who the request signs in: ``name`` null (and no roles) when nobody."""

    name: str | None
    roles: list[str]


@router.get("/sessions/current", response_model=CurrentSession)
async def current_session(
    request: Request,
    canasta: CanastaDep,
    settings: SettingsDep,
    account: Annotated[Caller | None, Depends(lenient_account)],
    key: SessionKey,
) -> JSONResponse:
    """Who is signed in, without a refusal when nobody is: the web pages ask this when they
    open (``GET /me`` answers 401 to a visitor, which a browser logs as an error). The bearer
    token's account if the request sends one (an unknown token is still refused: 401), else
    the session cookie's; a cookie the server no longer knows (expired, signed out) answers
    ``name: null`` and is cleared."""
    name = account.name if account is not None else None
    stale = name is None and key is not None
    roles = await run_in_threadpool(roles_of, canasta, settings, name) if name else []
    response = JSONResponse(CurrentSession(name=name, roles=roles).model_dump())
    response.headers["Cache-Control"] = "no-store"
    if stale:
        response.headers["Set-Cookie"] = session_cookie("", 0, secure=is_https(request))
    return response


@router.post(
    "/sessions",
    status_code=201,
    response_model=SessionOut,
    responses={201: {"headers": {"Set-Cookie": {"description": f"{COOKIE}=...; HttpOnly"}}}},
)
async def sign_in(
    request: Request,
    canasta: CanastaDep,
    settings: SettingsDep,
    account: Annotated[Caller | None, Depends(bearer_account)],
) -> JSONResponse:
    """Sign a browser in: send the player's bearer token in the ``Authorization`` header
    (never in the body: a cross-site form cannot send that header, so no other site can sign
    a visitor in as somebody else). The answer sets the cookie ``canasta_session`` (HttpOnly,
    SameSite=Strict, Path=/, Secure over HTTPS), which every route that takes the bearer
    token then accepts instead of it, the live streams included; a request that changes
    something must also send the header ``X-Canasta-CSRF: 1``. The session is recorded on
    the account: replacing the account's tokens (``POST /me/token``, ``canasta
    revoke-token``) closes it, and a token replaced meanwhile opens none (401)."""
    if account is None:
        raise Unauthenticated("signing in needs the bearer token in the Authorization header")
    # a session outlives the token: the store must hold it good, whatever this process remembers
    token = account.token
    if token is not None and await run_in_threadpool(canasta.stored_token, token) != account.name:
        raise Unauthenticated(UNKNOWN_TOKEN)
    lifetime = settings.session_max_age_seconds
    try:  # refused if the tokens are replaced meanwhile (checked in the session's transaction)
        key, expires = await run_in_threadpool(canasta.open_session, account.name, lifetime, token)
    except TokenRevoked:
        raise Unauthenticated(UNKNOWN_TOKEN) from None
    body = SessionOut(name=account.name, expires=datetime.fromtimestamp(expires, UTC))
    response = JSONResponse(body.model_dump(mode="json"), status_code=201)
    response.headers["Set-Cookie"] = session_cookie(key, lifetime, secure=is_https(request))
    response.headers["Cache-Control"] = "no-store"
    return response


@router.delete(
    "/sessions",
    status_code=204,
    responses={
        204: {"headers": {"Set-Cookie": {"description": f"{COOKIE}=; Max-Age=0"}}},
        401: {"model": ErrorOut, "description": "others=true: no open session cookie"},
        403: {"model": ErrorOut, "description": "the cookie without X-Canasta-CSRF"},
    },
)
async def sign_out(
    request: Request,
    canasta: CanastaDep,
    others: Annotated[
        bool,
        Query(
            description="true: sign out everywhere else: close every other session of the "
            "account (other browsers, one a leaked cookie signed in), and keep this one"
        ),
    ] = False,
) -> Response:
    """Sign the browser out: its session is closed for every server process and the cookie
    is cleared. Needs the header ``X-Canasta-CSRF: 1`` when the cookie is sent. Without a
    cookie (or with one the server no longer knows) it only clears it.

    ``?others=true``: sign out everywhere else instead: every other session of the account is
    closed, for every server process at once (their live streams end), and this one stays
    signed in; the tokens are not touched (replace them with ``POST /me/token``, which also
    closes the other sessions). Needs the session cookie (401 without it, or with one the
    server no longer knows, and nothing is closed)."""
    key = request.cookies.get(COOKIE)
    if others:
        if not key:
            raise Unauthenticated("signing out everywhere else needs the session cookie")
        check_csrf(request)
        try:
            if not well_formed(key):
                raise TokenRevoked
            await run_in_threadpool(canasta.close_other_sessions, key)
        except TokenRevoked:
            raise Unauthenticated(STALE_SESSION) from None
        return Response(status_code=204)
    if key:
        check_csrf(request)
        if well_formed(key):
            await run_in_threadpool(canasta.close_session, key)
    response = Response(status_code=204)
    response.headers["Set-Cookie"] = session_cookie("", 0, secure=is_https(request))
    return response
