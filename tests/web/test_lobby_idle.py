"""The lobby's tables in play by their last move (docs/web.md): a live game above, the idle
ones folded under their heading, each card saying how long ago its last move was, in the
reader's language and its plural forms. The server's idle time is 20 s here
(``CANASTA_LOBBY_IDLE_SECONDS``; 30 minutes by default), so a game is started fresh for each
look at a live one."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime, timedelta

import httpx
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Backend, make_backend, running
from tests.support.http import open_table
from tests.web.conftest import PHONES, TOUCH, NewContext, screenshot
from tests.web.pages import LIVE_MS, open_lobby

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`, not `make test-fast`

IDLE_SECONDS = 20


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    extra = {"CANASTA_LOBBY_IDLE_SECONDS": str(IDLE_SECONDS)}
    yield from running(make_backend("sqlite", tmp_path_factory.mktemp("idle"), extra_env=extra))


def idle_ids(http: httpx.Client) -> list[str]:
    response = http.get("/tables", params={"status": "playing", "idle": "true"})
    assert response.status_code == 200, response.text
    return [row["id"] for row in response.json()]


def test_a_live_table_is_listed_above_an_idle_one_folded_under_its_heading(
    new_context: NewContext, http: httpx.Client
) -> None:
    idle = open_table(http, ("ann", "bob"))  # started, then nobody moves
    deadline = time.monotonic() + IDLE_SECONDS + 30
    while idle.table not in idle_ids(http):
        assert time.monotonic() < deadline, "the game never became idle"
        time.sleep(0.5)

    open_table(http, ("cyd", "dee"))  # just started
    page, _ = open_lobby(new_context(viewport={"width": 1280, "height": 800}))
    playing = page.locator("#playing-tables")
    live_card = playing.get_by_role("article", name="Classic table of 2, host cyd")
    expect(live_card).to_contain_text("last move under a minute ago")
    expect(playing).not_to_contain_text("host ann")  # not among the live ones
    summary = page.locator("#idle-summary")
    expect(summary).to_have_text("Idle tables, no move for a while (1)")
    idle_card = page.locator("#idle-tables").get_by_role(
        "article", name="Classic table of 2, host ann"
    )
    expect(idle_card).to_be_hidden()  # folded
    live_box, summary_box = live_card.bounding_box(), summary.bounding_box()
    assert live_box is not None and summary_box is not None
    assert live_box["y"] + live_box["height"] <= summary_box["y"]  # the live one first
    screenshot(page, "lobby-idle-folded-desktop")

    summary.click()
    expect(idle_card).to_be_visible()
    expect(idle_card).to_contain_text("last move")
    expect(idle_card.get_by_role("link", name="Watch")).to_be_visible()
    # Unfolded, it stays so across the lobby's refreshes.
    with page.expect_response(lambda r: "idle=true" in r.url, timeout=LIVE_MS):
        pass
    expect(idle_card).to_be_visible()
    screenshot(page, "lobby-idle-open-desktop")

    # On a phone: a game just started above, the idle one folded; a tap unfolds it.
    fresh = open_table(http, ("eve", "fay"))
    phone, _ = open_lobby(new_context(viewport=PHONES["upright"], **TOUCH))
    fresh_card = phone.locator(f"#playing-tables [data-table='{fresh.table}']")
    expect(fresh_card).to_contain_text("last move under a minute ago")
    folded = phone.locator(f"#idle-tables [data-table='{idle.table}']")
    expect(folded).to_be_hidden()
    screenshot(phone, "lobby-idle-folded-phone")
    phone.locator("#idle-summary").tap()
    expect(folded).to_be_visible()
    screenshot(phone, "lobby-idle-open-phone")

    # In Russian, with the plural forms of the language: the page's clock moved on.
    again = open_table(http, ("gil", "hal"))
    ru, _ = open_lobby(new_context(locale="ru-RU"))
    ru_card = ru.locator(f"#playing-tables [data-table='{again.table}']")
    expect(ru_card).to_contain_text("последний ход меньше минуты назад")
    expect(ru.locator("#idle-summary")).to_contain_text("Столы, где давно нет ходов")
    moved = datetime.fromisoformat(
        ru_card.locator("time.last-move").get_attribute("datetime") or ""
    )
    for later, said in (
        (timedelta(minutes=21, seconds=30), "последний ход 21 минуту назад"),
        (timedelta(minutes=3, seconds=30), "последний ход 3 минуты назад"),
        (timedelta(minutes=11), "последний ход 11 минут назад"),
        (timedelta(hours=2, minutes=5), "последний ход 2 часа назад"),
    ):
        ru.clock.set_fixed_time(moved + later)
        expect(ru_card).to_contain_text(said, timeout=LIVE_MS)  # at the next refresh
    screenshot(ru, "lobby-idle-ru-desktop")
