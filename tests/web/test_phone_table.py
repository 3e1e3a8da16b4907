"""The table page on a phone (docs/web.md, "Layout"), as a player met it: "Who plays" above the
deal took a quarter of the screen, and a group of his hand that did not fit at the end of a
line went whole to the next, leaving a wide gap where cards would have fitted."""

from __future__ import annotations

from collections.abc import Iterator

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
    yield from stacked_decks_server(tmp_path_factory, "phone-table")


#: In the page: the seats of "Who plays" as the screen shows them: the panel's height, and
#: for each seat its text and whether it is whole inside the panel and the screen.
SEATS_SHOWN = """() => {
  const panel = document.getElementById("seat-panel").getBoundingClientRect();
  const seats = [...document.querySelectorAll("#seat-panel li[data-seat-play]")].map((node) => {
    const box = node.getBoundingClientRect();
    const whole = box.height > 0 && box.left >= panel.left && box.right <= panel.right
      && box.top >= panel.top && box.bottom <= panel.bottom && box.right <= innerWidth;
    return [node.textContent, whole];
  });
  return { height: panel.height, seats };
}"""


def test_who_plays_is_compact_on_a_phone_and_says_all_it_said(
    new_context: NewContext, http: httpx.Client
) -> None:
    headers = register_player(http, "ivy")
    table, _ = start_practice(http, headers, players=4, turn_seconds=120)
    page = table_page(new_context(viewport=PHONES["upright"], **TOUCH), headers, table)
    panel = page.locator("#seat-panel")
    expect(panel.locator("li[data-seat-play]")).to_have_count(4)
    expect(page.locator("#deal li[data-seat]")).to_have_count(4)

    shown = page.evaluate(SEATS_SHOWN)
    assert [text for text, _ in shown["seats"]] == [
        "Seat 1: ivy",
        "Seat 2: bot:basic:1 (bot, basic)",
        "Seat 3: bot:basic:2 (bot, basic)",
        "Seat 4: bot:basic:3 (bot, basic)",
    ]
    assert all(whole for _, whole in shown["seats"]), shown
    # It took 203 px of the 844 (a heading, a line per seat, the button under them).
    assert shown["height"] <= 130, shown
    expect(panel.get_by_role("button", name="Leave my seat")).to_be_in_viewport()
    # Whose turn and the clock are still said on the screen, beside it.
    expect(page.locator('#deal li[data-seat][data-turn="true"]')).to_be_in_viewport()
    expect(page.locator("#clock")).to_be_visible()
    screenshot(page, "phone-who-plays", full_page=False)

    # Asked to confirm leaving, the question and its answers are whole under the seats.
    panel.get_by_role("button", name="Leave my seat").tap()
    no = panel.locator("#leave-cancel")
    expect(no).to_be_in_viewport()
    assert page.evaluate("() => document.scrollingElement.scrollWidth <= innerWidth")
    screenshot(page, "phone-who-plays-leaving", full_page=False)
    no.tap()
    expect(panel.get_by_role("button", name="Leave my seat")).to_be_visible()


#: A deal of two where bob (seat 1, who cuts and plays first) holds many groups: one card of
#: some ranks, five queens, three tens (his hand after the draw: 17 cards).
MANY_GROUPS = deck_for(
    "classic",
    2,
    0,
    50,
    {
        0: [
            "AS/1",
            "AH/1",
            "AD/1",
            "7S/1",
            "7H/1",
            "7D/1",
            "4C/1",
            "5C/1",
            "6C/1",
            "8C/1",
            "9C/1",
            "10C/1",
            "JC/1",
            "QC/1",
            "KC/1",
        ],
        1: [
            "AC/1",
            "KS/1",
            "QS/1",
            "QH/1",
            "QD/1",
            "QC/2",
            "QS/2",
            "JS/1",
            "10S/1",
            "10H/1",
            "10D/1",
            "9S/1",
            "8D/1",
            "5S/1",
            "4D/1",
        ],
    },
    ["9H/1", "8H/1", "8S/1"],
)

#: In the page: for each line of the hand but the last, the room left at its end and the
#: width of the first card of the next line (the hand is looked up at once: the deal is drawn
#: anew at each of the page's reads).
LINE_ENDS = """() => {
  const groups = document.querySelector("#hand .groups");
  const right = groups.getBoundingClientRect().right;
  const cards = [...groups.querySelectorAll("[data-card]")].map((node) => node.getBoundingClientRect());
  const ends = [];
  for (let index = 1; index < cards.length; index += 1) {
    if (cards[index].top >= cards[index - 1].bottom) {
      ends.push({ room: right - cards[index - 1].right, next: cards[index].width });
    }
  }
  return ends;
}"""


@pytest.mark.parametrize("held", ["upright", "landscape"])
def test_the_hand_leaves_no_gap_that_would_hold_a_card_on_a_phone(
    new_context: NewContext, http: httpx.Client, held: str
) -> None:
    game = open_table(http, [f"ann-groups-{held}", f"bob-groups-{held}"], start=False)
    game.start({"dealer": 0, "deck": MANY_GROUPS})
    bob = table_page(
        new_context(viewport=PHONES[held], **TOUCH), game.headers[f"bob-groups-{held}"], game.table
    )
    bob.locator("#cut-n").fill("50")  # the deck is stacked for that cut
    bob.locator('#moves [data-move="cut"]').tap()
    bob.locator('#moves [data-move="draw"]').tap()
    expect(bob.locator("#hand button[data-card]")).to_have_count(17)
    expect(bob.locator("#hand .group-label")).to_have_text(
        ["A ×1", "K ×1", "Q ×5", "J ×1", "10 ×3", "9 ×1", "8 ×3", "5 ×1", "4 ×1"]
    )
    ends = bob.evaluate(LINE_ENDS)
    assert ends, "one line only: the hand is not the one meant"
    # At most a card's width and the space after a group: a card would not have fitted there.
    space = 0.7 * 16 + 0.2 * 16
    assert all(end["room"] < end["next"] + space for end in ends), ends
    bob.evaluate("() => document.getElementById('hand').scrollIntoView()")
    screenshot(bob, f"phone-{held}-hand-groups", full_page=False)


#: In the page: the header's height, and each of its controls that is not whole on the screen.
HEADER = """() => {
  const header = document.querySelector("header");
  const off = [...header.querySelectorAll("a, button, select, #who")]
    .filter((node) => !node.hidden)
    .filter((node) => {
      const box = node.getBoundingClientRect();
      return box.height === 0 || box.left < 0 || box.right > innerWidth || box.bottom > header.getBoundingClientRect().bottom;
    })
    .map((node) => node.outerHTML.slice(0, 60));
  return { height: header.getBoundingClientRect().height, off };
}"""


@pytest.mark.parametrize(("held", "most"), [("upright", 145), ("landscape", 85)])
def test_the_header_takes_little_room_on_a_phone_in_every_language(
    new_context: NewContext, http: httpx.Client, held: str, most: int
) -> None:
    headers = register_player(http, f"zoe-header-{held}")
    practice = {"entry": "ponytail", "players": 4, "bot": "basic"}
    started = http.post("/tables/practice", json=practice, headers=headers)
    assert started.status_code == 201, started.text
    page = table_page(new_context(viewport=PHONES[held], **TOUCH), headers, started.json()["table"])
    expect(page.locator("#to-rules")).to_be_visible()
    for lang in ("en", "zh", "ru", "th"):
        page.locator("#lang").select_option(lang)
        expect(page.locator("html")).to_have_attribute("lang", lang)
        header = page.evaluate(HEADER)
        # Upright, it took 187 to 218 px of the 844 (the title, then a line each for who, the
        # buttons, the language menu); on its side 100 to 143 of 390. Every control is still whole on
        # the screen.
        assert header["height"] <= most and not header["off"], (lang, header)
        screenshot(page, f"phone-header-{held}-{lang}", full_page=False)
    page.locator("#lang").select_option("en")
