"""The banners while the connection is down (docs/web.md, "Live"): the table page's
"Connection lost: reconnecting…" (``#connection``) and "The server could not be reached."
(``#error``, role alert, after a move pressed into the outage), and the lobby's (its poll's),
cover none of the header's controls (the title's link to the lobby, Rules, Back to the lobby,
the language menu) nor any other control, on a phone and on a desktop, in English, Russian and
Thai. The reconnecting banner was drawn over the top of the screen, on the header: a player
could not open the rules while the connection was down, and its words ran over the header's.

And a move tapped on a phone while the server cannot be reached is answered where the player
looks (docs/web.md, "Layout"): "The server could not be reached." in his move panel at the
bottom of the screen, there still after the page's read that follows the move and its retry
(that read moved it to the top of the page, some 1,000 px above the panel)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.e2e.conftest import Backend
from tests.support.http import register_player
from tests.support.relay import Relay
from tests.web.conftest import PAGE_WAIT_MS, PHONES, TOUCH, screenshot, scroll_to
from tests.web.pages import LIVE_MS, sign_in
from tests.web.practice import start_practice, wait_until_quiet

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

#: A laptop's screen, and a phone held upright: their browser contexts' options.
SCREENS: dict[str, dict[str, Any]] = {
    "desktop": {"viewport": {"width": 1280, "height": 800}},
    "phone": {"viewport": PHONES["upright"], **TOUCH},
}
LOCALES = {"en": "en-GB", "ru": "ru-RU", "th": "th-TH"}
#: In the page, in one evaluation (a redraw may replace any node between two calls), at the
#: top of the page (where the header is; whatever scrolls under a banner that stays on screen
#: is not covered for good): the banners shown, and each header item or control that a
#: banner's box overlaps.
COVERED = """() => {
  window.scrollTo(0, 0);
  const shown = (node) => {
    const box = node.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && getComputedStyle(node).visibility !== "hidden";
  };
  const name = (node) => `${node.tagName.toLowerCase()}#${node.id}.${node.className}: `
    + `"${(node.textContent || node.value || "").trim().slice(0, 40)}"`;
  const banners = [...document.querySelectorAll("#connection, [role=alert]")].filter(shown);
  const controls = [...document.querySelectorAll(
    ".bar h1, .bar-tools > *, a, button, select, input, textarea, label, summary"
  )].filter(shown);
  const covered = [];
  for (const banner of banners) {
    const b = banner.getBoundingClientRect();
    for (const control of controls) {
      if (banner.contains(control) || control.contains(banner)) continue;
      const c = control.getBoundingClientRect();
      const wide = Math.min(b.right, c.right) - Math.max(b.left, c.left);
      const high = Math.min(b.bottom, c.bottom) - Math.max(b.top, c.top);
      if (wide > 0.5 && high > 0.5) covered.push(`${name(banner)} covers ${name(control)}`);
    }
  }
  return { banners: banners.map((banner) => banner.id), covered };
}"""

#: Is the reconnecting notice within the screen, wherever the page is scrolled?
ON_SCREEN = """() => {
  const box = document.getElementById("connection").getBoundingClientRect();
  return box.height > 0 && box.top >= 0 && box.bottom <= innerHeight;
}"""
#: The same for the error (#error, role alert), and the page's scroll.
ERROR_ON_SCREEN = """() => {
  const box = document.getElementById("error").getBoundingClientRect();
  return { shown: box.height > 0 && box.top >= 0 && box.bottom <= innerHeight, top: box.top };
}"""
UNREACHABLE = "The server could not be reached."


@pytest.fixture
def relay(web_server: Backend) -> Iterator[Relay]:
    """A relay in front of the module's server, which the test cuts (the connection down)."""
    relay = Relay("127.0.0.1", web_server.server.port)
    yield relay
    relay.cut()


def signed_in_context(
    browser: Browser, relay: Relay, headers: dict[str, str], screen: str, lang: str
) -> BrowserContext:
    """A browser session of the token's player through the relay, on that screen, in that
    language."""
    context = browser.new_context(
        base_url=f"http://127.0.0.1:{relay.port}", locale=LOCALES[lang], **SCREENS[screen]
    )
    context.set_default_timeout(PAGE_WAIT_MS)
    return sign_in(context, headers)


def test_no_banner_covers_a_control_while_the_connection_is_down(
    browser: Browser, relay: Relay, http: httpx.Client
) -> None:
    ann = register_player(http, "ann")
    table, deal = start_practice(http, ann)
    step = wait_until_quiet(http, ann, deal)  # ann to act: her page offers her a move
    contexts: list[BrowserContext] = []
    pages: dict[str, Page] = {}
    lobbies: dict[str, Page] = {}
    try:
        for screen in SCREENS:
            for lang in LOCALES:
                contexts.append(signed_in_context(browser, relay, ann, screen, lang))
                page = contexts[-1].new_page()
                page.goto(f"/tables/{table}")
                expect(page.locator("body[data-ready=true]")).to_be_attached()
                expect(page.locator(f"#deal .deal[data-step='{step}']")).to_be_attached()
                expect(page.locator("#to-rules")).to_be_visible()
                pages[f"{screen}-{lang}"] = page
                lobbies[f"{screen}-{lang}"] = lobby = contexts[-1].new_page()
                lobby.goto("/")
                expect(lobby.locator("body[data-ready=true]")).to_be_attached()

        relay.cut()
        for shown, page in pages.items():
            expect(page.locator("#connection")).to_be_visible(timeout=LIVE_MS)
            measured = page.evaluate(COVERED)
            screenshot(page, f"banner-reconnecting-{shown}", full_page=False)
            assert "connection" in measured["banners"], shown
            assert measured["covered"] == [], shown
            # Her move pressed into the outage: "The server could not be reached." too.
            page.locator("#moves [data-move]").first.click()
            expect(page.get_by_role("alert")).to_be_visible()
            # Wherever she is on the page (a phone scrolled down to her move), the notice
            # that the connection is down is on screen.
            assert page.evaluate(ON_SCREEN), shown
            measured = page.evaluate(COVERED)
            screenshot(page, f"banner-unreachable-{shown}", full_page=False)
            assert sorted(measured["banners"]) == ["connection", "error"], shown
            assert measured["covered"] == [], shown
        for shown, lobby in lobbies.items():  # the lobby's poll: "could not be reached"
            expect(lobby.get_by_role("alert")).to_be_visible(timeout=LIVE_MS)
            measured = lobby.evaluate(COVERED)
            screenshot(lobby, f"banner-lobby-unreachable-{shown}", full_page=False)
            assert (measured["banners"], measured["covered"]) == (["error"], []), shown
    finally:
        for context in contexts:
            context.close()


def test_a_move_tapped_into_an_outage_is_answered_where_the_player_looks(
    browser: Browser, relay: Relay, http: httpx.Client
) -> None:
    cleo = register_player(http, "cleo")
    table, deal = start_practice(http, cleo)
    step = wait_until_quiet(http, cleo, deal)  # her move to make
    context = signed_in_context(browser, relay, cleo, "phone", "en")
    try:
        page = context.new_page()
        page.goto(f"/tables/{table}")
        expect(page.locator("body[data-ready=true]")).to_be_attached()
        expect(page.locator(f"#deal .deal[data-step='{step}']")).to_be_attached()
        # Her hand in sight, the move panel below it, and the top of the page out of sight
        # (with the header and "Who plays" compact on a phone, the hand scrolled to the bottom
        # of the screen may leave the top in sight: the page is scrolled on past it).
        scroll_to(page.locator("#hand"), "end")
        page.evaluate(
            "() => scrollBy(0, Math.max(0, document.getElementById('status').getBoundingClientRect().bottom + 1))"
        )
        page.wait_for_function(
            "() => document.getElementById('status').getBoundingClientRect().bottom < 0"
        )
        # The view's reads that get no answer: the one after her move, then its retry.
        failed: list[str] = []
        page.on(
            "requestfailed",
            lambda request: (
                failed.append(request.url)
                if urlsplit(request.url).path == f"/deals/{deal}"
                else None
            ),
        )
        relay.cut()
        page.locator("#moves [data-move]").first.tap()
        alert = page.get_by_role("alert")
        expect(alert).to_have_text(UNREACHABLE)
        # The same words may come first from a read of the dropped live stream (said at the
        # top of the page, out of sight); the move's own failure, after its retries, brings
        # them where the player looks.
        page.wait_for_function(f"() => ({ERROR_ON_SCREEN})().shown", timeout=15_000)
        expect(page.locator("#moves #error")).to_be_visible()
        for _ in range(LIVE_MS // 100):  # the follow-up read and its retry fail
            if len(failed) >= 2:
                break
            page.wait_for_timeout(100)
        assert len(failed) >= 2, failed
        expect(alert).to_have_text(UNREACHABLE)
        screenshot(page, "phone-unreachable-move", full_page=False)
        placed = page.evaluate(ERROR_ON_SCREEN)
        assert placed["shown"], f"moved out of sight after the read that followed: {placed}"
        expect(page.locator("#moves #error")).to_be_visible()
    finally:
        context.close()
