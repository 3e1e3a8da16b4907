"""Controls that belong together stay in line on a phone and a desktop (docs/web.md,
"Layout"): the host's team menus in the lobby, one under the other at the right of their
seats, whatever the length of a seat's name; the turn clock's Set the clock, beside its menu
or under it at the same left edge. Each is measured on the page as drawn, in one evaluation."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.http import open_table
from tests.web.conftest import DESKTOP, PHONES, TOUCH, NewContext, screenshot
from tests.web.pages import LIVE_MS, open_lobby, signed_in, table_page

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

SCREENS: dict[str, dict[str, Any]] = {
    "phone": {"viewport": PHONES["upright"], **TOUCH},
    "desktop": {"viewport": DESKTOP},
}
#: In a table's card: each team menu that is not beside its seat's label, or not in line
#: with the others' right edge.
TEAM_MENUS_OUT_OF_LINE = """(card) => {
  const rows = [...card.querySelectorAll(".host-team")].map((row) => [
    row.querySelector("label").getBoundingClientRect(),
    row.querySelector("select").getBoundingClientRect(),
    row.textContent.trim().slice(0, 40),
  ]);
  const right = Math.max(...rows.map(([, menu]) => menu.right));
  return rows.filter(([label, menu]) => menu.top >= label.bottom || menu.bottom <= label.top
    || Math.abs(menu.right - right) > 1).map(([, , words]) => words);
}"""
#: On the host's table page before the start: how Set the clock stands to the clock's menu.
CLOCK_BUTTON = """() => {
  const menu = document.getElementById("clock-choice").getBoundingClientRect();
  const button = document.getElementById("clock-set").getBoundingClientRect();
  if (button.top < menu.bottom) return button.left >= menu.right ? "beside" : "over the menu";
  return Math.abs(button.left - menu.left) < 1 ? "under" : `under, ${button.left - menu.left} px in`;
}"""


@pytest.mark.parametrize("screen", SCREENS)
def test_the_host_s_team_menus_stay_in_line_beside_long_names(
    new_context: NewContext, http: httpx.Client, screen: str
) -> None:
    host = f"hal-the-host-{screen}"
    game = open_table(http, [host], start=False, table={"entry": "extra_six", "players": 6})
    page = signed_in(open_lobby(new_context(**SCREENS[screen]))[0], game.host)
    card = page.get_by_role("article", name=f"Extra six table of 6, host {host}")
    card.get_by_role("button", name="Add a bot to seat 6").click()
    expect(card).to_contain_text("Seat 6: bot:basic:5", timeout=LIVE_MS)
    expect(card.locator(".host-team")).to_have_count(6)
    screenshot(page, f"layout-host-teams-{screen}")
    assert card.evaluate(TEAM_MENUS_OUT_OF_LINE) == []


def test_set_the_clock_stays_in_line_with_its_menu_on_a_phone(
    new_context: NewContext, http: httpx.Client
) -> None:
    game = open_table(http, ["cleo-sets-the-clock"], start=False, table={"players": 2})
    page = table_page(new_context(**SCREENS["phone"]), game.host, game.table)
    expect(page.locator("#clock-set")).to_be_visible()
    screenshot(page, "layout-clock-choice-phone", full_page=False)
    assert page.evaluate(CLOCK_BUTTON) in ("beside", "under")
