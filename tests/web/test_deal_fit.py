"""What did not fit on a phone at a deal's end (docs/web.md, "The table page"), as players met
it in Thai and Russian: the score breakdown broke its numbers and words anywhere to squeeze its
columns ("-296" over "0" for -2960, "комбинац" over "иях", "Коман" over "да A"), and a wild
card's mark in a meld, "ДИКАЯ", ran out of its card into the next one's."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Backend
from tests.support.http import Game
from tests.web.conftest import TOUCH, NewContext, screenshot, scroll_to, stacked_decks_server
from tests.web.deals import WILD_ACES_GOING_OUT, send, wild_aces_until_going_out

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

NAMES = ("fitann", "fitbob", "fitcyd", "fitdee")

#: In the page: the words of the breakdown (row names, side names, numbers, the canastas'
#: details, each count with its word) that a line break cuts in two: each one's boxes must all
#: lie on one line.
BROKEN_WORDS = """root => {
  const broken = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    // A canasta's count stays with its word too: "(1" over "смешанная)" was cut.
    const pattern = node.parentElement.closest(".detail") ? /[^(),\\s][^(),]*/g : /\\S+/g;
    for (const match of node.data.matchAll(pattern)) {
      const range = document.createRange();
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const tops = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
      if (tops.size > 1) broken.push(match[0]);
    }
  }
  return broken;
}"""

#: In the page: the wild cards' marks ("ДИКАЯ") wider than their card.
SPILLED_MARKS = """cards => cards.filter((card) => {
  const mark = card.querySelector('.mark');
  const box = card.getBoundingClientRect();
  const text = document.createRange();
  text.selectNodeContents(mark);
  const ink = text.getBoundingClientRect();
  return ink.left < box.left - 0.5 || ink.right > box.right + 0.5;
}).map((card) => card.dataset.card)"""


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    yield from stacked_decks_server(tmp_path_factory, "deal-fit")


@pytest.fixture(scope="module")
def finished(web_server: Backend) -> Game:
    """The deal played to its end: seat 3 went out; seat 0's side melded A A 2."""
    with httpx.Client(base_url=web_server.server.url, timeout=10) as http:
        game = wild_aces_until_going_out(http, NAMES)
        send(http, game, 3, WILD_ACES_GOING_OUT)
        assert http.get(f"/deals/{game.deal_id}").json()["phase"] == "over"
    return game


def deal_end(new_context: NewContext, game: Game, locale: str, width: int) -> Page:
    """The table's page at the deal's end, as a spectator on a phone ``width`` wide."""
    viewport = {"width": width, "height": 800}
    page = new_context(viewport=viewport, locale=locale, **TOUCH).new_page()
    page.goto(f"/tables/{game.table}")
    expect(page.locator("table.breakdown")).to_be_visible()
    return page


@pytest.mark.parametrize("locale", ["ru-RU", "th-TH"])
@pytest.mark.parametrize("width", [320, 360, 390])
def test_the_score_breakdown_breaks_no_number_or_word_on_a_phone(
    new_context: NewContext, finished: Game, locale: str, width: int
) -> None:
    page = deal_end(new_context, finished, locale, width)
    breakdown = page.locator("table.breakdown")
    broken = breakdown.evaluate(BROKEN_WORDS)
    scroll_to(breakdown)
    screenshot(page, f"deal-fit-breakdown-{locale}-{width}", full_page=False)
    assert broken == [], f"cut across two lines: {broken}"
    # The table still fits the screen: nothing to scroll sideways.
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("locale", ["ru-RU", "th-TH", "zh-CN", "en-GB"])
def test_a_wild_cards_mark_stays_inside_its_card_in_a_meld(
    new_context: NewContext, finished: Game, locale: str
) -> None:
    page = deal_end(new_context, finished, locale, 390)
    wild = page.locator(".meld .card.wild")
    expect(wild).to_have_count(2)  # side A's aces, side B's kings
    assert wild.evaluate_all(SPILLED_MARKS) == []
    scroll_to(page.locator(".meld", has=page.locator(".card.wild")).first)
    screenshot(page, f"deal-fit-wild-mark-{locale}", full_page=False)


@pytest.mark.parametrize("locale", ["th-TH", "ru-RU"])
@pytest.mark.parametrize("width", [360, 390])
def test_the_stock_and_the_pile_sit_side_by_side_on_a_phone(
    web_server: Backend, new_context: NewContext, locale: str, width: int
) -> None:
    """The pile's notes ("The pile is always frozen ...") made it as wide as a line: it went
    under the stock, and on a phone its top card under the move panel at the bottom of the
    screen, when the player chooses between the stock and the pile."""
    with httpx.Client(base_url=web_server.server.url, timeout=10) as http:
        names = tuple(f"{name}{locale[:2]}{width}" for name in ("sa", "sb", "sc", "sd"))
        game = wild_aces_until_going_out(http, names, table={"options": {"always_frozen": True}})
    page = new_context(viewport={"width": width, "height": 800}, locale=locale, **TOUCH).new_page()
    page.goto(f"/tables/{game.table}")
    notes = page.locator(".center .pile .notes")
    expect(notes).to_be_visible()
    scroll_to(page.locator(".center"))
    screenshot(page, f"deal-fit-pile-{locale}-{width}", full_page=False)
    stock, pile = page.locator(".center").evaluate(
        "center => ['.stock', '.pile'].map((part) => center.querySelector(part).getBoundingClientRect().toJSON())"
    )
    assert abs(pile["y"] - stock["y"]) < 2, "the pile went under the stock"
    assert pile["right"] <= width
