"""Absent players on the table page, in a real browser (docs/tables.md, docs/web.md): at a
table of two, dot leaves his seat; the page says the basic bot plays it for him and shows no
hand, the bot plays his turns (the server's bot runner), and he takes the seat back and plays
again; the words of the seat's changes are in the log. The other player, eli, plays from his
move menu over HTTP, so the deal waits for him and cannot end while dot is away."""

from __future__ import annotations

import random
import re

import httpx
import pytest
from playwright.sync_api import Page, Route, expect

from tests.support.http import QUICK_MOVES, move_from_menu, open_table, register_player
from tests.web.conftest import NewContext, screenshot
from tests.web.pages import LIVE_MS, in_language, table_page

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

Headers = dict[str, str]


def until(page: Page, done: str, http: httpx.Client, eli: Headers, deal: str) -> None:
    """eli plays on (the bot or dot plays the other seat) until ``done`` is on the page."""
    rng = random.Random(3)
    for _ in range(300):
        if page.locator(done).count():
            return
        if not move_from_menu(http, eli, deal, rng, QUICK_MOVES):
            page.wait_for_timeout(100)
    raise AssertionError(f"{done} never showed")


def test_a_player_leaves_his_seat_and_takes_it_back(
    new_context: NewContext, http: httpx.Client
) -> None:
    game = open_table(http, ("dot", "eli"))
    dot, eli = (game.headers[name] for name in game.names)
    table, deal = game.table, game.deal_id
    page = table_page(new_context(), dot, table)
    expect(page.locator("#deal .deal")).to_be_attached(timeout=LIVE_MS)

    page.locator("#leave-seat").click()
    page.locator("#leave-confirm").click()  # asked twice (tests/web/test_leave_seat.py)
    panel = page.locator("#seat-panel")
    expect(panel.locator("li[data-seat-play='0'][data-away='true']")).to_contain_text(
        "away: the basic bot (for dot) plays", timeout=LIVE_MS
    )
    expect(page.locator("#take-back")).to_be_visible()
    expect(page.locator("#status")).to_have_text(
        "You are away: the bot plays your seat until you take it back (Who plays).",
        timeout=LIVE_MS,
    )
    expect(page.locator("#hand [data-card]")).to_have_count(0, timeout=LIVE_MS)  # no hand
    changed = page.locator("#log li[data-kind=SeatPlayerChanged]")
    expect(changed).to_contain_text(
        "dot is away: the basic bot (for dot) plays the seat until he is back.", timeout=LIVE_MS
    )
    assert http.get(f"/tables/{table}").json()["playing"][0]["player"] == "bot:basic:0:for:dot"
    # The bot plays dot's turn: a discard by dot's seat after the change.
    until(
        page, "#log li[data-kind=SeatPlayerChanged] ~ li[data-kind=CardDiscarded]", http, eli, deal
    )
    # The stream follows the seat: what the bot draws for dot is not shown to him.
    drawn = page.locator("#log li[data-kind=SeatPlayerChanged] ~ li[data-kind=CardsDrawn]")
    for line in drawn.all_inner_texts():
        if line.startswith("dot"):
            assert re.search(r"drew (a card|\d+ cards)", line), line
    screenshot(page, "table-away")
    # His page opened while he is away asks for no move menu (it would be refused, 403).
    again = page.context.new_page()
    refused: list[str] = []
    again.on("response", lambda r: refused.append(r.url) if r.status >= 400 else None)
    again.goto(f"/tables/{table}")
    expect(again.locator("#deal .deal")).to_be_attached(timeout=LIVE_MS)
    expect(again.locator("#take-back")).to_be_visible()
    again.wait_for_load_state("networkidle")
    assert refused == [], refused
    again.close()

    page.locator("#take-back").click()
    expect(page.locator("#leave-seat")).to_be_visible(timeout=LIVE_MS)
    expect(page.locator("#hand [data-card]").first).to_be_visible(timeout=LIVE_MS)
    expect(changed.last).to_contain_text("dot is back and plays his seat again.", timeout=LIVE_MS)
    until(page, "#moves [data-move]", http, eli, deal)
    expect(page.locator("#moves [data-move]").first).to_be_visible()


def test_the_host_s_typing_in_the_give_field_survives_the_game_going_on(
    new_context: NewContext, http: httpx.Client
) -> None:
    """The seat panel is drawn again on every event of the deal: the name the host is typing
    to give a vacant seat, and his focus, stay."""
    game = open_table(http, ("gil", "hal", "ida"))
    gil, hal, ida = (game.headers[name] for name in game.names)
    table = game.table
    register_player(http, "jon")
    assert http.post(f"/tables/{table}/leave", headers=hal).is_success
    page = table_page(new_context(), gil, table)
    expect(page.locator("#deal .deal")).to_be_attached(timeout=LIVE_MS)
    field = page.locator("#give-player-1")
    field.click()
    page.keyboard.type("jo")
    # ida leaves too: the table and the deal change (the bot then plays her seat as well).
    assert http.post(f"/tables/{table}/leave", headers=ida).is_success
    expect(page.locator("li[data-seat-play='2'][data-away='true']")).to_be_visible(timeout=LIVE_MS)
    expect(field).to_have_value("jo")
    expect(field).to_be_focused()
    page.keyboard.type("n")
    page.locator("#give-seat-1").click()
    expect(page.locator("li[data-seat-play='1']")).to_contain_text("jon", timeout=LIVE_MS)
    assert http.get(f"/tables/{table}").json()["playing"][1]["player"] == "jon"


def test_the_go_out_question_names_who_plays_the_partner_s_seat_now(
    new_context: NewContext, http: httpx.Client
) -> None:
    """kim's turn, his "Ask <partner>: may I go out?" on screen: his partner lou leaves, and
    the host (kim) gives lou's seat to max. The button says each time who plays the seat now
    (it used to go on naming lou, who no longer had the seat, when the table came after the
    deal's event)."""
    game = open_table(http, ("kim", "mo", "lou", "ned"))  # lou in seat 2: kim's partner
    kim, mo, lou, ned = (game.headers[name] for name in game.names)
    table, deal = game.table, game.deal_id
    register_player(http, "max")
    page = table_page(new_context(), kim, table)
    rng = random.Random(5)
    for _ in range(300):  # the others play until kim has drawn (the question is offered then)
        menu = http.get(f"/deals/{deal}/moves", headers=kim).json()
        if any(move["type"] == "ask_partner" for move in menu["moves"]):
            break
        if not any(
            move_from_menu(http, who, deal, rng, QUICK_MOVES) for who in (kim, mo, lou, ned)
        ):
            page.wait_for_timeout(100)
    ask = page.locator("#moves [data-move=ask_partner]")
    expect(ask).to_have_text("Ask lou: may I go out?", timeout=LIVE_MS)

    assert http.post(f"/tables/{table}/leave", headers=lou).is_success
    expect(page.locator("li[data-seat-play='2'][data-away='true']")).to_be_visible(timeout=LIVE_MS)
    expect(ask).to_have_text("Ask lou (away: the basic bot (for lou) plays): may I go out?")
    # The page learns the change from two streams: the deal's event comes first here (the
    # table's reads are held back until the move panel has been drawn again for it).
    held: list[Route] = []
    page.route(
        f"**/tables/{table}", lambda route: route.continue_() if held else held.append(route)
    )
    drawn = page.locator("#move-buttons").get_attribute("data-key")
    given = http.post(f"/tables/{table}/seats/2/give", json={"player": "max"}, headers=kim)
    assert given.is_success, given.text
    expect(page.locator("#log li[data-kind=SeatPlayerChanged]").last).to_contain_text("max")
    expect(page.locator("#move-buttons")).not_to_have_attribute("data-key", drawn or "")
    held[0].continue_()  # the first read held back; the next ones go through
    expect(page.locator("li[data-seat-play='2']")).to_contain_text("max", timeout=LIVE_MS)
    expect(ask).to_have_text("Ask max: may I go out?")
    screenshot(page, "table-ask-given-partner")


@pytest.mark.parametrize(("width", "lang"), [(1280, "en"), (360, "ru")])
def test_the_host_s_give_a_seat_reads_as_one_group(
    new_context: NewContext, http: httpx.Client, width: int, lang: str
) -> None:
    """The host's "Give seat 2 to": its label sat beside "Leave my seat" and its field alone
    on a line under them; now the label is over its field, the button on the field's line,
    the group under the host's own button (a desktop, a 360 px phone in Russian)."""
    game = open_table(http, (f"kit{width}", f"lev{width}"))
    kit, lev = (game.headers[name] for name in game.names)
    table = game.table
    assert http.post(f"/tables/{table}/leave", headers=lev).is_success
    page = table_page(new_context(viewport={"width": width, "height": 800}), kit, table)
    in_language(page, lang)
    field = page.locator("#give-player-1")
    expect(field).to_be_visible(timeout=LIVE_MS)
    label = page.locator("label[for='give-player-1']").bounding_box()
    box = field.bounding_box()
    button = page.locator("#give-seat-1").bounding_box()
    leave = page.locator("#leave-seat").bounding_box()
    assert label and box and button and leave
    assert label["y"] + label["height"] <= box["y"] + 1  # the label over its field
    assert abs(label["x"] - box["x"]) < 2
    assert button["y"] < box["y"] + box["height"] and box["y"] < button["y"] + button["height"]
    assert button["x"] >= box["x"] + box["width"] - 1  # beside it, on its line
    assert leave["y"] + leave["height"] <= label["y"] + 1  # under the host's own button
    screenshot(page, f"table-give-seat-{lang}-{width}", full_page=False)
