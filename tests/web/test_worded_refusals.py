"""Who may do it (403), what does not exist (404) and what collides (409) are said in the
page's language, as a rule's refusal is (docs/web.md, "Refusals"): they came with the
server's English message only, so a Chinese lobby said "被拒绝：the name 'ann' is taken
（name_taken）" to a player whose name was taken, a Russian replay of a deal that is not there
"Отказ: no deal ... (not_found)", a Chinese player who is not the host "... 在英文中：only
the host may do this". Now the error body carries a key and params for these too, and the
pages fill their own template (app/web/i18n/details/<lang>.json).

And the table page's "The game" panel names a bot as its seats do, "bot:basic:1 (бот,
базовый)" on a Russian page, not the bare "bot:basic:1"."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.http import open_table, register_player
from tests.web.conftest import NewContext, screenshot
from tests.web.pages import LIVE_MS, in_language, open_lobby, sign_up, signed_in, table_page

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

NOWHERE = "00000000-0000-4000-8000-000000000000"


def test_a_taken_name_is_said_in_chinese(new_context: NewContext, http: httpx.Client) -> None:
    """409 name_taken, in the lobby's sign-up form."""
    register_player(http, "fang")
    page = in_language(open_lobby(new_context())[0], "zh")
    page.locator("#sign-up-name").fill("fang")
    page.locator("#sign-up-form button[type=submit]").click()
    alert = page.get_by_role("alert")
    expect(alert).to_have_text("被拒绝：名字“fang”已被占用（name_taken）")
    expect(alert.get_by_role("link", name="name_taken")).to_have_attribute(
        "href", "/rules/name_taken"
    )
    screenshot(page, "refusal-409-zh", full_page=False)
    in_language(page, "en")  # the server's own words on an English page
    expect(alert).to_have_text("Refused: the name 'fang' is taken (name_taken)")


def test_a_deal_that_is_not_there_is_said_in_russian(new_context: NewContext) -> None:
    """404 not_found, on the replay page."""
    page = new_context().new_page()
    page.goto(f"/deals/{NOWHERE}/replay")
    refused = page.locator("#refused-text")
    expect(refused).to_have_text(f"Refused: no deal {NOWHERE} (not_found)")
    in_language(page, "ru")
    expect(refused).to_have_text(f"Отказ: нет раздачи {NOWHERE} (not_found)")
    in_language(page, "zh")
    expect(refused).to_have_text(f"被拒绝：没有 id 为 {NOWHERE} 的牌局（not_found）")
    screenshot(page, "refusal-404-zh", full_page=False)


def test_a_player_who_is_not_the_host_is_told_so_in_chinese(
    new_context: NewContext, http: httpx.Client
) -> None:
    """403 R-SEAT-3: a player who is not the host starts the game (the page's own request,
    as a forged button would send it): the rule's line, and under it its detail, both in
    Chinese; nothing says "in English"."""
    game = open_table(http, ["hu", "jin"], start=False)
    page = in_language(signed_in(open_lobby(new_context())[0], game.headers["jin"]), "zh")
    said = page.evaluate(
        """async (table) => {
            const common = await import("/web/common.js");
            try {
                await common.api("POST", `/tables/${table}/start`);
                return null;
            } catch (error) {
                const box = document.getElementById("error") ?? document.body.appendChild(
                    Object.assign(document.createElement("p"), { id: "error", role: "alert" }));
                box.replaceChildren(...common.errorNodes(error));
                box.hidden = false;
                return [common.ruleLine(error), common.detailOf(error)];
            }
        }""",
        game.table,
    )
    assert said is not None and said[1] == "只有房主能这样做", said
    detail = page.locator("#error .refusal-detail")
    expect(detail).to_have_text("只有房主能这样做")
    expect(detail.locator("[lang=en]")).to_have_count(0)
    screenshot(page, "refusal-403-host-zh", full_page=False)
    assert http.get(f"/tables/{game.table}").json()["status"] == "open"  # nothing changed


def test_the_audit_s_403_is_said_in_russian(new_context: NewContext, http: httpx.Client) -> None:
    """403 R-VIEW-4: a player who is no auditor opens a deal's audit; its detail was the
    server's English, "auditing needs the auditor role, granted by the operator"."""
    game = open_table(http, ["ivo", "jan"])
    context = new_context()
    table_page(context, game.headers["ivo"], game.table)  # signs the browser in
    audit = context.new_page()
    audit.goto(f"/audit/deals/{game.deal_id}")
    detail = audit.locator("#refused-text .refusal-detail")
    expect(detail).to_have_text("auditing needs the auditor role, granted by the operator")
    in_language(audit, "ru")
    expect(detail).to_have_text("для аудита нужна роль аудитора, её выдаёт оператор")
    expect(detail.locator("[lang=en]")).to_have_count(0)
    screenshot(audit, "refusal-403-audit-ru", full_page=False)


def test_the_game_panel_names_a_bot_as_the_seats_do(new_context: NewContext) -> None:
    """A practice game against bots: "The game" panel's sides and the score table's titles
    said "bot:basic:1" where the seats say "bot:basic:1 (bot, basic)"."""
    page = open_lobby(new_context())[0]
    sign_up(page, "kit")
    page.get_by_label("Bot level").select_option("basic")
    page.get_by_role("button", name="Play now").click()
    page.wait_for_url("**/tables/*")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    sides = page.locator("#game .sides-list li")
    expect(sides).to_have_text(
        [
            "Side A: kit, bot:basic:2 (bot, basic)",
            "Side B: bot:basic:1 (bot, basic), bot:basic:3 (bot, basic)",
        ],
        timeout=LIVE_MS,
    )
    titles = page.locator("#totals-table thead th[title]")
    expect(titles.first).to_have_attribute("title", "kit, bot:basic:2 (bot, basic)")
    in_language(page, "ru")
    expect(sides.nth(0)).to_contain_text("kit, bot:basic:2 (бот, базовый)")
    expect(sides.nth(1)).to_contain_text("bot:basic:1 (бот, базовый), bot:basic:3 (бот, базовый)")
    expect(titles.nth(1)).to_have_attribute(
        "title", "bot:basic:1 (бот, базовый), bot:basic:3 (бот, базовый)"
    )
    seats = page.locator("[data-seat-play='1']")
    expect(seats).to_contain_text("bot:basic:1 (бот, базовый)")  # as the seats name it
    screenshot(page, "table-game-panel-bots-ru")
