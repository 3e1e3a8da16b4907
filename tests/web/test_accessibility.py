"""The pages for a player who plays with the keyboard only or with a screen reader, and on a
phone (docs/web.md, "Accessibility"), as such a player met them: on a phone the move panel
covered his hand when his turn came."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.http import register_player
from tests.web.conftest import PHONES, TOUCH, NewContext, screenshot
from tests.web.pages import table_page
from tests.web.practice import start_practice

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
