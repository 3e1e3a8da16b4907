"""A whole game, looked back at once it is over (docs/web.md): a player starts a practice
table against the basic bot and leaves his seat, so that the server's bots play every deal to
the target (the bot that plays for him opens each next deal, docs/tables.md); then the
finished game's pages are read as its players and passers-by read them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Backend
from tests.support.http import register_player
from tests.web.conftest import DESKTOP, PHONES, TOUCH, NewContext, screenshot
from tests.web.pages import LIVE_MS, in_language, open_lobby, open_page, sign_in
from tests.web.practice import start_practice

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`


@pytest.fixture(scope="module")
def finished(web_server: Backend) -> Iterator[dict[str, Any]]:
    """A classic game of two played by the bots to its end: the table's view."""
    with httpx.Client(base_url=web_server.server.url, timeout=10) as http:
        headers = register_player(http, "wanda")
        table, _ = start_practice(http, headers)
        left = http.post(f"/tables/{table}/leave", headers=headers)
        assert left.status_code == 200, left.text
        deadline = time.monotonic() + 300
        while (view := http.get(f"/tables/{table}").json())["status"] == "playing":
            assert time.monotonic() < deadline, "the bots did not finish the game"
            time.sleep(0.5)
        assert view["status"] == "finished", view
        yield {**view, "headers": headers}


def test_the_table_page_ends_with_its_log(
    new_context: NewContext, finished: dict[str, Any]
) -> None:
    """The log of a long deal scrolls inside its box: the page ends there. The cards' spoken
    names in the log's lines hung below the box (absolute, outside the box that scrolls), and
    a phone's page went on for thousands of empty pixels past the log."""
    page = open_page(new_context(PHONES["upright"], **TOUCH), f"/tables/{finished['id']}")
    expect(page.locator("#winner")).to_be_visible()
    log = page.locator("#log")
    expect(log.locator("li").nth(40)).to_be_attached()
    assert log.evaluate("node => node.scrollHeight > node.clientHeight"), "a short log"
    page_end = page.evaluate("document.documentElement.scrollHeight")
    content_end = page.evaluate(
        "Math.max(...[...document.body.children].map("
        "node => node.getBoundingClientRect().bottom + scrollY))"
    )
    screenshot(page, "whole-game-table-phone")
    assert page_end <= content_end + 1, (page_end, content_end)


def test_a_spectator_reads_who_won_at_the_top_of_his_phone(
    new_context: NewContext, finished: dict[str, Any]
) -> None:
    """A spectator who stayed to the end reads the winner in the status line at the top of his
    screen: it said "The game is over." alone, and named the winner only in the game panel,
    some 2,000 px down a phone's page (a player has it in his move panel)."""
    (winner,) = finished["winners"]
    page = open_page(new_context(PHONES["upright"], **TOUCH), f"/tables/{finished['id']}")
    status = page.locator("#status")
    expect(status).to_contain_text(f"The game is over. Winner: Side {winner} (")
    assert status.evaluate("node => node.getBoundingClientRect().bottom <= innerHeight")
    in_language(page, "th")
    expect(status).to_contain_text(f"ผู้ชนะ: ทีม {winner} (")
    screenshot(page, "whole-game-spectator-end-th", full_page=False)


#: In the page: each of wanda's seats on the finished game's card, and how many lines it takes.
SEAT_LINES = """id => [...document.querySelectorAll(
  `#finished-tables article[data-table='${id}'] li.seat`)].filter(node => node.textContent.includes("wanda"))
  .map(node => [node.textContent,
    node.getBoundingClientRect().height / parseFloat(getComputedStyle(node).lineHeight)])"""


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_lobby_says_who_won_a_finished_game(
    new_context: NewContext, finished: dict[str, Any], lang: str
) -> None:
    """A finished game's card in "Games played" names its winner as the table page does; it
    showed the totals alone. On a small phone, in Russian, the line leaves the card's seats as
    they were (a person's seat on two lines at most): a term "Победитель" beside "Места" had widened the terms'
    column, and every seat took three ("Место / 1: wanda / · Команда A")."""
    (winner,) = finished["winners"]
    names = ", ".join(
        name if finished["bots"][seat] is None else f"{name} (bot, basic)"
        for seat, name in enumerate(finished["seats"])
        if seat in finished["sides"][winner]
    )
    viewport, more = (DESKTOP, {}) if lang == "en" else (PHONES["small"], TOUCH)
    page = in_language(open_lobby(new_context(viewport, **more))[0], lang)
    card = page.locator(f"#finished-tables article[data-table='{finished['id']}']")
    expect(card).to_be_visible(timeout=LIVE_MS)
    won = card.locator("p.winners")
    if lang == "en":
        expect(won).to_have_text(f"Won by Side {winner} ({names})")
    else:
        expect(won).to_contain_text(f"Победитель: Команда {winner} (")
    # Found and measured in one step: the poll redraws the card, and a seat found before it
    # may be gone (0 x 0, no line height: NaN).
    seats = page.evaluate(SEAT_LINES, finished["id"])
    assert seats, "no seat of wanda's"
    assert [(text, lines) for text, lines in seats if not lines < 2.5] == []
    # In one step: the lobby draws its cards anew when it reads the tables again, and
    # Playwright's scroll waits for a stable element, which a redraw may detach meanwhile.
    won.evaluate("node => node.scrollIntoView({block: 'nearest'})")
    screenshot(page, f"whole-game-lobby-{lang}", full_page=False)


def test_a_ponytail_game_says_it_ends_after_four_deals(
    new_context: NewContext, web_server: Backend, finished: dict[str, Any]
) -> None:
    """A ponytail game ends after its fourth deal even short of its target (R-PT-GAME-1): the
    score table's caption says so (the table's ``max_deals``). It named the target alone, and a
    game ended at 44250 to 49820 under "target 50000", with nothing to say why."""
    with httpx.Client(base_url=web_server.server.url, timeout=10) as http:
        table, _ = start_practice(http, register_player(http, "pia"), 4, entry="ponytail")
        assert http.get(f"/tables/{table}").json()["max_deals"] == 4
        assert http.get(f"/tables/{finished['id']}").json()["max_deals"] is None
    page = open_page(new_context(), f"/tables/{table}")
    caption = page.locator("#totals-table caption")
    expect(caption).to_have_text("Scores by deal (target 50000, at most 4 deals)")
    in_language(page, "zh")
    expect(caption).to_have_text("各局得分（目标 50000，最多 4 局）")
    # The lobby's card says it too ("Tables in play": the practice game goes on).
    lobby = open_lobby(new_context())[0]
    card = lobby.locator(f"#playing-tables article[data-table='{table}']")
    expect(card.locator(".meta")).to_contain_text("target 50000 or 4 deals", timeout=LIVE_MS)
    classic = open_page(new_context(), f"/tables/{finished['id']}")
    # Its rows are each deal's score, the total under them: "Running totals" above them read
    # as if a row's -370 were the side's total after that deal.
    expect(classic.locator("#totals-table caption")).to_have_text("Scores by deal (target 5000)")


def test_the_rematch_says_whose_start_it_waits_for(
    new_context: NewContext, web_server: Backend, finished: dict[str, Any]
) -> None:
    """The rematch opens with every seat taken: its page says that only the host's start is
    awaited, and by whom, as the end of a deal says who opens the next; it said "The game has
    not started yet." alone, to the players who had just pressed "Play again"."""
    with httpx.Client(base_url=web_server.server.url, timeout=10) as http:
        opened = http.post(f"/tables/{finished['id']}/rematch", headers=finished["headers"])
        assert opened.status_code in (200, 201), opened.text
        rematch = opened.json()["id"]
        assert None not in http.get(f"/tables/{rematch}").json()["seats"]
    watcher = open_page(new_context(PHONES["upright"], **TOUCH), f"/tables/{rematch}")
    expect(watcher.locator("#status")).to_have_text(
        "Every seat is taken: waiting for wanda to start the game."
    )
    in_language(watcher, "ru")
    expect(watcher.locator("#status")).to_have_text(
        "Все места заняты: ждём, пока wanda начнёт игру."
    )
    screenshot(watcher, "whole-game-rematch-waiting-ru", full_page=False)
    host = new_context()
    sign_in(host, finished["headers"])
    page = open_page(host, f"/tables/{rematch}")
    expect(page.locator("#status")).to_have_text(
        "Every seat is taken: start the game when the players are ready."
    )
    expect(page.locator("#start-game")).to_be_visible()
