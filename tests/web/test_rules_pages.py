"""The rules in the browser (docs/web.md, "The rules"): from the lobby a player reads what an
entry is, in his language, and opens its rules; at a table, the rules of its entry are a link
away, and a refused move's rule id opens that rule in a new tab, the table left as it was."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Backend
from tests.web.conftest import (
    DESKTOP,
    PHONES,
    TOUCH,
    NewContext,
    screenshot,
    scroll_to,
    stacked_decks_server,
)
from tests.web.deals import classic_four, play_step, start_table
from tests.web.pages import open_lobby, sign_up, table_page

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

PHONE = PHONES["upright"]  # 390 × 844
UNKNOWN = "00000000-0000-4000-8000-000000000000"
FITS = "() => document.scrollingElement.scrollWidth <= window.innerWidth"


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    yield from stacked_decks_server(tmp_path_factory, "rules-pages")


def targeted(page: Page, anchor: str) -> None:
    """The page shows the element ``anchor`` (the URL's fragment) in sight, marked."""
    assert page.evaluate("() => document.querySelector(':target')?.id") == anchor
    expect(page.locator(f"[id='{anchor}']")).to_be_in_viewport()


def test_from_the_lobby_a_player_reads_what_an_entry_is_and_opens_its_rules(
    new_context: NewContext, web_server: Backend
) -> None:
    context = new_context(viewport=DESKTOP)
    lobby, urls = open_lobby(context)
    # Signed out, the header leads to the rules' overview: the entries at a glance.
    lobby.get_by_role("link", name="Rules", exact=True).click()
    expect(lobby).to_have_url("/rules")
    expect(lobby.get_by_role("heading", name="Entries at a glance")).to_be_visible()
    nav = lobby.get_by_role("navigation", name="Rules")
    expect(nav.get_by_role("link", name="Overview")).to_have_attribute("aria-current", "page")
    expect(lobby.locator("#rules-english")).to_be_hidden()  # an English reader needs no note
    screenshot(lobby, "rules-overview-desktop")
    lobby.get_by_role("link", name="Back to the lobby").click()
    expect(lobby.locator("body[data-ready=true]")).to_be_attached()

    # Signed in, choosing an entry says what it is, and links to its rules in a new tab.
    sign_up(lobby, "rhea")
    entry = lobby.get_by_label("Entry")
    expect(entry).to_have_accessible_description(
        "The base game: 2 to 6 players (with 5 or 6, two teams, four of them playing each "
        "deal), 2 decks, 11 to 15 cards a hand; one canasta to go out (two with 2 players); "
        "game to 5000."
    )
    entry.select_option("modern_american")
    summary = lobby.locator("#entry-summary")
    expect(summary).to_contain_text("Exactly 4 players in two partnerships, 2 decks, 13 cards")
    expect(lobby.get_by_label("The pile is always frozen")).to_have_accessible_description(
        "Option (not for Modern American): the pile is always frozen; its top card is taken "
        "only with a natural pair of its rank from the hand, or alone onto your side's meld "
        "of its rank if that meld has six cards or fewer."
    )
    screenshot(lobby, "rules-lobby-entry-desktop", full_page=False)
    with context.expect_page() as tab:
        summary.get_by_role("link", name="Rules: Modern American (opens in a new tab)").click()
    rules = tab.value
    expect(rules.locator("body[data-ready=true]")).to_be_attached()
    expect(rules).to_have_url("/rules/modern_american")
    expect(rules.get_by_role("heading", name="modern_american", exact=True)).to_be_visible()
    expect(rules.locator("[id='R-MA-MELD-1']")).to_contain_text("R-MA-MELD-1")
    current = rules.get_by_role("navigation", name="Rules").locator("[aria-current=page]")
    expect(current).to_have_text("Modern American")
    assert entry.input_value() == "modern_american"  # the lobby's form is as he left it
    # Nothing of the lobby or the rules came from another host.
    assert all(url.startswith((web_server.server.url, "data:")) for url in urls), urls


def test_a_russian_reader_on_a_phone_reads_the_entry_and_its_rules_in_russian_around_english(
    new_context: NewContext,
) -> None:
    context = new_context(viewport=PHONE, locale="ru-RU", **TOUCH)
    lobby = context.new_page()
    lobby.goto("/")
    expect(lobby.locator("body[data-ready=true]")).to_be_attached()
    lobby.locator("#sign-up-name").fill("sasha")
    lobby.locator("#sign-up-form button[type=submit]").tap()
    lobby.locator("#token-done").tap()
    lobby.get_by_label("Вариант").select_option("ponytail")
    summary = lobby.locator("#entry-summary")
    expect(summary).to_contain_text("Ровно 4 игрока, две пары партнёров, 6 колод")
    link = summary.get_by_role("link", name="Правила: Хвостик (откроется в новой вкладке)")
    scroll_to(lobby.locator("#create-entry"))
    assert lobby.evaluate(FITS)
    screenshot(lobby, "rules-lobby-entry-ru-phone", full_page=False)
    with context.expect_page() as tab:
        link.tap()
    rules = tab.value
    expect(rules.locator("body[data-ready=true]")).to_be_attached()
    expect(rules).to_have_url("/rules/ponytail")
    expect(rules.locator("#rules-english")).to_have_text(
        "Полный текст правил есть только на английском языке."
    )
    nav = rules.get_by_role("navigation", name="Правила")
    expect(nav.get_by_role("link", name="Обзор")).to_be_visible()
    expect(nav.get_by_role("link", name="Общие правила")).to_be_visible()
    assert rules.locator(".rules").get_attribute("lang") == "en"
    assert rules.evaluate("() => document.documentElement.lang") == "ru"
    assert rules.evaluate(FITS), rules.evaluate("() => document.scrollingElement.scrollWidth")
    screenshot(rules, "rules-ponytail-ru-phone", full_page=False)
    rules.goto("/rules/common#error-codes")  # the widest table scrolls in its box, not the page
    expect(rules.locator("body[data-ready=true]")).to_be_attached()
    targeted(rules, "error-codes")
    assert rules.evaluate(FITS), rules.evaluate("() => document.scrollingElement.scrollWidth")


def refuse_a_take(page: Page) -> None:
    """Seat 0 of ``classic_four`` after the cut: his side has not melded, so the pile (5♥) is
    frozen for it (R-PILE-2); he tries to take it with his one five."""
    page.locator('#hand [data-card="5S/1"]').click()
    page.locator('#moves [data-move="take_pile"]').click()


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
def test_a_refused_move_s_rule_opens_in_a_new_tab_at_that_rule(
    new_context: NewContext, http: httpx.Client, viewport: str
) -> None:
    deal = classic_four()
    names = ("ann", "bob", "cyd", "dee") if viewport == "desktop" else ("amy", "ben", "cal", "don")
    game = start_table(http, deal, names)
    play_step(http, game, deal.steps[0])  # seat 0 cuts; he is to draw
    options = {"viewport": DESKTOP} if viewport == "desktop" else {"viewport": PHONE, **TOUCH}
    context = new_context(**options)
    page = table_page(context, game.headers[names[0]], game.table)
    table_url = page.url

    rules_link = page.get_by_role("link", name="Rules: Classic (opens in a new tab)")
    expect(rules_link).to_have_attribute("href", "/rules/classic")
    expect(rules_link).to_have_attribute("target", "_blank")

    refuse_a_take(page)
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Refused: ")
    code = alert.locator("a").inner_text()
    assert code.startswith("R-PILE-"), alert.inner_text()
    # The rule's line ends with the code; the server's message is the detail under it.
    assert alert.locator(".refusal-rule").inner_text().endswith(f"({code})")
    link = alert.get_by_role("link", name=f"{code} in the rules (opens in a new tab)")
    expect(link).to_be_in_viewport()  # in the move panel, where he pressed
    screenshot(page, f"rules-table-refused-{viewport}", full_page=False)
    with context.expect_page() as tab:
        link.click()
    rule = tab.value
    expect(rule.locator("body[data-ready=true]")).to_be_attached()
    expect(rule).to_have_url(f"/rules/common#{code}")
    targeted(rule, code)
    screenshot(rule, f"rules-rule-{viewport}", full_page=False)
    # The table is where he left it: still his draw, the refusal still said.
    assert page.url == table_url
    expect(alert).to_contain_text(code)
    expect(page.locator('#moves [data-move="draw"]')).to_be_visible()


def test_a_refusal_that_is_no_rule_links_to_its_error_code(new_context: NewContext) -> None:
    context = new_context()
    page = context.new_page()
    page.goto(f"/tables/{UNKNOWN}")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    alert = page.get_by_role("alert")
    link = alert.get_by_role("link", name="not_found in the rules (opens in a new tab)")
    with context.expect_page() as tab:
        link.click()
    code = tab.value
    expect(code).to_have_url("/rules/common#not_found")
    expect(code.locator("body[data-ready=true]")).to_be_attached()
    targeted(code, "not_found")
    row = code.locator("tr", has=code.locator("[id='not_found']"))
    expect(row).to_contain_text("no such table, deal or account")


#: In the page: each table's box that scrolls sideways (wider than its box), how it is marked
#: and whether its hidden side is faded out (a mask over its box).
WIDE_TABLES = """() => [...document.querySelectorAll(".table-scroll")]
  .filter((box) => box.scrollWidth > box.clientWidth + 1)
  .map((box) => ({
    start: box.dataset.moreStart, end: box.dataset.moreEnd,
    faded: getComputedStyle(box).maskImage !== "none",
  }))"""


def test_on_a_phone_a_wide_table_shows_that_it_scrolls_and_the_page_never_does(
    new_context: NewContext,
) -> None:
    """The rules' tables scrolled sideways inside their box on a phone with nothing to say so:
    the side where more is hidden now fades out, the other side once scrolled."""
    page = new_context(viewport=PHONE, **TOUCH).new_page()
    page.goto("/rules")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    pages = page.locator(".rules-nav a").evaluate_all("links => links.map((a) => a.href)")
    assert len(pages) >= 6, pages
    wide_seen = []
    for address in pages:
        page.goto(address)
        expect(page.locator("body[data-ready=true]")).to_be_attached()
        assert page.evaluate(FITS), (
            address,
            page.evaluate("() => document.scrollingElement.scrollWidth"),
        )
        wide = page.evaluate(WIDE_TABLES)
        assert all(box == {"start": "false", "end": "true", "faded": True} for box in wide), (
            address,
            wide,
        )
        wide_seen += [address] * len(wide)
    assert wide_seen, "no table wider than a phone: nothing was checked"

    # Scrolled to its end, the other side fades: there is more to see back there.
    page.goto(wide_seen[0])
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    box = page.locator('.table-scroll[data-more-end="true"]').first
    box.evaluate("node => node.classList.add('looked-at')")
    box = page.locator(".table-scroll.looked-at")
    box.scroll_into_view_if_needed()
    screenshot(page, "rules-table-fade-phone", full_page=False)
    box.evaluate("node => node.scrollTo({ left: node.scrollWidth })")
    expect(box).to_have_attribute("data-more-end", "false")
    expect(box).to_have_attribute("data-more-start", "true")
    assert page.evaluate(WIDE_TABLES)[0]["faded"]
    assert page.evaluate(FITS)
    screenshot(page, "rules-table-fade-scrolled-phone", full_page=False)
