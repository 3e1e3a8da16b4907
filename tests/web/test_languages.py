"""The pages in Russian and Thai (docs/web.md, "Languages"): a browser whose language is one of
them gets it by default and keeps the menu's choice; a Russian player reads every count of a
live deal in its plural form ("11 карт", "62 карты", "61 карта"); and the lobby, the table (a
player's and a spectator's), the replay and the audit fit a phone and a desktop in both: no
horizontal scroll, no button whose words are cut."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Backend, make_backend, running
from tests.support.games import stacked_deck
from tests.support.http import Game, Headers, open_table, register_player, state_reader
from tests.web.conftest import DESKTOP, PHONES, TOUCH, NewContext, screenshot
from tests.web.deals import NAMES, classic_four, play_step, start_table
from tests.web.pages import open_page, sign_in

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`, not `make test-fast`

AUDITOR = "audra"
#: Each language: the browser's locale, the lobby's title and its "Your name" label.
LANGUAGES = {
    "ru": ("ru-RU", "Журнал канасты", "Ваше имя"),
    "th": ("th-TH", "สมุดบันทึกคานาสต้า", "ชื่อของคุณ"),
}
#: What reaches past the right edge of a screen ``width`` wide: the deepest such elements. (A
#: mobile browser widens its layout to the content, so ``innerWidth`` would grow with it.)
WIDE = """(width) => {
  const clipped = (node) => {
    for (let up = node.parentElement; up && up !== document.body; up = up.parentElement) {
      if (getComputedStyle(up).overflowX !== "visible") return true;
    }
    return false;
  };
  const wide = (node) => node.getBoundingClientRect().right > width + 0.5 && !clipped(node);
  return [...document.querySelectorAll("body *")]
    .filter((node) => wide(node) && ![...node.children].some(wide))
    .map((node) => `${node.tagName.toLowerCase()}.${node.className}: ${node.textContent.trim().slice(0, 50)}`);
}"""
#: The buttons and links drawn as buttons whose words do not fit inside them.
CUT_BUTTONS = """() => [...document.querySelectorAll("button, a.button")]
  .filter((b) => b.offsetParent !== null && b.scrollWidth > b.clientWidth + 1)
  .map((b) => `${b.textContent.trim()}: ${b.scrollWidth} > ${b.clientWidth}`)"""


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """A server set up for tests (stacked decks), with an auditor."""
    env = {"CANASTA_AUDITORS": AUDITOR, "CANASTA_ALLOW_STACKED_DECKS": "true"}
    yield from running(make_backend("sqlite", tmp_path_factory.mktemp("languages"), extra_env=env))


def live_deal(http: httpx.Client, prefix: str) -> tuple[Game, tuple[str, ...]]:
    """``classic_four`` started and cut: every hand holds 11 cards, ann (seat 0) draws next."""
    deal = classic_four()
    names = tuple(f"{prefix}-{name}" for name in NAMES)
    game = start_table(http, deal, names)
    play_step(http, game, deal.steps[0])
    return game, names


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_browser_in_the_language_gets_the_lobby_in_it_and_the_menu_s_choice_stays(
    new_context: NewContext, lang: str
) -> None:
    locale, title, your_name = LANGUAGES[lang]
    page = open_page(new_context(locale=locale), "/")
    expect(page.get_by_role("heading", level=1)).to_have_text(title)
    expect(page.locator("html")).to_have_attribute("lang", lang)
    expect(page.get_by_label(your_name)).to_be_visible()
    expect(page.locator("#lang")).to_have_value(lang)
    screenshot(page, f"lobby-{lang}-browser")
    # The menu's choice wins over the browser's language, after a reload too.
    page.locator("#lang").select_option("en")
    expect(page.get_by_role("heading", level=1)).to_have_text("Canasta ledger")
    page.reload()
    expect(page.get_by_label("Your name")).to_be_visible()
    page.locator("#lang").select_option(lang)
    page.reload()
    expect(page.get_by_role("heading", level=1)).to_have_text(title)


def test_a_chinese_browser_still_gets_chinese_and_another_gets_english(
    new_context: NewContext,
) -> None:
    for locale, title in [("zh-CN", "卡纳斯塔账本"), ("de-DE", "Canasta ledger")]:
        page = open_page(new_context(locale=locale), "/")
        expect(page.get_by_role("heading", level=1)).to_have_text(title)


def test_a_russian_player_reads_every_count_of_a_live_deal_in_its_plural_form(
    new_context: NewContext, http: httpx.Client
) -> None:
    game, names = live_deal(http, "plural")
    context = sign_in(new_context(locale="ru-RU"), game.headers[names[0]])
    page = open_page(context, f"/tables/{game.table}")
    expect(page.locator("html")).to_have_attribute("lang", "ru")
    deal = page.locator("#deal")
    # 11 is "карт", not "карта" (it ends in 1 but is not one); 62 "карты"; then 61 "карта".
    expect(deal.locator("li[data-seat='1'] .count")).to_have_text("11 карт на руке")
    expect(deal.get_by_role("heading", name="Ваши карты (11 карт)")).to_be_visible()
    expect(deal).to_contain_text("62 карты")
    play_step(http, game, classic_four().steps[1])  # ann draws: the page follows
    expect(deal.get_by_role("heading", name="Ваши карты (12 карт)")).to_be_visible()
    expect(deal).to_contain_text("61 карта")
    screenshot(page, "table-ru-plural")
    said = page.evaluate(
        """async () => {
          const { t } = await import("/web/common.js");
          return [1, 2, 5, 11, 21, 22, 25, 0, 101, 112].map((count) => t("table_hand_count", { count }));
        }"""
    )
    assert said == [
        "1 карта на руке",
        "2 карты на руке",
        "5 карт на руке",
        "11 карт на руке",
        "21 карта на руке",
        "22 карты на руке",
        "25 карт на руке",
        "0 карт на руке",
        "101 карта на руке",
        "112 карт на руке",
    ]


def test_a_thai_spectator_watches_the_table_in_thai(
    new_context: NewContext, http: httpx.Client
) -> None:
    game, _ = live_deal(http, "thai")
    page = open_page(new_context(locale="th-TH"), f"/tables/{game.table}")
    expect(page.locator("html")).to_have_attribute("lang", "th")
    expect(page.locator("#deal li[data-seat='1'] .count")).to_have_text("ในมือ 11 ใบ")
    expect(page.locator("#deal")).to_contain_text("กองจั่ว")


@pytest.fixture(scope="module")
def finished(web_server: Backend) -> Iterator[tuple[Game, Headers]]:
    """A 2-player classic deal played to its end by the seeded random player, and the
    auditor's headers. The deck is fixed: its deal ends with 3 natural and 2 mixed canastas
    for one side, 1 and 5 for the other, the longest words the score breakdown shows (a
    server's shuffle once gave "900 (3 смешанные)", which made the breakdown wider than a
    phone)."""
    with httpx.Client(base_url=web_server.server.url, timeout=30) as http:
        game = open_table(http, ["done-ann", "done-bob"], start=False)
        game.start({"deck": stacked_deck(15), "dealer": 0})
        game.play_deal(state_reader(web_server.shadow()), random.Random(1))
        yield game, register_player(http, AUDITOR)


def fits(page: Page, shot: str) -> None:
    """No horizontal scroll, no button with its words cut; and a screenshot to look at."""
    screenshot(page, shot)
    width = page.viewport_size["width"] if page.viewport_size else 0
    wide = page.evaluate(WIDE, width)
    scrolled = page.evaluate("() => document.scrollingElement.scrollWidth")
    assert (wide, scrolled <= width) == ([], True), (shot, wide, scrolled)
    assert page.evaluate(CUT_BUTTONS) == []


@pytest.mark.parametrize("screen", ["phone", "desktop"])
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_page_fits_the_screen_in_the_language(
    new_context: NewContext,
    http: httpx.Client,
    finished: tuple[Game, Headers],
    lang: str,
    screen: str,
) -> None:
    def context() -> Any:
        if screen == "phone":
            return new_context(locale=LANGUAGES[lang][0], viewport=PHONES["upright"], **TOUCH)
        return new_context(locale=LANGUAGES[lang][0], viewport=DESKTOP)

    done, auditor = finished
    game, names = live_deal(http, f"{lang}-{screen}")
    fits(open_page(context(), "/"), f"{lang}-{screen}-lobby-signed-out")
    player = sign_in(context(), game.headers[names[0]])
    fits(open_page(player, "/"), f"{lang}-{screen}-lobby")
    table = open_page(player, f"/tables/{game.table}")
    expect(table.locator("#moves [data-move='draw']")).to_be_visible()
    fits(table, f"{lang}-{screen}-table-player")
    fits(open_page(context(), f"/tables/{game.table}"), f"{lang}-{screen}-table-spectator")
    fits(open_page(context(), f"/tables/{done.table}"), f"{lang}-{screen}-table-over")
    fits(open_page(context(), f"/deals/{done.deal_id}/replay?step=12"), f"{lang}-{screen}-replay")
    audit = open_page(sign_in(context(), auditor), f"/audit/deals/{done.deal_id}")
    expect(audit.locator("#audit-events li").first).to_be_visible()
    fits(audit, f"{lang}-{screen}-audit")
