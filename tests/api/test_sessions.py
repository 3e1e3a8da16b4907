"""Browser sessions in detail (R-CMD-2; the whole flow through uvicorn is in
tests/e2e/test_sessions.py): the cookie is accepted wherever the bearer token is and answers
the same; what signs nobody in (an unknown, malformed, expired or closed session; a cookie
sent to POST /sessions) gets 401; the store never holds the session key; the settings refuse
a wildcard CORS origin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from app.sessions import COOKIE, CSRF_CODE, CSRF_HEADER
from app.settings import Settings
from domain.accounts import token_hash
from domain.sessions import session_id
from tests.support.http import Game

CSRF = {CSRF_HEADER: "1"}


def sign_in(http: TestClient, headers: dict[str, str]) -> str:
    """``POST /sessions`` with a bearer token; returns the session key the cookie holds."""
    answer = http.post("/sessions", headers=headers)
    assert answer.status_code == 201, answer.text
    key: str | None = answer.cookies.get(COOKIE)
    assert key
    return key


def cookie(key: str) -> dict[str, str]:
    return {"Cookie": f"{COOKIE}={key}"}


def test_every_operation_that_takes_the_bearer_token_takes_the_session_cookie_r_cmd_2(
    client: TestClient,
) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    bearer = 0
    for path, operations in paths.items():
        for method, operation in operations.items():
            schemes = {name for entry in operation.get("security", []) for name in entry}
            if "HTTPBearer" not in schemes or (method, path) == ("post", "/sessions"):
                continue
            bearer += 1
            assert "SessionCookie" in schemes, f"{method.upper()} {path}"
    assert bearer > 15


def test_the_cookie_reads_exactly_what_the_bearer_token_reads(
    client: TestClient, open_game: Callable[..., Game]
) -> None:
    game = open_game(client)
    ann = game.headers["ann"]
    key = sign_in(client, ann)
    deal, table = game.deal_id, game.table
    for path in [
        "/me",
        f"/deals/{deal}",
        f"/deals/{deal}/events",
        f"/deals/{deal}/replay?step=3",
        f"/deals/{deal}/draw-log",
        f"/deals/{deal}/discard-log",
        f"/tables/{table}/scores",
        f"/tables/{table}",
    ]:
        by_token = client.get(path, headers=ann)
        by_cookie = client.get(path, headers=cookie(key))
        assert by_token.status_code == 200, path
        assert by_cookie.status_code == 200, path
        assert by_cookie.json() == by_token.json(), path


@pytest.mark.parametrize(
    "key",
    ["never-issued-" + "x" * 30, "x" * 500, "a b"],
    ids=["unknown", "too long", "malformed"],
)
def test_a_session_key_the_server_never_issued_signs_nobody_in(
    client: TestClient, open_game: Callable[..., Game], key: str
) -> None:
    game = open_game(client, start=True)
    for path in ["/me", f"/deals/{game.deal_id}"]:
        answer = client.get(path, headers=cookie(key))
        assert answer.status_code == 401, path
        assert answer.json()["error"]["code"] == "R-CMD-2"


def test_an_expired_session_signs_nobody_in(client: TestClient, register: Any) -> None:
    register(client, "ann")
    canasta = client.app.state.canasta  # type: ignore[attr-defined]
    key, _expires = canasta.open_session("ann", 0)  # ends as it begins
    assert client.get("/me", headers=cookie(key)).status_code == 401
    key, _expires = canasta.open_session("ann", 60)
    assert client.get("/me", headers=cookie(key)).json()["name"] == "ann"


def test_signing_out_ends_that_session_only(client: TestClient, register: Any) -> None:
    ann = register(client, "ann")
    first, second = sign_in(client, ann), sign_in(client, ann)
    assert first != second
    out = client.delete("/sessions", headers={**cookie(first), **CSRF})
    assert out.status_code == 204
    assert client.get("/me", headers=cookie(first)).status_code == 401
    assert client.get("/me", headers=cookie(second)).json()["name"] == "ann"
    # Signing out again, or without any cookie, only clears it.
    assert client.delete("/sessions", headers={**cookie(first), **CSRF}).status_code == 204
    assert client.delete("/sessions").status_code == 204


def test_who_is_signed_in_is_answered_to_everybody_without_a_refusal(
    client: TestClient, register: Any
) -> None:
    """``GET /sessions/current``: the pages' question on opening; a visitor gets ``name:
    null`` (not 401), a closed session too, and its cookie is cleared."""
    ann = register(client, "ann")
    key = sign_in(client, ann)
    client.cookies.clear()  # the client's jar took the cookie: send it by hand below
    assert client.get("/sessions/current").json() == {"name": None, "roles": []}
    assert client.get("/sessions/current", headers=ann).json() == {"name": "ann", "roles": []}
    signed_in = client.get("/sessions/current", headers=cookie(key))
    assert signed_in.json() == {"name": "ann", "roles": []}
    assert signed_in.headers["Cache-Control"] == "no-store"
    assert "set-cookie" not in signed_in.headers
    client.delete("/sessions", headers={**cookie(key), **CSRF})
    for stale in [key, "never-issued-" + "x" * 30, "a b"]:
        answer = client.get("/sessions/current", headers=cookie(stale))
        assert answer.status_code == 200
        assert answer.json() == {"name": None, "roles": []}
        assert "Max-Age=0" in answer.headers["set-cookie"]
    refused = client.get("/sessions/current", headers={"Authorization": "Bearer not-a-token"})
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "R-CMD-2"


def test_signing_in_needs_the_bearer_token_not_a_cookie_nor_a_body(
    client: TestClient, register: Any
) -> None:
    ann = register(client, "ann")
    key = sign_in(client, ann)
    token = ann["Authorization"].removeprefix("Bearer ")
    for headers, body in [
        (cookie(key) | CSRF, None),  # a session cannot make another
        ({}, {"token": token}),  # the token in the body is not read
        ({"Authorization": "Bearer not-a-token"}, None),
    ]:
        answer = client.post("/sessions", headers=headers, json=body)
        assert answer.status_code == 401, answer.text
        assert answer.json()["error"]["code"] == "R-CMD-2"
        assert COOKIE not in answer.cookies


def test_the_csrf_header_is_needed_for_every_method_that_changes_something(
    client: TestClient, register: Any
) -> None:
    key = sign_in(client, register(client, "ann"))
    lobby = client.get("/tables").json()
    for method, path, body in [
        ("POST", "/tables", {"players": 2}),
        ("PUT", "/tables/00000000-0000-0000-0000-000000000000/teams", {"teams": [[0]]}),
        ("DELETE", "/sessions", None),
    ]:
        answer = client.request(method, path, json=body, headers=cookie(key))
        assert answer.status_code == 403, (method, path)
        assert answer.json()["error"]["code"] == CSRF_CODE
    assert client.get("/tables").json() == lobby, "nothing was created"
    created = client.post("/tables", json={"players": 2}, headers=cookie(key) | CSRF)
    assert created.status_code == 201


def test_the_store_keeps_only_the_hash_of_a_session_key(client: TestClient, register: Any) -> None:
    ann = register(client, "ann")
    key = sign_in(client, ann)
    canasta = client.app.state.canasta  # type: ignore[attr-defined]
    stored = list(canasta.events.get(session_id(token_hash(key))))
    assert [type(event).__name__ for event in stored] == ["Opened"]
    assert key not in repr([event.__dict__ for event in stored])
    assert isinstance(stored[0].originator_id, UUID)


@pytest.mark.parametrize(
    "origins", ["*", "https://table.example/", "table.example", "https://table.example/x"]
)
def test_cors_origins_are_scheme_and_host_never_a_wildcard(origins: str) -> None:
    with pytest.raises(ValidationError):
        Settings(cors_origins=origins)
    assert Settings(cors_origins="https://a.example, http://localhost:3000").cors_origins == [
        "https://a.example",
        "http://localhost:3000",
    ]
