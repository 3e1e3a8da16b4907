"""HTTP itself (RFC 9110): a 405 names the allowed methods in ``Allow``, and ``HEAD`` is
answered wherever ``GET`` is, with the same status and headers and no body."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient


def _methods(allow: str) -> set[str]:
    return {method.strip() for method in allow.split(",")}


def test_a_405_names_the_allowed_methods_in_the_allow_header(client: TestClient) -> None:
    response = client.delete("/tables")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert _methods(response.headers["allow"]) == {"GET", "HEAD", "POST"}

    response = client.put("/health")
    assert response.status_code == 405
    assert _methods(response.headers["allow"]) == {"GET", "HEAD"}


def test_head_is_refused_where_get_is_not_allowed(client: TestClient) -> None:
    response = client.head("/players")
    assert response.status_code == 405
    assert response.content == b""
    assert _methods(response.headers["allow"]) == {"POST"}


def test_head_answers_like_get_without_a_body(client: TestClient, open_game: Any) -> None:
    game = open_game(client)
    for path in ("/health", "/tables", f"/tables/{game.table}", f"/deals/{game.deal_id}"):
        got = client.get(path)
        head = client.head(path)
        assert got.status_code == head.status_code == 200, path
        assert head.content == b"", path
        assert head.headers["content-type"] == got.headers["content-type"], path
        assert head.headers["content-length"] == got.headers["content-length"], path


def test_head_of_a_missing_deal_is_404_like_get(client: TestClient) -> None:
    path = "/deals/00000000-0000-0000-0000-000000000000"
    got = client.get(path)
    head = client.head(path)
    assert got.status_code == head.status_code == 404
    assert head.content == b""
