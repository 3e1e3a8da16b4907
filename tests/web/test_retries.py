"""A lost answer and a double tap, in a real browser (docs/api.md, "Retrying safely"): the
pages send the requests that would otherwise be done twice (a practice game, a new table)
with an ``Idempotency-Key``, send them again under the same key when no answer came, and
send one request for a double tap; the server does each once."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from playwright.sync_api import Route, expect

from tests.web.conftest import NewContext, screenshot
from tests.web.pages import LIVE_MS, open_lobby, sign_up

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`


def lobby_tables(http: httpx.Client, status: str, host: str) -> list[dict[str, Any]]:
    tables: list[dict[str, Any]] = http.get(f"/tables?status={status}").json()
    return [t for t in tables if t["host"] == host]


def wait_listed(http: httpx.Client, status: str, table: str) -> None:
    """Until the lobby (a read model) lists ``table``: every table made before it is there."""
    deadline = time.monotonic() + LIVE_MS / 1000
    while not any(t["id"] == table for t in http.get(f"/tables?status={status}").json()):
        assert time.monotonic() < deadline, f"the lobby never listed {table}"
        time.sleep(0.2)


def test_a_practice_game_whose_answer_was_lost_is_started_once(
    new_context: NewContext, http: httpx.Client
) -> None:
    page = open_lobby(new_context())[0]
    sign_up(page, "lou")
    sent: list[dict[str, str]] = []
    answers: list[dict[str, str]] = []

    def lose_the_first_answer(route: Route) -> None:
        sent.append(route.request.headers)
        if len(sent) == 1:
            route.fetch()  # the server does it ...
            route.abort("connectionreset")  # ... and the answer never reaches the page
        else:
            response = route.fetch()
            answers.append(response.headers)
            route.fulfill(response=response)

    page.route("**/tables/practice", lose_the_first_answer)
    page.get_by_label("Bot level").select_option("random")
    page.get_by_role("button", name="Play now").click()
    page.wait_for_url("**/tables/*")
    table = page.url.rsplit("/", 1)[1]
    assert len(sent) == 2
    assert sent[0]["idempotency-key"] == sent[1]["idempotency-key"]
    assert answers[0]["idempotent-replayed"] == "true"
    wait_listed(http, "playing", table)
    assert [t["id"] for t in lobby_tables(http, "playing", "lou")] == [table]
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    screenshot(page, "table-practice-after-a-lost-answer")


def test_a_double_tap_on_create_makes_one_table(
    new_context: NewContext, http: httpx.Client
) -> None:
    page = open_lobby(new_context())[0]
    sign_up(page, "dot")
    posts: list[str] = []
    page.on(
        "request",
        lambda r: posts.append(r.url) if r.method == "POST" and r.url.endswith("/tables") else None,
    )
    # Two taps in a row, the second before the first's answer.
    page.get_by_role("button", name="Create the table").evaluate("b => { b.click(); b.click(); }")
    expect(page.get_by_role("status")).to_contain_text("created", ignore_case=True)
    assert len(posts) == 1
    deadline = time.monotonic() + LIVE_MS / 1000
    while not lobby_tables(http, "open", "dot"):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert len(lobby_tables(http, "open", "dot")) == 1
