"""The table page on an upright phone (docs/web.md, "Layout"), as a player met it: the cut's
number field and the Cut button stood far apart in the move panel, and the deal's seat boxes
took about 225-265 px for four seats because bots' names wrapped."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Backend
from tests.support.http import open_table, register_player
from tests.web.conftest import PHONES, TOUCH, NewContext, screenshot, stacked_decks_server
from tests.web.deals import deck_for
from tests.web.pages import table_page
from tests.web.practice import start_practice

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """A server set up for tests: stacked decks (R-DEAL-3)."""
    yield from stacked_decks_server(tmp_path_factory, "phone-moves")


#: In the page: the boxes of the cut's field and of the Cut button.
CUT_BOXES = """() => {
  const box = (node) => { const r = node.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom }; };
  return { field: box(document.getElementById("cut-n")),
           button: box(document.querySelector('#moves [data-move="cut"]')) };
}"""


def test_the_cut_s_field_and_button_are_together_on_a_phone(
    new_context: NewContext, http: httpx.Client
) -> None:
    names = ["cora", "dan", "eve", "finn"]
    game = open_table(http, names, entry="classic", start=False)
    game.start({"dealer": 3, "deck": deck_for("classic", 4, 3, 50, {}, [])})
    page = table_page(
        new_context(viewport=PHONES["upright"], **TOUCH), game.headers["cora"], game.table
    )
    field = page.locator("#cut-n")
    expect(field).to_be_visible()
    boxes: dict[str, Any] = page.evaluate(CUT_BOXES)
    field_box, button = boxes["field"], boxes["button"]
    # Side by side on one line, a small gap between them (the button was on the next line,
    # at the panel's left edge, under the label).
    gap = button["left"] - field_box["right"]
    assert 0 <= gap <= 16, boxes
    assert button["top"] < field_box["bottom"] and field_box["top"] < button["bottom"], boxes
    expect(page.locator('#moves [data-move="cut"]')).to_be_in_viewport()
    assert page.evaluate("() => document.scrollingElement.scrollWidth <= innerWidth")
    screenshot(page, "phone-cut", full_page=False)


#: In the page: the deal's seat list as the screen shows it: its height, and for each seat its
#: name and marks, the count's words (kept for a screen reader) and the number shown in their
#: place (CSS content), whether the words are on the screen, whether the seat is whole on it,
#: and its turn line if any.
SEATS_SHOWN = """() => {
  const list = document.querySelector("#deal .seat-list").getBoundingClientRect();
  const seats = [...document.querySelectorAll("#deal li[data-seat]")].map((node) => {
    const box = node.getBoundingClientRect();
    const count = node.querySelector(".count");
    const words = node.querySelector(".count-words");
    const number = getComputedStyle(count, "::after").content;
    return {
      name: node.querySelector(".seat-name").textContent,
      words: words.textContent,
      number,
      wordsShown: words.getBoundingClientRect().width > 1,
      whole: box.height > 0 && box.left >= 0 && box.right <= innerWidth,
      turn: node.querySelector(".turn")?.textContent ?? null,
    };
  });
  return { height: list.height, seats };
}"""


def test_the_deal_s_seats_are_compact_on_a_phone_and_say_all_they_said(
    new_context: NewContext, http: httpx.Client
) -> None:
    headers = register_player(http, "gus")
    table, _ = start_practice(http, headers, players=4, turn_seconds=120)
    page = table_page(new_context(viewport=PHONES["upright"], **TOUCH), headers, table)
    expect(page.locator("#deal li[data-seat]")).to_have_count(4)
    # gus's turn (to cut, or to play: the bots before him play at once).
    expect(page.locator('#deal li[data-seat="0"][data-turn="true"]')).to_be_visible()
    shown: dict[str, Any] = page.evaluate(SEATS_SHOWN)
    seats = shown["seats"]
    # Who sits where, which are bots, and the marks (the dealer's seat varies), as before.
    assert seats[0]["name"].startswith("gus (you, Side A"), seats
    for bot, side in enumerate(["Side B", "partner, Side A", "Side B"], start=1):
        assert seats[bot]["name"].startswith(f"bot:basic:{bot} (bot, basic) ({side}"), seats
    for seat in seats:
        # The cards held: the number beside the card back on the screen (the words' place
        # was a line of their own), the words for a screen reader.
        shown_number = re.match(r'"(\d+)"', seat["number"])
        assert shown_number and seat["whole"] and not seat["wordsShown"], seat
        assert seat["words"] == f"{shown_number[1]} cards in hand", seat
    # Whose turn, in words (gus cuts, or plays once the bots before him have).
    assert seats[0]["turn"] in ("▶ to cut", "▶ to play"), seats
    assert [seat["turn"] for seat in seats[1:]] == [None, None, None], seats
    # Two boxes a row took 259 px of the 844; a line a seat (one name wraps).
    assert shown["height"] <= 150, shown
    assert page.evaluate("() => document.scrollingElement.scrollWidth <= innerWidth")
    screenshot(page, "phone-deal-seats", full_page=False)
