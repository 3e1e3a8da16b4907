""" "Leave my seat" is asked twice (docs/web.md, "Absent players"): one tap on it, easy to
make by mistake on a phone where it sits among other buttons, gave the seat away mid-game (the
bot plays it, and the host may give it to somebody else). Now a tap asks "Leave your seat?",
in the page's own style (the question and its two buttons in place of the button, as the
host's "Stop the game" does), in each of the page's languages; a second tap where the first
fell lands on the question, not on "yes"; "No, stay" and Escape cancel; "Yes, leave" leaves.
Played by tapping on a phone and by keyboard alone."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.http import register_player
from tests.web.conftest import PHONES, TOUCH, NewContext, screenshot
from tests.web.pages import LIVE_MS, table_page

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

#: A practice game: the host against a bot, nobody else plays (the bots would finish it).
QUESTION = (
    "Leave your seat? Nobody else plays at this table: the bots play on without you, deal "
    "after deal, to the end of the game, within seconds, unless you take your seat back."
)


def _leaves(page: Page) -> list[str]:
    """The page's requests to leave a seat, from now on."""
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.url.endswith("/leave") else None)
    return sent


def test_leaving_a_seat_asks_first_by_tap_and_by_keyboard(
    new_context: NewContext, http: httpx.Client
) -> None:
    ann = register_player(http, "ann")
    practice = {"entry": "classic", "players": 2, "bot": "basic"}
    table = http.post("/tables/practice", json=practice, headers=ann).json()["table"]
    page = table_page(new_context(viewport=PHONES["upright"], **TOUCH), ann, table)
    sent = _leaves(page)
    expect(page.locator("#deal .deal")).to_be_attached(timeout=LIVE_MS)

    def seated() -> bool:
        return not http.get(f"/tables/{table}").json()["playing"][0]["away"]

    # One tap, and a second one where it fell: the question, and still seated.
    leave = page.locator("#leave-seat")
    box = leave.bounding_box()
    assert box is not None
    leave.tap()
    question = page.locator("#leave-confirm-question")
    expect(question).to_have_text(QUESTION)
    page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(page.locator("#leave-confirm")).to_have_text("Yes, leave")
    expect(page.locator("#leave-cancel")).to_have_text("No, stay")
    screenshot(page, "phone-leave-seat-asked", full_page=False)
    # In Chinese too (the question stays open across the change of language).
    page.locator("#lang").select_option("zh")
    expect(question).to_have_text(
        "离开你的座位？这张桌子没有其他人在玩：机器人会在几秒钟内一局接一局地把整场游戏打完，"
        "除非你回到座位。"
    )
    expect(page.locator("#leave-confirm")).to_have_text("是的，离开")
    page.locator("#lang").select_option("en")
    expect(question).to_have_text(QUESTION)
    # "No, stay": nothing sent, the button is back.
    page.locator("#leave-cancel").tap()
    expect(question).to_have_count(0)
    expect(leave).to_be_visible()
    page.wait_for_timeout(500)
    assert sent == [] and seated()

    # By keyboard: Enter asks, with the focus on the safe answer; Escape cancels.
    leave.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#leave-cancel")).to_be_focused()
    expect(page.locator("#leave-cancel")).to_have_attribute(
        "aria-describedby", "leave-confirm-question"
    )
    page.keyboard.press("Escape")
    expect(question).to_have_count(0)
    expect(leave).to_be_focused()
    page.keyboard.press("Enter")
    page.keyboard.press("Shift+Tab")
    expect(page.locator("#leave-confirm")).to_be_focused()
    assert sent == [] and seated()
    # "Yes, leave": the seat is left, the bot plays it.
    page.keyboard.press("Enter")
    expect(page.locator("#take-back")).to_be_visible(timeout=LIVE_MS)
    expect(page.locator("#status")).to_have_text(
        "You are away: the bot plays your seat until you take it back (Who plays).",
        timeout=LIVE_MS,
    )
    assert len(sent) == 1 and not seated()
    screenshot(page, "phone-leave-seat-left", full_page=False)
