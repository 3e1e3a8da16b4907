"""A game replayed deal after deal (docs/web.md, "The replay"): the replay's links to the same
table's previous and next deal ("Deal 2 of 2"), the totals the sides had when the deal began
(on which its initial-meld minimums depend), and the way between a stopped game and its
rematch, both ways. A colleague who played whole games went back to the table page's score
links for each deal, found no starting totals, and no way from a rematch to the game before.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Backend
from tests.support.http import Game
from tests.web.conftest import PHONES, TOUCH, NewContext, screenshot, stacked_decks_server
from tests.web.deals import classic_four, classic_played, play_step, start_table
from tests.web.pages import LIVE_MS, in_language, sign_in, table_page

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

#: The totals the game starts from (a test server's ``scores_before``): still the 50-point
#: minimum for both sides in classic, so the scripted deal plays as written.
BEFORE = {"A": 120, "B": 1230}
FITS = "() => document.scrollingElement.scrollWidth <= window.innerWidth"


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """This module's server deals stacked decks (tests/web/deals.py)."""
    yield from stacked_decks_server(tmp_path_factory, "replay-nav")


@dataclass
class TwoDeals:
    game: Game
    first: str
    second: str
    after_first: dict[str, int]  # the totals after deal 1: deal 2's starting totals


@pytest.fixture(scope="module")
def two_deals(web_server: Backend) -> Iterator[TwoDeals]:
    """A game of four from ``BEFORE``: deal 1 played to its end, deal 2 opened."""
    with httpx.Client(base_url=web_server.server.url, timeout=30) as http:
        deal = classic_four()
        game = start_table(http, deal, ("nia", "oto", "pia", "quin"), BEFORE)
        first = game.deal_id
        for step in deal.steps:
            play_step(http, game, step)
        second = game.next_deal({"deck": list(deal.deck)})
        totals = http.get(f"/tables/{game.table}").json()["totals"]
        yield TwoDeals(game, first, second, totals)


def test_a_replay_links_to_the_previous_and_the_next_deal(
    new_context: NewContext, two_deals: TwoDeals
) -> None:
    page = new_context().new_page()  # a spectator
    page.goto(f"/deals/{two_deals.second}/replay")
    nav = page.get_by_role("navigation", name="This game's deals")
    expect(nav).to_be_visible(timeout=LIVE_MS)
    expect(page.locator("#deal-place")).to_have_text("Deal 2 of 2")
    expect(page.locator("#next-deal")).to_be_hidden()  # the last deal: no next one
    previous = nav.get_by_role("link", name="Previous deal")
    expect(previous).to_have_attribute("href", f"/deals/{two_deals.first}/replay")
    previous.focus()  # the keyboard's way: a link, Enter opens it
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/deals/{two_deals.first}/replay*")
    expect(page.get_by_role("heading", name="Replay of deal 1")).to_be_visible()
    expect(page.locator("#deal-place")).to_have_text("Deal 1 of 2")
    expect(page.locator("#previous-deal")).to_be_hidden()
    expect(nav.get_by_role("link", name="Next deal")).to_have_attribute(
        "href", f"/deals/{two_deals.second}/replay"
    )
    screenshot(page, "replay-deal-nav-desktop", full_page=False)
    in_language(page, "zh")
    expect(page.locator("#deal-place")).to_have_text("第1局，共2局")
    expect(page.locator("#next-deal")).to_have_text("下一局")
    screenshot(page, "replay-deal-nav-desktop-zh", full_page=False)


def test_a_replay_says_the_totals_the_deal_began_with(
    new_context: NewContext, two_deals: TwoDeals
) -> None:
    page = new_context().new_page()
    page.goto(f"/deals/{two_deals.first}/replay")
    before = page.locator("#totals-before")
    expect(before).to_have_text("Totals before this deal: Side A 120, Side B 1230", timeout=LIVE_MS)
    after = two_deals.after_first
    assert after != BEFORE  # deal 1 scored something: deal 2 began from other totals
    page.locator("#next-deal").click()
    page.wait_for_url(f"**/deals/{two_deals.second}/replay*")
    expect(before).to_have_text(
        f"Totals before this deal: Side A {after['A']}, Side B {after['B']}"
    )


def test_the_replay_links_fit_a_small_phone_in_russian(
    new_context: NewContext, two_deals: TwoDeals
) -> None:
    context = new_context(viewport=PHONES["small"], **TOUCH)
    sign_in(context, two_deals.game.headers["nia"])  # a player: his own hand too
    page = context.new_page()
    page.goto(f"/deals/{two_deals.second}/replay")
    expect(page.locator("#deal-place")).to_have_text("Deal 2 of 2", timeout=LIVE_MS)
    in_language(page, "ru")
    expect(page.locator("#deal-place")).to_have_text("Раздача 2 из 2")
    expect(page.locator("#previous-deal")).to_have_text("Предыдущая раздача")
    expect(page.locator("#totals-before")).to_contain_text("Счёт до этой раздачи: Команда A")
    expect(page.locator("#previous-deal")).to_be_in_viewport()
    assert page.evaluate(FITS), "the page scrolls sideways"
    screenshot(page, "replay-deal-nav-phone-ru", full_page=False)
    page.locator("#previous-deal").tap()
    page.wait_for_url(f"**/deals/{two_deals.first}/replay*")
    expect(page.locator("#deal-place")).to_have_text("Раздача 1 из 2")


def test_a_rematch_links_back_to_the_game_before(
    new_context: NewContext, http: httpx.Client
) -> None:
    game = classic_played(http, ("ria", "sol", "tia", "uli"))
    assert http.post(f"/tables/{game.table}/stop", headers=game.host).is_success
    opened = http.post(f"/tables/{game.table}/rematch", headers=game.host)
    assert opened.status_code == 201, opened.text
    rematch = opened.json()["id"]
    # The stopped game's page goes to its rematch (it did already) ...
    old = table_page(new_context(), game.headers["sol"], game.table)
    expect(old.locator("#to-rematch").first).to_have_attribute(
        "href", f"/tables/{rematch}", timeout=LIVE_MS
    )
    # ... and the rematch, before its start and once started, back to the game before.
    page = table_page(new_context(viewport=PHONES["small"], **TOUCH), game.headers["sol"], rematch)
    back = page.get_by_role("link", name="Back to the previous game (this is its rematch)")
    expect(back).to_have_attribute("href", f"/tables/{game.table}", timeout=LIVE_MS)
    in_language(page, "th")
    expect(page.locator("#to-previous-game")).to_have_text("กลับไปเกมก่อนหน้า (เกมนี้คือเกมแก้มือของเกมนั้น)")
    assert page.evaluate(FITS), "the page scrolls sideways"
    screenshot(page, "rematch-previous-game-phone-th", full_page=True)
    started = http.post(f"/tables/{rematch}/start", headers=game.host)
    assert started.is_success, started.text
    expect(page.locator("#game #to-previous-game")).to_have_attribute(
        "href", f"/tables/{game.table}", timeout=LIVE_MS
    )
    expect(page.locator("#to-previous-game")).to_have_count(1)
    desktop = table_page(new_context(), game.headers["ria"], rematch)
    expect(desktop.locator("#game #to-previous-game")).to_be_visible(timeout=LIVE_MS)
    screenshot(desktop, "rematch-previous-game-desktop", full_page=True)
    desktop.locator("#to-previous-game").click()
    desktop.wait_for_url(f"**/tables/{game.table}")
    expect(desktop.locator("#to-rematch").first).to_have_attribute("href", f"/tables/{rematch}")
