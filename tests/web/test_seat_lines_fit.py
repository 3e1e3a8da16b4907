"""A lobby card's seat lines (docs/web.md): the label "Место 2:" and the player's name on one
line; on a Russian card a 32-letter name began on the line under its label, the label alone
on its line though there was room beside it. The long name wraps, inside the card."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.http import register_player
from tests.web.conftest import DESKTOP, PHONES, TOUCH, NewContext, screenshot
from tests.web.pages import LIVE_MS, in_language, open_lobby, signed_in

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

#: In the page: for each seat line of the card, whether its label's first line and its name's
#: first line are the same line, and whether the line stays inside the card.
SEAT_LINES = """card => [...card.querySelectorAll("li.seat")].map(item => {
  const [label, name] = item.childNodes;
  const top = node => { const range = document.createRange(); range.selectNodeContents(node);
    return range.getClientRects()[0].top; };
  const inside = item.getBoundingClientRect().right <= card.getBoundingClientRect().right + 0.5
    && item.scrollWidth <= item.clientWidth + 0.5;
  return { text: item.textContent, together: Math.abs(top(label) - top(name)) < 2, inside };
})"""


@pytest.mark.parametrize(
    "view", [{"viewport": DESKTOP}, {"viewport": PHONES["upright"], **TOUCH}], ids=["desk", "phone"]
)
def test_a_seat_s_label_stays_on_the_line_of_its_player(
    new_context: NewContext, http: httpx.Client, view: dict[str, object]
) -> None:
    letter = "W" if view["viewport"] == DESKTOP else "M"  # a name of 32 capitals, each run its own
    host, long = register_player(http, f"ann{letter}"), register_player(http, letter * 32)
    table = http.post("/tables", json={"entry": "classic", "players": 4}, headers=host)
    table_id = table.json()["id"]
    for seat, who in enumerate((host, long)):
        assert http.post(f"/tables/{table_id}/seats", json={"seat": seat}, headers=who).is_success
    page, _ = open_lobby(new_context(**view))
    signed_in(page, host)
    in_language(page, "ru")
    card = page.locator(f"[data-table='{table_id}']")
    expect(card).to_contain_text("Место 2", timeout=LIVE_MS)
    screenshot(page, f"lobby-seat-lines-ru-{page.viewport_size['width']}")  # type: ignore[index]
    lines = card.evaluate(SEAT_LINES)
    assert [line for line in lines[:2] if not (line["together"] and line["inside"])] == []
