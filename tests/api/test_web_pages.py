"""The web pages live at the API's own addresses (docs/web.md): a browser asking for HTML gets
the page, every other client the JSON as before, and both answers say they vary by Accept."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.support.http import Game

BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


@pytest.fixture
def game(client: TestClient, open_game: Callable[..., Game]) -> Game:
    return open_game(client, names=["ann", "bob"])


def addresses(game: Game) -> dict[str, str]:
    return {
        f"/tables/{game.table}": "/web/table.js",
        f"/deals/{game.deal_id}": "/web/table.js",
        f"/deals/{game.deal_id}/replay": "/web/replay.js",
        f"/audit/deals/{game.deal_id}": "/web/audit.js",
    }


def test_a_browser_opening_an_address_gets_its_page(client: TestClient, game: Game) -> None:
    for path, script in addresses(game).items():
        answer = client.get(path, headers={"Accept": BROWSER_ACCEPT})
        assert answer.status_code == 200, path
        assert answer.headers["content-type"].startswith("text/html"), path
        assert script in answer.text, path
        assert answer.headers["vary"] == "Accept"
        # The page holds no data of its own: it asks the API, as the viewer.
        assert game.table not in answer.text


@pytest.mark.parametrize("accept", [None, "*/*", "application/json"])
def test_other_clients_get_the_json_as_before(
    client: TestClient, game: Game, accept: str | None
) -> None:
    headers: dict[str, Any] = {} if accept is None else {"Accept": accept}
    answer = client.get(f"/deals/{game.deal_id}", headers=headers)
    assert answer.status_code == 200
    assert answer.json()["id"] == game.deal_id
    assert "Accept" in answer.headers["vary"]


def test_a_page_for_an_unknown_id_is_still_the_page_and_only_get_is_served(
    client: TestClient, game: Game
) -> None:
    # The page itself tells the reader the table does not exist, from the API's 404.
    unknown = "00000000-0000-4000-8000-000000000000"
    assert client.get(f"/tables/{unknown}", headers={"Accept": BROWSER_ACCEPT}).status_code == 200
    assert client.get(f"/tables/{unknown}").status_code == 404
    # A mistyped id too; an API client still gets the refusal itself.
    assert client.get("/tables/oops", headers={"Accept": BROWSER_ACCEPT}).status_code == 200
    assert client.get("/tables/oops").json()["error"]["code"] == "malformed"
    # Other methods are the API's, whatever the Accept header says.
    answer = client.post(f"/tables/{game.table}/start", headers={"Accept": BROWSER_ACCEPT})
    assert answer.status_code in (401, 403)
