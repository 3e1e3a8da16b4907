"""What a player met on the lobby (docs/web.md), in Chromium: a click lost to the poll, which
redrew every card every 3 s (a button detached between press and release does nothing); the
create form's player count not fitting the entry (refused, R-SEAT-1); and on a phone a
refusal shown at the top of the page, far above the button tapped."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import ElementHandle, Page, expect

from tests.support.http import open_table, register_player
from tests.web.conftest import DESKTOP, PHONES, TOUCH, NewContext, screenshot
from tests.web.pages import LIVE_MS, open_lobby, sign_up, signed_in

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

#: In the page: is the element in the page and wholly inside the window?
IN_SIGHT = """node => {
  const box = node.getBoundingClientRect();
  return node.isConnected && box.height > 0 && box.top >= 0 && box.bottom <= innerHeight;
}"""


def polls(page: Page, count: int) -> None:
    """Waits for ``count`` more of the lobby's polls to be drawn (``body[data-refreshed]``
    counts them): a fixed wait after the answers could pass before the page drew them, and
    a check of what a poll keeps would then test nothing."""
    drawn = "() => Number(document.body.dataset.refreshed ?? 0)"
    page.wait_for_function(
        f"n => ({drawn})() >= n", arg=page.evaluate(drawn) + count, timeout=LIVE_MS
    )


def marked(handle: ElementHandle) -> bool:
    """Whether the very element marked earlier is still in the page, marked."""
    return bool(handle.evaluate("node => node.isConnected && node.marked === true"))


def test_a_poll_keeps_the_cards_whose_tables_did_not_change(
    new_context: NewContext, http: httpx.Client
) -> None:
    stopped = open_table(http, ("kim", "lou"))
    response = http.post(f"/tables/{stopped.table}/stop", headers=stopped.headers["kim"])
    assert response.status_code == 200, response.text
    playing = open_table(http, ("max", "ned"))
    waiting = open_table(http, ("oli", "pat"), start=False)

    page, _ = open_lobby(new_context(viewport=DESKTOP))
    results = page.locator(f"#finished-tables [data-table='{stopped.table}']").get_by_role(
        "link", name="See the results"
    )
    watch = page.locator(f"#playing-tables [data-table='{playing.table}']").get_by_role(
        "link", name="Watch"
    )
    open_card = page.locator(f"#open-tables [data-table='{waiting.table}']")
    expect(results).to_be_visible(timeout=LIVE_MS)
    expect(watch).to_be_visible(timeout=LIVE_MS)
    expect(open_card).to_contain_text("Seat 2: pat", timeout=LIVE_MS)
    handles = [node.element_handle() for node in (results, watch, open_card)]
    for handle in handles:
        handle.evaluate("node => { node.marked = true; }")

    polls(page, 2)
    assert [marked(handle) for handle in handles] == [True, True, True]

    # A table that changed is drawn anew, the others stay as they were.
    response = http.post(f"/tables/{waiting.table}/start", headers=waiting.headers["oli"])
    assert response.status_code == 201, response.text
    started = page.locator(f"#playing-tables [data-table='{waiting.table}']")
    expect(started).to_be_visible(timeout=LIVE_MS)
    expect(open_card).to_have_count(0)
    assert [marked(handle) for handle in handles[:2]] == [True, True]

    results.click()
    expect(page).to_have_url(re.compile(f"/tables/{stopped.table}$"))


def test_the_player_count_follows_the_entry(new_context: NewContext) -> None:
    page, _ = open_lobby(new_context(viewport=DESKTOP))
    # No empty line under the header: the first panel right below it (main's padding).
    gap = page.evaluate(
        """() => document.querySelector("#account").getBoundingClientRect().top
        - document.querySelector("header").getBoundingClientRect().bottom"""
    )
    assert gap <= 20, gap
    sign_up(page, "quin")
    entry, players = page.get_by_label("Entry"), page.get_by_label("Players")
    choices = "node => [...node.options].map((option) => option.value)"
    players.select_option("2")
    entry.select_option("extra_six")
    assert (players.evaluate(choices), players.input_value()) == (["6"], "6")
    page.get_by_role("button", name="Create the table").click()
    expect(page.get_by_role("status")).to_contain_text("Table created")
    expect(page.get_by_role("alert")).to_be_hidden()
    card = page.get_by_role("article", name="Extra six table of 6, host quin")
    expect(card).to_be_visible(timeout=LIVE_MS)

    entry.select_option("modern_american")
    assert (players.evaluate(choices), players.input_value()) == (["4"], "4")
    entry.select_option("classic")
    assert players.evaluate(choices) == ["2", "3", "4", "5", "6"]
    assert players.input_value() == "4"  # the count chosen, which classic allows
    players.select_option("3")
    entry.select_option("ponytail")
    assert (players.evaluate(choices), players.input_value()) == (["4"], "4")
    screenshot(page, "lobby-entry-players-desktop")
    page.get_by_role("button", name="Play now").click()  # a practice game against bots
    expect(page).to_have_url(re.compile(r"/tables/[0-9a-f-]+$"))


def test_a_refusal_on_a_phone_is_shown_where_the_player_tapped(
    new_context: NewContext, http: httpx.Client
) -> None:
    names = ["rae", "sid", "tom", "ulf", "val"]
    headers = open_table(http, names, start=False).headers  # classic of 5: teams to choose

    phone, _ = open_lobby(new_context(viewport=PHONES["upright"], **TOUCH))
    phone.get_by_label("Your token", exact=True).fill(headers["rae"]["Authorization"].split()[1])
    phone.get_by_role("button", name="Sign in", exact=True).tap()
    card = phone.get_by_role("article", name="Classic table of 5, host rae")
    expect(card.get_by_role("group", name="Teams")).to_be_visible(timeout=LIVE_MS)
    # Teams of a shape the entry does not allow (R-SEAT-2): refused, in the card tapped.
    for seat in range(5):
        card.get_by_label(f"Seat {seat + 1} ({names[seat]})").select_option("A")
    card.get_by_role("button", name="Choose these teams").tap()
    alert = card.get_by_role("alert")
    expect(alert).to_contain_text("(R-SEAT-2)")
    phone.wait_for_function(IN_SIGHT, arg=alert.element_handle())
    screenshot(phone, "lobby-refusal-card-phone", full_page=False)
    polls(phone, 1)
    expect(alert).to_contain_text("(R-SEAT-2)")  # still there after a poll

    # A wrong invitation: the refusal under the form's button, in sight.
    phone.get_by_label("Invitation link you received").fill("not an invitation")
    phone.get_by_role("button", name="Join", exact=True).tap()
    alert = phone.locator("#join-private-form").get_by_role("alert")
    expect(alert).to_be_visible()
    phone.wait_for_function(IN_SIGHT, arg=alert.element_handle())
    expect(card.get_by_role("alert")).to_have_count(0)  # one refusal shown at a time
    screenshot(phone, "lobby-refusal-form-phone", full_page=False)


def test_a_success_on_a_phone_is_shown_where_the_player_tapped(
    new_context: NewContext, http: httpx.Client
) -> None:
    """ "You sit in seat 1." and "Table created." used to show at the top of the page, out of
    sight of a player who tapped far down it: now next to the control tapped, as a refusal."""
    for index in range(6):  # enough open tables for the last one to be far down
        host = register_player(http, f"far{index}")
        body = {"entry": "classic", "players": 2}
        assert http.post("/tables", json=body, headers=host).status_code == 201

    phone, _ = open_lobby(new_context(viewport=PHONES["upright"], **TOUCH))
    sign_up(phone, "wes")
    card = phone.get_by_role("article", name="Classic table of 2, host far0")
    take = card.get_by_role("button", name="Take a seat")
    expect(take).to_be_visible(timeout=LIVE_MS)
    take.scroll_into_view_if_needed()
    take.tap()
    status = card.get_by_role("status")
    expect(status).to_have_text("You sit in seat 1.")
    phone.wait_for_function(IN_SIGHT, arg=status.element_handle())
    expect(card).to_contain_text("Seat 1: wes (you)")
    screenshot(phone, "lobby-seated-phone", full_page=False)
    polls(phone, 1)
    expect(card.get_by_role("status")).to_have_text("You sit in seat 1.")  # after a poll too

    # A table created: said under the button, in sight, and nowhere else.
    create = phone.get_by_role("button", name="Create the table")
    create.evaluate("node => node.scrollIntoView({ block: 'end' })")
    create.tap()
    status = phone.locator("#create-form").get_by_role("status")
    expect(status).to_contain_text("Table created.")
    phone.wait_for_function(IN_SIGHT, arg=status.element_handle())
    expect(phone.get_by_role("status")).to_have_count(1)
    screenshot(phone, "lobby-created-phone", full_page=False)


#: In the page: for each seat of the card that has a side, whether "Side X" shares a line with
#: the rest of the seat's text (the tops of the text's lines, measured with ranges).
SIDE_ON_A_LINE_OF_ITS_OWN = """card => [...card.querySelectorAll("li.seat")].flatMap((seat) => {
  const walker = document.createTreeWalker(seat, NodeFilter.SHOW_TEXT);
  const before = document.createRange();
  before.setStart(seat, 0);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const at = node.data.indexOf("Side ");
    if (at < 0) continue;
    const side = document.createRange();
    side.setStart(node, at);
    side.setEnd(node, node.data.length);
    before.setEnd(node, at);
    const tops = [...before.getClientRects()].filter((box) => box.width > 0).map((box) => box.top);
    const top = side.getClientRects()[0].top;
    return [[seat.textContent, !tops.some((line) => Math.abs(line - top) < 4)]];
  }
  return [];
})"""


def test_on_a_desktop_a_seat_s_side_shares_a_line_with_its_name(
    new_context: NewContext, http: httpx.Client
) -> None:
    headers = register_player(http, "yasmin")
    practice = {"entry": "classic", "players": 4, "bot": "strong"}
    assert http.post("/tables/practice", json=practice, headers=headers).status_code == 201
    page = signed_in(open_lobby(new_context(viewport=DESKTOP))[0], headers)
    card = page.get_by_role("article", name="Classic table of 4, host yasmin")
    expect(card).to_contain_text("Seat 1: yasmin (you) · Side A", timeout=LIVE_MS)
    seats = page.locator("#playing-tables").evaluate(
        f"list => ({SIDE_ON_A_LINE_OF_ITS_OWN})(list.querySelector('article'))"
    )
    # The space after "Seat 1:" is a no-break one (lobby.js: the label stays with the name).
    assert [text.replace("\xa0", " ") for text, _ in seats] == [
        "Seat 1: yasmin (you) · Side A",
        "Seat 2: bot:strong:1 (bot, strong) · Side B",
        "Seat 3: bot:strong:2 (bot, strong) · Side A",
        "Seat 4: bot:strong:3 (bot, strong) · Side B",
    ]
    assert not any(alone for _, alone in seats), seats
    card.scroll_into_view_if_needed()
    screenshot(page, "lobby-sides-desktop", full_page=False)


def test_on_a_phone_a_player_finds_his_game_in_play_at_the_top_of_the_lobby(
    new_context: NewContext, http: httpx.Client
) -> None:
    """Back in the lobby from his table, a player on a phone had to scroll past the forms to the
    tables in play, far down the page, to find his game again: it is linked at the top."""
    headers = register_player(http, "zed")
    practice = {"entry": "modern_american", "players": 4, "bot": "basic"}
    started = http.post("/tables/practice", json=practice, headers=headers)
    assert started.status_code == 201, started.text
    table = started.json()["table"]
    phone = signed_in(open_lobby(new_context(viewport=PHONES["upright"], **TOUCH))[0], headers)
    mine = phone.get_by_role("region", name="Your games in play")
    link = mine.get_by_role("link", name="Modern American table of 4, host zed")
    expect(link).to_be_visible(timeout=LIVE_MS)
    phone.evaluate("() => scrollTo(0, 0)")
    phone.wait_for_function(IN_SIGHT, arg=link.element_handle())
    screenshot(phone, "lobby-my-games-phone", full_page=False)
    # Only his own games: another's table in play is not there.
    other = open_table(http, ("amy-other", "ben-other"))
    expect(phone.locator(f"#playing-tables [data-table='{other.table}']")).to_be_attached(
        timeout=LIVE_MS
    )
    expect(mine.get_by_role("link")).to_have_count(1)
    link.tap()
    expect(phone).to_have_url(re.compile(f"/tables/{table}$"))
