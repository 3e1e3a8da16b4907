"""The lobby at ``/`` in a real browser (docs/web.md): signing up and in with a browser session,
creating a table, taking the seats, the host's start, the layout on a phone, and no request
to any other host."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Backend
from tests.support.http import open_table
from tests.web.conftest import PHONE, NewContext, screenshot
from tests.web.pages import LIVE_MS, open_lobby, sign_up

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`, not `make test-fast`


def tab_to(page: Page, name: str, most: int = 20) -> None:
    """Presses Tab until the control labelled ``name`` has the focus."""
    target = page.get_by_role("textbox", name=name).or_(page.get_by_role("button", name=name))
    for _ in range(most):
        page.keyboard.press("Tab")
        if target.evaluate("node => node === document.activeElement"):
            return
    raise AssertionError(f"{name!r} is not reachable with Tab")


def test_two_players_sign_up_create_a_table_sit_down_and_start(
    new_context: NewContext, web_server: Backend
) -> None:
    ann, ann_urls = open_lobby(new_context())
    ann_token = sign_up(ann, "ann", shot="lobby-token-shown")
    # The token is not kept by the page once the session is open: not in storage, not in a field.
    assert ann_token not in json.dumps(ann.evaluate("() => ({...localStorage, ...sessionStorage})"))
    assert ann_token not in ann.content()
    assert ann.locator("#token-shown").input_value() == ""

    ann.get_by_label("Entry").select_option("classic")
    ann.get_by_label("Players").select_option("2")
    expect(ann.get_by_label("Target score")).to_be_hidden()  # classic has one target
    ann.get_by_role("button", name="Create the table").click()
    expect(ann.get_by_role("status")).to_contain_text("Table created")
    open_table = ann.get_by_role("article", name="Classic table of 2, host ann")
    expect(open_table).to_be_visible(timeout=LIVE_MS)
    open_table.get_by_role("button", name="Take a seat").click()
    expect(open_table).to_contain_text("Seat 1: ann (you)", timeout=LIVE_MS)
    expect(open_table.get_by_role("button", name="Start the game")).to_have_count(0)

    bob, bob_urls = open_lobby(new_context())
    sign_up(bob, "bob")
    bobs_view = bob.get_by_role("article", name="Classic table of 2, host ann")
    expect(bobs_view).to_contain_text("Seat 1: ann")
    expect(bobs_view.get_by_role("button", name="Start the game")).to_have_count(0)  # not his
    bobs_view.get_by_role("button", name="Take a seat").click()
    expect(bob.get_by_role("status")).to_have_text("You sit in seat 2.")

    # Ann's page sees Bob arrive by itself (polling), and offers her the start.
    expect(open_table).to_contain_text("Seat 2: bob", timeout=LIVE_MS)
    screenshot(ann, "lobby-desktop")
    open_table.get_by_role("button", name="Start the game").click()
    expect(ann.get_by_role("status")).to_have_text("The game has started.")

    for page in (ann, bob):
        playing = page.locator("#playing-tables").get_by_role(
            "article", name="Classic table of 2, host ann"
        )
        expect(playing).to_contain_text("playing", timeout=LIVE_MS)
        expect(playing).to_contain_text("Side A: 0")
        link = playing.get_by_role("link", name="Open the table")
        assert re.fullmatch(r"/tables/[0-9a-f-]{36}", link.get_attribute("href") or "")
        expect(page.locator("#open-tables")).to_contain_text("None at the moment.")
    screenshot(bob, "lobby-playing-desktop")

    # A reload keeps the session: the cookie, not the page, remembers who is signed in.
    ann.reload()
    expect(ann.get_by_text("Signed in as ann")).to_be_visible()
    expect(ann.get_by_role("form", name="Sign up")).to_have_count(0)

    # Another browser signs in again by pasting the token.
    again, again_urls = open_lobby(new_context())
    again.get_by_label("Your token", exact=True).fill(ann_token)
    again.get_by_role("button", name="Sign in", exact=True).click()
    expect(again.get_by_text("Signed in as ann")).to_be_visible()

    # A refusal shows the server's message and code; signing out ends the session.
    again.get_by_role("button", name="Sign out", exact=True).click()
    expect(again.get_by_role("status")).to_have_text("You are signed out.")
    again.get_by_label("Your name").fill("ann")
    again.get_by_role("button", name="Create my account").click()
    expect(again.get_by_role("alert")).to_contain_text("(name_taken)")
    again.reload()
    expect(again.get_by_label("Your name")).to_be_visible()

    origin = web_server.server.url + "/"
    for url in ann_urls + bob_urls + again_urls:
        assert url.startswith(origin), f"the page requested another host: {url}"
    assert any("/tables?status=open" in url for url in ann_urls)


def test_the_lobby_fits_a_phone_without_horizontal_scrolling(new_context: NewContext) -> None:
    page, _ = open_lobby(new_context(viewport=PHONE))
    screenshot(page, "lobby-phone-signed-out")
    # By keyboard alone: Tab to the name, type it, Enter; later Tab to the create button.
    tab_to(page, "Your name")
    page.keyboard.type("cleo-with-a-rather-long-name")
    page.keyboard.press("Enter")
    expect(page.get_by_text("Signed in as cleo-with-a-rather-long-name")).to_be_visible()
    page.get_by_role("button", name="I have saved my token").click()
    # A target is offered only where the entry has a choice (R-GAME-1).
    page.get_by_label("Entry").select_option("modern_american")
    expect(page.get_by_label("Target score")).to_be_visible()
    assert "7500" in page.get_by_label("Target score").inner_text()
    page.get_by_label("Entry").select_option("classic")
    expect(page.get_by_label("Target score")).to_be_hidden()
    page.get_by_label("Players").focus()
    tab_to(page, "Create the table")
    page.keyboard.press("Enter")
    cleos = page.get_by_role(
        "article", name="Classic table of 4, host cleo-with-a-rather-long-name"
    )
    expect(cleos).to_contain_text("4 free", timeout=LIVE_MS)
    screenshot(page, "lobby-phone")
    fits = "() => document.scrollingElement.scrollWidth <= window.innerWidth"
    assert page.evaluate(fits), page.evaluate("() => document.scrollingElement.scrollWidth")


def test_the_lobby_speaks_chinese_when_chosen(new_context: NewContext) -> None:
    page, _ = open_lobby(new_context())
    page.get_by_label("Language").select_option("zh")
    expect(page.get_by_role("heading", level=1)).to_have_text("卡纳斯塔账本")
    expect(page.locator("html")).to_have_attribute("lang", "zh")
    page.reload()  # the choice is remembered
    expect(page.get_by_label("你的名字")).to_be_visible()
    screenshot(page, "lobby-zh")


def test_a_visitor_s_pages_log_no_error_in_the_browser_console(
    new_context: NewContext, http: Any
) -> None:
    """A visitor (no session) opens the lobby, a table and a deal's replay: the pages ask who
    is signed in with ``GET /sessions/current``, which answers a visitor without a 401, so
    the console stays free of errors (a browser logs every refused request as one)."""
    # Names of its own: the module's tests share one server.
    game = open_table(http, ["visitor-host", "visitor-guest"], entry="classic")
    page = new_context().new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    for path in ["/", f"/deals/{game.deal_id}", f"/deals/{game.deal_id}/replay"]:
        page.goto(path)
        expect(page.locator("body[data-ready=true]")).to_be_attached()
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    assert errors == []
