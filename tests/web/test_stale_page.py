"""A page that fell behind (docs/web.md): the player made a move from another tab or device,
and this page, whose live stream was cut, still offers the old menu. Its command is refused
(409 R-CMD-1: the sequence number was used for another command); the page says so in a
player's words, catches up, and offers the next move."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Route, expect

from tests.support.http import open_table
from tests.web.conftest import NewContext, screenshot
from tests.web.pages import LIVE_MS, table_page

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`


def test_a_page_behind_another_tab_says_so_in_words_and_catches_up(
    new_context: NewContext, http: httpx.Client
) -> None:
    game = open_table(http, ["kay", "leo"])
    menus = {
        name: http.get(f"/deals/{game.deal_id}/moves", headers=game.headers[name]).json()
        for name in game.names
    }
    cutter = next(name for name, menu in menus.items() if menu["moves"])
    context = new_context()

    def cut_off(route: Route) -> None:  # this page hears nothing live
        route.abort()

    context.route("**/stream*", cut_off)
    page = table_page(context, game.headers[cutter], game.table)
    expect(page.locator("#moves [data-move=cut]")).to_be_visible(timeout=LIVE_MS)
    page.locator("#cut-n").fill("20")

    # The other tab cuts 21 cards under the same sequence number.
    menu = menus[cutter]
    body = {"seq": menu["next_seq"], "expect": menu["expect"], "command": {"type": "cut", "n": 21}}
    answer = http.post(f"/deals/{game.deal_id}/commands", json=body, headers=game.headers[cutter])
    assert answer.status_code == 200, answer.text

    page.locator("#moves [data-move=cut]").click()
    alert = page.get_by_role("alert")
    expect(alert).to_have_text(
        "Your page was behind (a move was made from another tab or device): it has caught up, "
        "so choose your move again. (R-CMD-1)"
    )
    expect(page.locator("#moves [data-move=cut]")).to_have_count(0)  # caught up: cut is done
    screenshot(page, "table-stale")
    events = http.get(f"/deals/{game.deal_id}/events", headers=game.headers[cutter]).json()
    cuts = [e for e in events if e["kind"] == "DeckCut"]
    assert len(cuts) == 1 and cuts[0]["n"] == 21  # the page's cut recorded nothing
