"""The table page on an upright phone (docs/web.md, "Layout"), as a player met it: the cut's
number field and the Cut button stood far apart in the move panel, and the deal's seat boxes
took about 225-265 px for four seats because bots' names wrapped."""

from __future__ import annotations

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
