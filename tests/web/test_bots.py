"""Bots in the lobby (docs/bots.md, docs/web.md), in a real browser: the host adds a bot of a
chosen level to each free seat of his open table, the seats say "(bot, level)", and the create
form's "Practice against bots" starts a game against bots and opens its table, where the bots
(played by the server's own bot runner) answer."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.http import register_player
from tests.web.conftest import NewContext, screenshot
from tests.web.pages import LIVE_MS, open_lobby, sign_up, signed_in

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`


def test_the_host_adds_bots_to_free_seats(new_context: NewContext, http: httpx.Client) -> None:
    headers = register_player(http, "bea")
    table = http.post("/tables", json={"entry": "classic", "players": 2}, headers=headers).json()
    page = signed_in(open_lobby(new_context())[0], headers)
    card = page.get_by_role("article", name="Classic table of 2, host bea")
    bots = card.get_by_role("group", name="Add a bot")
    expect(bots).to_be_visible(timeout=LIVE_MS)
    level = bots.get_by_label("Bot level")
    # The list describes each level; the seat names it only (it follows the name everywhere).
    expect(level.locator("option[value=strong]")).to_have_text("strong (searches each move)")
    level.select_option("strong")
    bots.get_by_role("button", name="Add a bot to seat 2").click()
    expect(page.get_by_role("status")).to_have_text("A bot took seat 2.")
    seat = card.get_by_text("Seat 2: bot:strong:1 (bot, strong)", exact=True)
    expect(seat).to_be_visible(timeout=LIVE_MS)
    assert http.get(f"/tables/{table['id']}").json()["bots"] == [None, "strong"]
    expect(card.get_by_role("button", name="Add a bot to seat 1")).to_be_visible()
    screenshot(page, "lobby-bots")


def test_the_level_chosen_survives_the_lobby_s_refresh(
    new_context: NewContext, http: httpx.Client
) -> None:
    headers = register_player(http, "bel")
    table = http.post("/tables", json={"entry": "classic", "players": 3}, headers=headers).json()
    page = signed_in(open_lobby(new_context())[0], headers)
    card = page.get_by_role("article", name="Classic table of 3, host bel")
    bots = card.get_by_role("group", name="Add a bot")
    bots.get_by_label("Bot level").select_option("random")
    # He goes on to the button by keyboard; meanwhile somebody sits down, and the lobby's
    # refresh draws the card anew (an unchanged card is kept as it is: tests/web/
    # test_lobby_gaps.py).
    add = bots.get_by_role("button", name="Add a bot to seat 1")
    add.focus()
    level = page.locator(f"#bot-level-{table['id']}")
    level.evaluate("node => { node.dataset.before = 'refresh'; }")
    joined = http.post(
        f"/tables/{table['id']}/seats", json={"seat": 2}, headers=register_player(http, "bix")
    )
    assert joined.status_code == 200, joined.text
    expect(card).to_contain_text("Seat 3: bix", timeout=LIVE_MS)
    expect(page.locator(f"#bot-level-{table['id']}:not([data-before])")).to_be_attached()
    expect(level).to_have_value("random")
    expect(add).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.get_by_role("status")).to_have_text("A bot took seat 1.")
    assert http.get(f"/tables/{table['id']}").json()["bots"] == ["random", None, None]


def test_practice_against_bots_opens_a_table_in_play(new_context: NewContext) -> None:
    page = open_lobby(new_context())[0]
    sign_up(page, "cal")
    page.get_by_label("Bot level").select_option("basic")
    page.get_by_role("button", name="Play now").click()
    page.wait_for_url("**/tables/*")
    table = page.url.rsplit("/", 1)[1]
    view = page.request.get(f"/tables/{table}").json()
    assert view["seats"] == ["cal", "bot:basic:1", "bot:basic:2", "bot:basic:3"]
    assert view["status"] == "playing" and view["host"] == "cal"
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    expect(page.locator("#deal")).to_contain_text("bot:basic:1 (bot, basic)")
    # Who plays each seat says which are bots too.
    expect(page.locator('[data-seat-play="1"]')).to_have_text("Seat 2: bot:basic:1 (bot, basic)")
    # The bots play (the server's own bot runner) until it is cal's turn, or he is first.
    expect(page.locator("#moves [data-move]").first).to_be_visible(timeout=LIVE_MS)
    screenshot(page, "table-practice")
