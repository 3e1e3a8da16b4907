"""A refusal by a rule is said in the page's language: "被拒绝：首次出牌必须用手中的牌达到最低分
（R-MA-INIT-1）", the rule's line (app/web/i18n/rules/), with the server's own message, in
English, as its detail under it. The pages showed the server's English message alone, on a
Chinese page "被拒绝：the initial meld needs 125...". A ``modern_american`` player (stacked deck)
melds K K K for her initial meld (30 of 125: R-MA-INIT-1, the dry run's refusal) and
discards a deuce (R-MA-DISC-1, the command's refusal)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Backend
from tests.support.http import open_table
from tests.web.conftest import NewContext, screenshot, stacked_decks_server
from tests.web.pages import LIVE_MS, open_lobby, signed_in
from tests.web.test_meld_limits import HAND, mia_after_drawing, mias_page, select_and_meld

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """This module's server deals stacked decks (tests/web/deals.py)."""
    yield from stacked_decks_server(tmp_path_factory, "refusallines")


def in_language(page: Page, lang: str) -> Page:
    page.locator("#lang").select_option(lang)  # the page's language menu
    expect(page.locator("html")).to_have_attribute("lang", lang)
    return page


def test_a_refused_initial_meld_is_said_in_chinese(
    new_context: NewContext, http: httpx.Client
) -> None:
    mia = in_language(mias_page(new_context, mia_after_drawing(http, HAND, "z")), "zh")
    select_and_meld(mia, "KC/1 KD/1 KH/1")
    error = mia.locator("#error")
    expect(error.locator(".refusal-rule")).to_have_text(
        "被拒绝：首次出牌必须用手中的牌达到最低分（R-MA-INIT-1）"
    )
    expect(error.locator("a.rule-link")).to_have_attribute("href", "/rules/R-MA-INIT-1")
    # The server's detail, in English and marked so, smaller, under the rule's line.
    detail = error.locator(".refusal-detail")
    expect(detail).to_contain_text(re.compile(r"^服务器的说明（英文）：\S"))
    expect(detail.locator('[lang="en"]')).to_contain_text("125")
    screenshot(mia, "refusal-line-zh", full_page=False)
    expect(mia.locator("#hand [data-card]")).to_have_count(14)  # nothing laid


def test_a_refused_discard_is_said_in_russian(new_context: NewContext, http: httpx.Client) -> None:
    mia = in_language(mias_page(new_context, mia_after_drawing(http, HAND, "r")), "ru")
    mia.locator('#hand [data-card="2C/1"]').click()
    mia.locator('#moves [data-move="discard"]').click()
    error = mia.locator("#error")
    expect(error.locator(".refusal-rule")).to_have_text(
        "Отказ: эту карту сейчас сбросить нельзя (R-MA-DISC-1)"
    )
    expect(error.locator(".refusal-detail [lang=en]")).to_contain_text("wild")
    screenshot(mia, "refusal-line-ru", full_page=False)


def test_an_english_page_says_the_rule_and_the_server_s_message(
    new_context: NewContext, http: httpx.Client
) -> None:
    mia = mias_page(new_context, mia_after_drawing(http, HAND, "e"))
    select_and_meld(mia, "KC/1 KD/1 KH/1")
    error = mia.locator("#error")
    expect(error.locator(".refusal-rule")).to_have_text(
        "Refused: the initial meld must reach its minimum with cards from your hand (R-MA-INIT-1)"
    )
    expect(error.locator(".refusal-detail")).to_contain_text("125")
    expect(error.locator(".refusal-detail")).not_to_contain_text("English")
    screenshot(mia, "refusal-line-en", full_page=False)


def test_the_host_s_refusal_in_the_lobby_is_said_in_chinese(
    new_context: NewContext, http: httpx.Client
) -> None:
    """The lobby's refusals go the same way: the host's teams of a shape the entry does not
    allow (R-SEAT-2), refused in the table's card."""
    names = ["kai", "lei", "mo", "nan", "ou"]
    headers = open_table(http, names, start=False).headers  # classic of 5: teams to choose
    host = signed_in(open_lobby(new_context())[0], headers["kai"])
    in_language(host, "zh")
    teams = host.locator("fieldset.host-teams")
    expect(teams.locator("select")).to_have_count(5, timeout=LIVE_MS)
    for seat in range(5):
        teams.locator("select").nth(seat).select_option("A")
    teams.get_by_role("button").click()
    alert = host.get_by_role("alert").filter(has_text="R-SEAT-2")
    expect(alert.locator(".refusal-rule")).to_have_text(
        "被拒绝：五人时两队分别为三人和两人，六人时各三人（R-SEAT-2）"
    )
    expect(alert.locator(".refusal-detail [lang=en]")).not_to_be_empty()
    screenshot(host, "refusal-line-lobby-zh", full_page=False)
