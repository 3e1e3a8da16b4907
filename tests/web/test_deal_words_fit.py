"""How a deal's pages name its seats and fit what they say (docs/web.md, "The replay", "The
table page"): the replay and the audit name a bot as the table page does, "bot:basic:1 (bot,
basic)", in the page's language; the seat boxes' card backs and counts line up whether a
count has one digit or two; the score table's headings in Russian break between words only;
and a player's name as long as the server allows (32 capitals, no space) in the line that says
who went out and in the score tables stays inside its box on a small phone, with no sideways
scroll of the page, on the table page and the replay."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Backend
from tests.support.http import Game, Headers, register_player
from tests.web.conftest import (
    DESKTOP,
    PHONES,
    TOUCH,
    NewContext,
    screenshot,
    stacked_decks_server,
)
from tests.web.deals import classic_played
from tests.web.pages import open_page, sign_in
from tests.web.practice import play_moves, start_practice

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

AUDITOR = "audra"
#: Four names as long as the server takes (app/schemas.py), in wide capitals, with no space to
#: break them at.
LONG_NAMES = tuple(f"WOLFGANGMAXIMILIANWESTERMANNWEM{letter}" for letter in "ABCD")


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """A server set up for tests (stacked decks), with an auditor."""
    yield from stacked_decks_server(tmp_path_factory, "deal-words", CANASTA_AUDITORS=AUDITOR)


@pytest.fixture(scope="module")
def finished(web_server: Backend) -> Iterator[tuple[Game, Headers]]:
    """``classic_four`` played to its end by the four long names (seat 3 goes out concealed;
    side A scores no canasta: its column's heading is its widest words, which a cell that may
    break anywhere split, "Коман-да"), and the auditor's headers."""
    with httpx.Client(base_url=web_server.server.url, timeout=30) as http:
        game = classic_played(http, LONG_NAMES)
        yield game, register_player(http, AUDITOR)


def seat_names(page: Page) -> list[str]:
    """The names the deal's seat boxes show, without their marks ("(you, Side A)")."""
    names: list[str] = page.locator("#deal li[data-seat] .seat-name").evaluate_all(
        "(nodes) => nodes.map((node) => node.firstChild.textContent)"
    )
    return names


def test_the_replay_and_the_audit_name_a_bot_as_the_table_page_does_in_the_page_s_language(
    new_context: NewContext, http: httpx.Client, finished: tuple[Game, Headers]
) -> None:
    headers = register_player(http, "rita")
    table, deal = start_practice(http, headers, players=4)
    play_moves(http, headers, deal, 1)
    _, auditor = finished
    on_table = seat_names(open_page(new_context(), f"/tables/{table}"))
    assert on_table[1:] == [f"bot:basic:{seat} (bot, basic)" for seat in (1, 2, 3)], on_table

    replay = open_page(new_context(), f"/deals/{deal}/replay?step=1")
    assert seat_names(replay) == on_table
    expect(replay.locator("#words")).to_contain_text("(bot, basic)")
    # In Russian, as the table page says it then; the step's words too.
    replay.select_option("#lang", "ru")
    expect(replay.locator('#deal li[data-seat="1"] .seat-name')).to_contain_text(
        "bot:basic:1 (бот, базовый)"
    )
    screenshot(replay, "replay-bots-ru")
    russian = open_page(new_context(locale="ru-RU"), f"/tables/{table}")
    assert seat_names(replay) == seat_names(russian)

    audit = open_page(sign_in(new_context(), auditor), f"/audit/deals/{deal}")
    expect(audit.locator("#audit-events li").first).to_be_visible()
    hands = audit.locator("dl.hands dt").all_inner_texts()
    assert any(text.startswith("bot:basic:1 (bot, basic)") for text in hands), hands
    screenshot(audit, "audit-bots")


#: In the page: per seat box, where its card back starts and where its count (the number, or
#: the number's words) ends, from the inner left and right edges of the box (a seat whose turn
#: it is has a thicker border), and the number of cards.
COUNT_EDGES = """() => [...document.querySelectorAll("#deal li[data-seat]")].map((seat) => {
  const box = seat.getBoundingClientRect();
  const style = getComputedStyle(seat);
  const left = box.left + parseFloat(style.borderLeftWidth) + parseFloat(style.paddingLeft);
  const right = box.right - parseFloat(style.borderRightWidth) - parseFloat(style.paddingRight);
  const count = seat.querySelector(".count[data-count]");
  const back = count.querySelector(".card.back").getBoundingClientRect();
  const end = count.getBoundingClientRect().right;
  return { count: Number(count.dataset.count), figures: getComputedStyle(count).fontVariantNumeric,
    fromLeft: [back.left - left, end - left], fromRight: [right - back.left, right - end] };
})"""


def step_with_counts(http: httpx.Client, deal: str, last: int) -> int:
    """A step of the deal at which one hand holds fewer than 10 cards and another 10 or more."""
    for step in range(last, 0, -1):
        counts = http.get(f"/deals/{deal}/replay", params={"step": step}).json()["hand_counts"]
        if min(counts.values()) < 10 <= max(counts.values()):
            return step
    raise AssertionError("no step with a one-digit and a two-digit count")


@pytest.mark.parametrize("screen", ["phone", "desktop"])
def test_the_seats_card_backs_and_counts_line_up_with_one_and_two_digits(
    new_context: NewContext, http: httpx.Client, finished: tuple[Game, Headers], screen: str
) -> None:
    game, _ = finished
    last = http.get(f"/deals/{game.deal_id}").json()["step"]
    step = step_with_counts(http, game.deal_id, last)
    viewport = (
        {"viewport": PHONES["small"], **TOUCH} if screen == "phone" else {"viewport": DESKTOP}
    )
    page = open_page(new_context(**viewport), f"/deals/{game.deal_id}/replay?step={step}")
    expect(page.locator("#view")).to_have_attribute("data-step", str(step))
    edges: list[dict[str, Any]] = page.evaluate(COUNT_EDGES)
    page.locator("#deal .seats-area").evaluate("(node) => node.scrollIntoView({ block: 'end' })")
    screenshot(page, f"seat-counts-{screen}", full_page=False)
    assert {edge["count"] < 10 for edge in edges} == {True, False}, edges
    # The figures are all as wide as each other, and the backs and counts start and end
    # at the same place in every box.
    assert all("tabular-nums" in edge["figures"] for edge in edges), edges
    # On a phone the back and the number at the right of the seat's line; on a desktop the
    # back at the left of the box, the number's words after it.
    measured = "fromRight" if screen == "phone" else "fromLeft"
    backs = [e[measured][0] for e in edges]
    assert max(backs) - min(backs) < 0.5, edges
    if screen == "phone":  # the number alone beside the back (in a sentence on a desktop)
        ends = [e[measured][1] for e in edges]
        assert max(ends) - min(ends) < 0.5, edges


#: In the page: the score tables' headings whose words break inside (a word's letters on more
#: than one line).
SPLIT_WORDS = """() => {
  const split = [];
  for (const cell of document.querySelectorAll("table.breakdown th, table.totals th")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.textContent.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (tops.size > 1) split.push(word[0]);
      }
    }
  }
  return split;
}"""

#: In the page: every piece of text in the deal's end, its score table and the game's totals
#: that reaches past the left or right edge of its box (a table that scrolls within itself is
#: a box of its own: its text may go on past the screen there).
TEXT_PAST_ITS_BOX = """() => {
  const out = [];
  const boxes = [...document.querySelectorAll("#deal .deal-end, #deal .deal-end p, #game, #game li, #game .winner")];
  const clipped = (node, box) => {
    for (let up = node.parentElement; up && up !== box; up = up.parentElement) {
      if (getComputedStyle(up).overflowX !== "visible") return true;
    }
    return false;
  };
  for (const box of boxes) {
    if (box.offsetParent === null) continue;
    const edge = box.getBoundingClientRect();
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent.trim() || clipped(node, box)) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const line of range.getClientRects()) {
        if (line.width > 0 && (line.left < edge.left - 0.5 || line.right > edge.right + 0.5)) {
          out.push({ box: box.className || box.id, text: node.textContent, right: line.right, edge: edge.right });
        }
      }
    }
  }
  return out;
}"""

#: In the page: the score tables wider than the screen (``width``: a mobile browser widens its
#: layout to the content, so ``innerWidth`` would grow with it) that do not scroll within
#: themselves.
TABLES_PAST_THE_SCREEN = """(width) => [...document.querySelectorAll("table.breakdown, table.totals")]
  .filter((table) => {
    const scroller = table.parentElement;
    const scrolls = getComputedStyle(scroller).overflowX === "auto"
      && scroller.getBoundingClientRect().right <= width + 0.5;
    return table.getBoundingClientRect().right > width + 0.5 && !scrolls;
  }).map((table) => table.className)"""


def check_fits(page: Page, shot: str, *, spaced: bool = True) -> None:
    """Nothing past its box or the screen; in a language that puts spaces between its words
    (``spaced``: not Chinese or Thai, which break between characters or words without them),
    no heading of a score table broken inside a word."""
    screenshot(page, shot)
    # The deal's end at the bottom of the screen (clear of the replay's stepper at its top).
    page.locator("#deal .deal-end").evaluate("(node) => node.scrollIntoView({ block: 'end' })")
    screenshot(page, f"{shot}-end", full_page=False)
    if spaced:
        assert page.evaluate(SPLIT_WORDS) == [], shot
    assert page.evaluate(TEXT_PAST_ITS_BOX) == [], shot
    width = page.viewport_size["width"] if page.viewport_size else 0
    assert page.evaluate(TABLES_PAST_THE_SCREEN, width) == [], shot
    scrolled = page.evaluate("() => document.scrollingElement.scrollWidth")
    assert scrolled <= width, (shot, scrolled)


@pytest.mark.parametrize("lang", ["en", "ru", "th", "zh"])
def test_long_names_and_the_score_table_fit_a_small_phone_on_the_table_page_and_the_replay(
    new_context: NewContext, http: httpx.Client, finished: tuple[Game, Headers], lang: str
) -> None:
    game, _ = finished
    view = http.get(f"/deals/{game.deal_id}").json()
    assert view["phase"] == "over" and view["went_out"] is not None, view
    went_out = LONG_NAMES[view["went_out"]]
    context = new_context(locale=lang, viewport=PHONES["small"], **TOUCH)

    replay = open_page(context, f"/deals/{game.deal_id}/replay?step=1000")
    expect(replay.locator("#deal .deal-end p").first).to_contain_text(went_out)
    expect(replay.locator("table.breakdown")).to_be_visible()
    check_fits(replay, f"deal-end-long-name-replay-{lang}", spaced=lang in ("en", "ru"))
    table = open_page(context, f"/tables/{game.table}")
    expect(table.locator("#deal .deal-end p").first).to_contain_text(went_out)
    expect(table.locator("#totals-table")).to_be_visible()
    check_fits(table, f"deal-end-long-name-table-{lang}", spaced=lang in ("en", "ru"))


def test_the_russian_score_headings_break_between_words_on_a_desktop_too(
    new_context: NewContext, finished: tuple[Game, Headers]
) -> None:
    game, _ = finished
    page = open_page(
        new_context(locale="ru", viewport=DESKTOP), f"/deals/{game.deal_id}/replay?step=1000"
    )
    expect(page.locator("table.breakdown")).to_be_visible()
    check_fits(page, "deal-end-replay-ru-desktop")
