"""The replay page on a phone (docs/web.md, "The replay"): it draws the deal with the table
page's renderer and deal.css, so its seats get the phone's compact boxes too, a line a seat
(tests/web/test_phone_moves.py checks them on the table page). Here, on an upright phone and a
small one: each seat's name, whose turn and the cards held side by side, the number of cards
on the screen and its words still read to a screen reader, and no text reaching past the edge
of its box. A player with a name as long as the server allows (32 characters) found the
heading of his side, "Side A: <his name>, bot:basic:2", running past its box on the small
phone: a name with nowhere to break it."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.http import register_player
from tests.web.conftest import PHONES, TOUCH, NewContext, screenshot
from tests.web.pages import open_lobby, signed_in
from tests.web.practice import play_moves, start_practice
from tests.web.test_phone_moves import SEATS_SHOWN

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

#: In the page: for each seat, the boxes of its name, its turn line (if any) and its count.
SEAT_PIECES = """() => [...document.querySelectorAll("#deal li[data-seat]")].map((node) => {
  const box = (piece) => { if (!piece) return null; const r = piece.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, left: r.left, right: r.right }; };
  const name = node.querySelector(".seat-name");
  return { seat: node.dataset.seat, height: node.getBoundingClientRect().height,
    line: parseFloat(getComputedStyle(name).lineHeight), name: box(name),
    turn: box(node.querySelector(".turn")), count: box(node.querySelector(".count")) };
})"""

#: In the page: every piece of text in the deal's boxes (seats, the stock and pile, the sides,
#: melds, the hand) that reaches past its box's left or right edge; text hidden for a screen
#: reader only (a box 1 px wide) is not on the screen.
TEXT_PAST_ITS_BOX = """() => {
  const out = [];
  const boxes = "#deal .seat-box, #deal .center, #deal .side, #deal .meld, #deal .hand, #deal .deal-end";
  for (const box of document.querySelectorAll(boxes)) {
    const edge = box.getBoundingClientRect();
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent.trim() || node.parentElement.getBoundingClientRect().width <= 1) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      for (const line of range.getClientRects()) {
        if (line.width > 0 && (line.left < edge.left - 0.5 || line.right > edge.right + 0.5)) {
          out.push({ box: box.className, text: node.textContent, left: line.left, right: line.right,
            edge: [edge.left, edge.right] });
        }
      }
    }
  }
  return out;
}"""

#: With a suffix per phone, 32 characters in capitals: the longest name the server takes
#: (app/schemas.py), and no space to break it at.
LONG_NAME = "HIERONYMUS_BOSCH_VAN_AKEN_"


def side_by_side(a: dict[str, float], b: dict[str, float]) -> bool:
    """Two boxes on the same line: their heights overlap."""
    return a["top"] < b["bottom"] and b["top"] < a["bottom"]


@pytest.mark.parametrize("phone", ["upright", "small"])
def test_the_replay_s_seats_are_a_line_each_on_a_phone_and_nothing_is_cut_off(
    new_context: NewContext, http: httpx.Client, phone: str
) -> None:
    name = f"{LONG_NAME}{phone.upper():_<6.6}"
    assert len(name) == 32
    headers = register_player(http, name)
    _, deal = start_practice(http, headers, players=4)  # the bots before him play at once
    play_moves(http, headers, deal, 1)  # his cut or his draw: he holds cards
    context = new_context(viewport=PHONES[phone], **TOUCH)
    page = signed_in(open_lobby(context)[0], headers)
    page.goto(f"/deals/{deal}/replay?step=1000")  # its last step
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    expect(page.locator("#deal li[data-seat]")).to_have_count(4)
    expect(page.locator("#hand [data-card]").first).to_be_visible()  # his own hand, then

    shown: dict[str, Any] = page.evaluate(SEATS_SHOWN)
    seats = shown["seats"]
    assert seats[0]["name"].startswith(f"{name} (you, Side A"), seats
    for seat in seats:
        # The cards held: the number beside the card back on the screen, its words for a
        # screen reader only; each seat whole on the screen.
        number = re.match(r'"(\d+)"', seat["number"])
        assert number and seat["whole"] and not seat["wordsShown"], seat
        assert seat["words"] == f"{number[1]} cards in hand", seat
    said = [page.locator(f'#deal li[data-seat="{n}"]').aria_snapshot() for n in range(len(seats))]
    for seat, spoken in zip(seats, said, strict=True):
        assert f"paragraph: {seat['words']}" in spoken, spoken
    assert len([seat for seat in seats if seat["turn"]]) == 1, seats  # whose turn, in words

    # A line a seat: the name, whose turn and the count side by side (his long name may take
    # two lines, the others one).
    for pieces in page.evaluate(SEAT_PIECES):
        assert side_by_side(pieces["name"], pieces["count"]), pieces
        if pieces["turn"]:
            assert side_by_side(pieces["name"], pieces["turn"]), pieces
        if pieces["seat"] != "0":
            assert pieces["height"] < 2 * pieces["line"], pieces
    screenshot(page, f"phone-replay-seats-{phone}")
    assert page.evaluate(TEXT_PAST_ITS_BOX) == []
    assert page.evaluate("() => document.scrollingElement.scrollWidth <= innerWidth")
