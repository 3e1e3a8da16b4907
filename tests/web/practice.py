"""A game against a bot played over HTTP beside the pages (the tests that cut, stall or
restart what is between a page and the server: tests/web/test_restart.py,
tests/web/test_silent_drop.py), and the page's log checked against the deal's events."""

from __future__ import annotations

import random
import time
from typing import Any

import httpx
from playwright.sync_api import Page, expect

from tests.support.http import move_from_menu
from tests.web.pages import LIVE_MS


def start_practice(
    http: httpx.Client, headers: dict[str, str], players: int = 2, **more: Any
) -> tuple[str, str]:
    """The player's practice table against the basic bot (classic, two seats unless
    ``players``; ``more``: other fields of the request, such as ``turn_seconds``): its id and
    its first deal's."""
    practice = {"entry": "classic", "players": players, "bot": "basic", **more}
    started = http.post("/tables/practice", json=practice, headers=headers)
    assert started.status_code == 201, started.text
    return started.json()["table"], started.json()["deal"]


def his_draw(page: Page) -> None:
    """Waits for the player's draw (cutting first if the deal asks him to)."""
    cut = page.locator('#moves [data-move="cut"]')
    draw = page.locator('#moves [data-move="draw"]')
    expect(cut.or_(draw)).to_be_visible()
    if cut.is_visible():
        cut.click()
    expect(draw).to_be_visible()


def log_steps(page: Page) -> list[int]:
    steps = page.locator("#log li[data-step]").evaluate_all(
        "items => items.map(item => Number(item.dataset.step))"
    )
    return [int(step) for step in steps]


def play_moves(http: httpx.Client, headers: dict[str, str], deal: str, count: int) -> None:
    """``count`` of the player's moves (the bot plays its turns between them), or fewer if
    the deal ends."""
    rng = random.Random(count)
    deadline = time.monotonic() + 60
    played = 0
    while played < count:
        assert time.monotonic() < deadline, "the bot did not play between the player's moves"
        if http.get(f"/deals/{deal}").json()["phase"] == "over":
            return
        if move_from_menu(http, headers, deal, rng):
            played += 1
        else:
            time.sleep(0.05)


def wait_until_quiet(http: httpx.Client, headers: dict[str, str], deal: str) -> int:
    """The deal's step once the bot has nothing left to do (the player to act, or the end).

    The view is read before and after the menu, and counts only when both reads agree: a
    bot's move between the view and the menu would otherwise give the step before it."""
    deadline = time.monotonic() + 30
    while True:
        view = http.get(f"/deals/{deal}", headers=headers).json()
        menu = http.get(f"/deals/{deal}/moves", headers=headers).json()
        again = http.get(f"/deals/{deal}", headers=headers).json()
        if again["step"] == view["step"] and (view["phase"] == "over" or menu["moves"]):
            return int(view["step"])
        assert time.monotonic() < deadline, "the bot did not play its turn"
        time.sleep(0.05)


def check_log(page: Page, events: list[dict[str, Any]], who: str) -> None:
    """The page's log holds every event its viewer may see, once, in order."""
    expected = [event["step"] for event in events]
    expect(page.locator(f"#log li[data-step='{expected[-1]}']")).to_be_attached(timeout=LIVE_MS)
    assert log_steps(page) == expected, f"{who}'s log: missing or repeated lines"
    expect(page.locator(f"#deal .deal[data-step='{expected[-1]}']")).to_be_attached()
