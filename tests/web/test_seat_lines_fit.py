"""A lobby card's seat lines (docs/web.md): the label "Место 2:" and the player's name on one
line; on a Russian card a 32-letter name began on the line under its label, the label alone
on its line though there was room beside it. The long name wraps, inside the card."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.http import register_player
from tests.web.conftest import DESKTOP, PHONES, SCREENSHOTS, TOUCH, NewContext, screenshot
from tests.web.pages import LIVE_MS, in_language, open_lobby, signed_in

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

#: In the page: the card of table ``id`` as the page shows it now, found and measured in one step
#: (the poll redraws the cards: an element found before may be gone, measuring 0 x 0).
FRESH = "document.querySelector(`article[data-table='${id}']`)"

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
    lines = page.evaluate(f"id => ({SEAT_LINES})({FRESH})", table_id)
    assert [line for line in lines[:2] if not (line["together"] and line["inside"])] == []


#: In the page: for each seat line of the card, its label ("Место 1:"), how many lines the
#: label takes, and whether the line stays inside the card.
SEAT_LABELS = """card => [...card.querySelectorAll("li.seat")].map(item => {
  const range = document.createRange(); range.selectNodeContents(item.childNodes[0]);
  const tops = new Set([...range.getClientRects()].filter(box => box.width > 0)
    .map(box => Math.round(box.top)));
  const inside = item.getBoundingClientRect().right <= card.getBoundingClientRect().right + 0.5
    && item.scrollWidth <= item.clientWidth + 0.5;
  return { label: item.childNodes[0].textContent, lines: tops.size, inside };
})"""

#: In the page: where the card is in the whole page.
CARD_BOX = """card => { const box = card.getBoundingClientRect();
  return { x: box.left + scrollX, y: box.top + scrollY, width: box.width, height: box.height }; }"""

LANGUAGES = ("en", "zh", "ru", "th")
SMALL = {"viewport": PHONES["small"], **TOUCH}


@pytest.mark.parametrize(
    ("lang", "view"),
    [(lang, SMALL) for lang in LANGUAGES]
    + [("ru", {"viewport": PHONES["landscape"], **TOUCH})]
    + [(lang, {"viewport": DESKTOP}) for lang in LANGUAGES],
    ids=[f"{lang}-360" for lang in LANGUAGES]
    + ["ru-landscape"]
    + [f"{lang}-desk" for lang in LANGUAGES],
)
def test_a_seat_s_label_is_never_broken_inside(
    new_context: NewContext, http: httpx.Client, lang: str, view: dict[str, object]
) -> None:
    """A started game's card on a 360 px phone in Russian read "Место" / "1: wanda · Команда A":
    beside the card's term "Места" the seats had ~200 px, and the label was the only place
    left to break. The label ("Место 1:") is one line, and every line stays inside the card."""
    width = view["viewport"]["width"]  # type: ignore[index]
    suffix = f"{lang}{width}"
    host, guest = register_player(http, f"wanda{suffix}"), register_player(http, f"bob{suffix}")
    table = {"entry": "classic", "players": 4}
    table_id = http.post("/tables", json=table, headers=host).json()["id"]
    for seat, who in enumerate((host, guest)):
        assert http.post(f"/tables/{table_id}/seats", json={"seat": seat}, headers=who).is_success
    for seat in (2, 3):  # "Seat 3: bot:basic:2 (bot, basic) · Side A"
        bot = {"seat": seat, "bot": "basic"}
        assert http.post(f"/tables/{table_id}/seats", json=bot, headers=host).is_success
    assert http.post(f"/tables/{table_id}/start", headers=host).status_code == 201
    page, _ = open_lobby(new_context(**view))
    signed_in(page, host)
    in_language(page, lang)
    card = page.locator(f"article[data-table='{table_id}']")
    expect(card.locator("li.seat").nth(3)).to_contain_text("bot:basic:3", timeout=LIVE_MS)
    expect(card.locator(".seat-side").first).to_be_visible(timeout=LIVE_MS)
    # The card alone (the poll redraws it: where it is, not the element, which may be gone).
    box = page.evaluate(f"id => ({CARD_BOX})({FRESH})", table_id)
    page.screenshot(
        path=SCREENSHOTS / f"lobby-seat-labels-{lang}-{width}.png", full_page=True, clip=box
    )
    labels = page.evaluate(f"id => ({SEAT_LABELS})({FRESH})", table_id)
    assert len(labels) == 4
    assert [label for label in labels if label["lines"] != 1 or not label["inside"]] == []
