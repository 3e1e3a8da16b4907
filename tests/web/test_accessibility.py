"""The pages for a player who plays with the keyboard only or with a screen reader, and on a
phone (docs/web.md, "Accessibility"), as such a player met them: on a phone the move panel
covered his hand when his turn came."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.http import register_player
from tests.web.conftest import PHONES, TOUCH, NewContext, screenshot
from tests.web.pages import open_page, sign_in, table_page
from tests.web.practice import play_moves, start_practice, wait_until_quiet

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

#: In the page: is the whole hand on the screen, above the move panel that stays at its bottom?
HAND_ABOVE_PANEL = """() => {
  const hand = document.getElementById("hand")?.getBoundingClientRect();
  const panel = document.getElementById("moves").getBoundingClientRect();
  return !!hand && hand.top >= 0 && hand.bottom <= panel.top + 0.5 && panel.bottom <= innerHeight + 0.5;
}"""


def his_draw(page: Page) -> None:
    """Waits for the player's draw (cutting first if the deal asks him to)."""
    cut = page.locator('#moves [data-move="cut"]')
    draw = page.locator('#moves [data-move="draw"]')
    expect(cut.or_(draw)).to_be_visible()
    if cut.is_visible():
        cut.tap()
    expect(draw).to_be_visible()


def test_on_a_phone_his_hand_and_the_move_panel_are_both_in_sight_when_his_turn_comes(
    new_context: NewContext, http: httpx.Client
) -> None:
    headers = register_player(http, "pia")
    table, _ = start_practice(http, headers)
    page = table_page(new_context(viewport=PHONES["upright"], **TOUCH), headers, table)
    his_draw(page)
    # He had to scroll past the deal to find his cards, under the panel, at every turn.
    page.wait_for_function(HAND_ABOVE_PANEL)
    screenshot(page, "phone-turn-hand-in-sight", full_page=False)
    # Drawn: his two new cards and the panel's play step, in sight together too.
    page.locator('#moves [data-move="draw"]').tap()
    expect(page.locator('#moves [data-move="discard"]')).to_be_visible()
    page.wait_for_function(HAND_ABOVE_PANEL)
    screenshot(page, "phone-turn-hand-in-sight-play", full_page=False)


#: A card's face as the page prints it ("Q♥", "10♣", "★"): never what a screen reader is given.
GLYPHS = re.compile(r"[♠♥♦♣★☆]")
#: A card as a screen reader is given it: an image named "queen of hearts, deck 2".
SPOKEN_CARD = re.compile(r'img "(\w+ of \w+|big joker|little joker), deck \d"')
#: In the page: the live regions around the log, if any (a region read out as it changes).
LIVE_AROUND_LOG = """() => !!document.getElementById("log")
  .closest('[aria-live]:not([aria-live=off]), [role=log], [role=status], [role=alert]')"""


def test_a_screen_reader_hears_the_moves_made_since_he_opened_the_page_in_words(
    new_context: NewContext, http: httpx.Client
) -> None:
    headers = register_player(http, "ray")
    table, deal = start_practice(http, headers)
    play_moves(http, headers, deal, 4)  # the deal under way before he opens the page
    quiet = wait_until_quiet(http, headers, deal)
    page = table_page(new_context(), headers, table)
    expect(page.locator(f"#log li[data-step='{quiet}']")).to_be_attached()
    # The log is not read out: opening the page read every line of the deal so far (and a
    # switch of language read them all again). Only what happens from now on is spoken.
    assert not page.evaluate(LIVE_AROUND_LOG)
    said = page.locator("#said p")
    expect(said).to_have_count(0)
    # His log's lines give a screen reader the cards' names, not the symbols printed.
    dealt = page.locator("#log li[data-kind=CardsDealt]")
    expect(dealt).to_contain_text("Your cards:")
    assert GLYPHS.search(dealt.inner_text().split("Your cards:")[1])
    spoken = dealt.aria_snapshot()
    assert "Your cards:" in spoken and " of " in spoken and not GLYPHS.search(spoken), spoken
    # A move now (his, then the bot's): said once each, in words.
    play_moves(http, headers, deal, 2)
    expect(said.first).to_be_attached()
    lines = said.all_inner_texts()
    assert lines and not any(GLYPHS.search(line) for line in lines), lines
    assert len(lines) <= 4, lines  # the latest few, never the whole log
    # The pile's top and the cards of his hand, as the replay shows them (no buttons there):
    # each an image named by its card; they were silent (a bare label on a span is not read).
    events = http.get(f"/deals/{deal}/events", headers=headers).json()
    started = next(e["step"] for e in events if e["kind"] == "PlayStarted")
    replay = new_context()
    sign_in(replay, headers)
    shown = open_page(replay, f"/deals/{deal}/replay?step={started}")
    expect(shown.locator(f"#deal .deal[data-step='{started}'] .pile .card")).to_be_attached()
    pile = shown.locator("#deal .pile").aria_snapshot()
    assert SPOKEN_CARD.search(pile), pile
    hand = shown.locator("#deal #hand").aria_snapshot()
    assert len(SPOKEN_CARD.findall(hand)) >= 11, hand
    # The step's words are spoken too.
    expect(shown.locator("#words-said")).not_to_be_empty()
    assert not GLYPHS.search(shown.locator("#words-said").inner_text())
