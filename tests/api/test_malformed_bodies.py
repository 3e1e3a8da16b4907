"""Every malformed request body, on every route that takes a body, is 422 with the one error
shape ``{"error": {"code": "malformed", "message"}}`` and changes nothing (docs/rules/common.md,
the error codes): bytes that are not UTF-8, JSON that does not parse, nesting deeper than the
parser goes, integers with more digits than a number may have, an integer too large for its
field, a body that is not JSON at all, or JSON under another content type.

The routes are read from the application's own OpenAPI document, so a route added later is
covered without touching this test; the commands route is tried through the fast lane
(``app.command_lane``) and through the FastAPI route alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings

#: name -> (body bytes, content type)
MALFORMED: dict[str, tuple[bytes, str]] = {
    "invalid_utf8": (b'{"name": "\xff\xfe\xfd"}', "application/json"),
    "invalid_json": (b'{"seq": 1, ', "application/json"),
    "deep_nesting": (b"[" * 5000 + b"]" * 5000, "application/json"),
    "deep_object": (b'{"a":' * 2000 + b"1" + b"}" * 2000, "application/json"),
    "too_many_digits": (b'{"seq": 1' + b"0" * 5000 + b"}", "application/json"),
    "huge_integer": (
        b'{"seq": 1' + b"0" * 400 + b', "players": 1' + b"0" * 400 + b"}",
        "application/json",
    ),
    "not_json": (b"seat=1", "application/x-www-form-urlencoded"),
    "json_as_text": (b'{"name": "zed", "players": 2, "seat": 0}', "text/plain"),
    "nan": (b'{"seq": NaN, "players": Infinity}', "application/json"),
}


def routes_with_a_body() -> list[tuple[str, str]]:
    """(method, path) of every operation whose OpenAPI entry has a request body."""
    paths = create_app(Settings(database_url="memory")).openapi()["paths"]
    return [
        (method.upper(), path)
        for path, operations in paths.items()
        for method, operation in operations.items()
        if "requestBody" in operation
    ]


ROUTES = routes_with_a_body()


def test_the_routes_are_found() -> None:
    assert ("POST", "/deals/{deal_id}/commands") in ROUTES
    assert ("POST", "/players") in ROUTES
    assert len(ROUTES) >= 5


@pytest.mark.parametrize("lane", [True, False], ids=["lane", "route"])
@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_a_malformed_body_is_422_malformed_everywhere(
    make_client: Callable[..., TestClient], open_game: Any, kind: str, lane: bool
) -> None:
    client = make_client(command_lane=lane)
    game = open_game(client, names=["ann", "bob"])
    body, content_type = MALFORMED[kind]
    before = _snapshot(client, game)
    for method, path in ROUTES:
        url = path.replace("{table_id}", game.table).replace("{deal_id}", game.deal_id)
        response = client.request(
            method, url, content=body, headers={**game.host, "Content-Type": content_type}
        )
        where = f"{kind}: {method} {path}"
        assert response.status_code == 422, f"{where} -> {response.status_code} {response.text}"
        error = response.json()["error"]
        assert error["code"] == "malformed", where
        assert isinstance(error["message"], str) and error["message"], where
        assert set(response.json()) == {"error"}, where
    assert _snapshot(client, game) == before, kind


def _snapshot(client: TestClient, game: Any) -> Any:
    """What a malformed request must not change: the lobby, the table, the deal."""
    return (
        client.get("/tables").json(),
        client.get(f"/tables/{game.table}").json(),
        client.get(f"/deals/{game.deal_id}", headers=game.host).json(),
    )


#: A common client mistake -> what the message must tell him (curl's ``-d`` without
#: ``-H 'Content-Type: application/json'`` sends a form; a hand-written body misses a brace).
TOLD: dict[str, tuple[bytes, str | None, str]] = {
    "form": (
        b'{"name": "zed"}',
        "application/x-www-form-urlencoded",
        "Content-Type: application/json",
    ),
    "text": (b'{"name": "zed"}', "text/plain; charset=utf-8", "Content-Type: application/json"),
    "broken": (b'{"name": "zed"', "application/json", "not valid JSON at character 14"),
    "array": (b'["zed"]', "application/json", "not a JSON object"),
    "empty": (b"", "application/json", "send a JSON object"),
}


@pytest.mark.parametrize("lane", [True, False], ids=["lane", "route"])
@pytest.mark.parametrize("kind", sorted(TOLD))
def test_a_body_that_is_no_json_object_is_told_so_in_words(
    make_client: Callable[..., TestClient], open_game: Any, kind: str, lane: bool
) -> None:
    """The 422's message says what to change (send JSON, with its content type; where the
    JSON breaks), not pydantic's "Input should be a valid dictionary or object to extract
    fields from" or "body.14: JSON decode error"."""
    client = make_client(command_lane=lane)
    game = open_game(client, names=["ann", "bob"])
    body, content_type, told = TOLD[kind]
    headers = {"Content-Type": content_type} if content_type else {}
    for path, auth in (("/players", {}), (f"/deals/{game.deal_id}/commands", game.host)):
        answer = client.post(path, content=body, headers={**auth, **headers})
        assert answer.status_code == 422, (path, answer.text)
        error = answer.json()["error"]
        assert error["code"] == "malformed"
        assert error["message"].startswith("body: ") and told in error["message"], (path, error)
        assert "dictionary" not in error["message"] and "decode error" not in error["message"]
