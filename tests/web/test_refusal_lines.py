"""A refusal by a rule is said in the page's language, all of it: "被拒绝：首次出牌必须用手中的牌
达到最低分（R-MA-INIT-1）", the rule's line (app/web/i18n/rules/), and under it what was wrong
this time, "这次首次出牌用手中的牌只有 30 分，你方需要 125 分": the refusal's key and parameters
said by the language's template (app/web/i18n/details/). The pages showed the server's English
message alone, on a Chinese page "被拒绝：the initial meld needs 125..."; then the rule's line
with that English message under it. A ``modern_american`` player (stacked deck) melds K K K
for her initial meld (30 of 125: R-MA-INIT-1, the dry run's refusal) and discards a deuce
(R-MA-DISC-1, the command's refusal); a host chooses teams the entry does not allow; a
detail the page has no template for is still said, in English and marked so."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect

from app.web_ui import WEB_DIR
from tests.e2e.conftest import Backend
from tests.support.http import open_table
from tests.web.conftest import NewContext, screenshot, stacked_decks_server
from tests.web.pages import LIVE_MS, in_language, open_lobby, signed_in, table_page
from tests.web.test_meld_limits import HAND, mia_after_drawing, mias_page, select_and_meld

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """This module's server deals stacked decks (tests/web/deals.py)."""
    yield from stacked_decks_server(tmp_path_factory, "refusallines")


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
    # What was wrong this time, in Chinese too, smaller, under the rule's line.
    detail = error.locator(".refusal-detail")
    expect(detail).to_have_text("这次首次出牌用手中的牌只有 30 分，你方需要 125 分")
    expect(detail.locator("[lang]")).to_have_count(0)
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
    expect(error.locator(".refusal-detail")).to_have_text(
        "дикую карту сбрасывают только при выходе или когда на руке остались одни дикие"
    )
    screenshot(mia, "refusal-line-ru", full_page=False)


def test_a_refused_initial_meld_is_said_in_russian_with_its_numbers(
    new_context: NewContext, http: httpx.Client
) -> None:
    mia = in_language(mias_page(new_context, mia_after_drawing(http, HAND, "q")), "ru")
    select_and_meld(mia, "KC/1 KD/1 KH/1")
    error = mia.locator("#error")
    expect(error.locator(".refusal-rule")).to_have_text(
        "Отказ: первая выкладка должна набрать минимум картами с руки (R-MA-INIT-1)"
    )
    expect(error.locator(".refusal-detail")).to_have_text(
        "первая выкладка набирает картами с руки очков: 30; вашей стороне нужно 125"
    )
    expect(error).not_to_contain_text("English")
    expect(error.locator("[lang=en]")).to_have_count(0)
    screenshot(mia, "refusal-detail-ru", full_page=False)


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


def refused_teams(
    new_context: NewContext, http: httpx.Client, names: list[str], lang: str
) -> tuple[Page, Locator]:
    """The host (``names[0]``) of a classic table of five, in the lobby in ``lang``, puts every
    seat in side A: his page and the refusal (R-SEAT-2), in the table's card."""
    headers = open_table(http, names, start=False).headers  # classic of 5: teams to choose
    host = in_language(signed_in(open_lobby(new_context())[0], headers[names[0]]), lang)
    teams = host.locator("fieldset.host-teams")
    expect(teams.locator("select")).to_have_count(5, timeout=LIVE_MS)
    for seat in range(5):
        teams.locator("select").nth(seat).select_option("A")
    teams.get_by_role("button").click()
    return host, host.get_by_role("alert").filter(has_text="R-SEAT-2")


def test_the_host_s_refusal_in_the_lobby_is_said_in_chinese(
    new_context: NewContext, http: httpx.Client
) -> None:
    """The lobby's refusals go the same way: the host's teams of a shape the entry does not
    allow (R-SEAT-2), refused in the table's card."""
    host, alert = refused_teams(new_context, http, ["kai", "lei", "mo", "nan", "ou"], "zh")
    expect(alert.locator(".refusal-rule")).to_have_text(
        "被拒绝：五人时两队分别为三人和两人，六人时各三人（R-SEAT-2）"
    )
    expect(alert.locator(".refusal-detail")).to_have_text(
        "这里不能分成 5 人的队伍；可以分成 3+2 人"
    )
    screenshot(host, "refusal-line-lobby-zh", full_page=False)


def test_a_detail_without_a_template_is_said_in_english(
    new_context: NewContext, http: httpx.Client
) -> None:
    """A key the page has no template for (a server newer than the page): the rule's line in
    the page's language, and the server's English message under it, marked English."""
    mia = in_language(mias_page(new_context, mia_after_drawing(http, HAND, "n")), "zh")
    mia.route(
        "**/commands/check",
        lambda route: route.fulfill(
            status=200,
            json={
                "accepted": False,
                "error": {
                    "code": "R-MA-INIT-1",
                    "message": "a newer refusal, 125",
                    "key": "init.newer",
                    "params": {"minimum": 125},
                },
            },
        ),
    )
    select_and_meld(mia, "KC/1 KD/1 KH/1")
    detail = mia.locator("#error .refusal-detail")
    expect(detail).to_contain_text(re.compile(r"^服务器的说明（英文）：a newer refusal, 125$"))
    expect(detail.locator("[lang=en]")).to_have_text("a newer refusal, 125")


#: Refusals with each kind of parameter, said by common.js's detailOf in Russian and Thai: a
#: card (its printed face), a word of a fixed set (the action tried), lists ("or", "+", "and"),
#: ranks, an entry's and a game status's names from the pages' catalogue.
KINDS = [
    ("pile.blocked", {"card": "2C/1"}),
    ("turn.time_to_draw", {"action": "take the pile"}),
    ("ask.which_partner", {"partners": [1, 3]}),
    ("meld.mixed_ranks", {"ranks": ["K", "Q"]}),
    ("ponytail.none", {"entry": "classic"}),
    ("game.not_playing", {"status": "finished"}),
    ("out.canasta_kinds", {"kinds": ["natural 7s", "wild"]}),
]
SAID = {
    "ru": [
        "сброс нельзя взять, пока сверху 2♣",
        "сейчас нельзя брать сброс: пора брать карту",
        "укажите, какого партнёра спросить: место 1 или 3",
        "комбинация — это одно достоинство, а не K и Q",
        "в варианте «Классическая» нет хвостиков",
        "состояние игры: игра окончена",
        "для выхода ещё нужны канасты — чистая из семёрок и дикая",
    ],
    "th": [
        "เก็บกองทิ้งไม่ได้ขณะที่ 2♣ อยู่บนสุด",
        "ยังเก็บกองทิ้งตอนนี้ไม่ได้: ตอนนี้ต้องจั่วไพ่",
        "ระบุคู่หูที่จะถาม: ที่นั่ง 1 หรือ 3",
        "ชุดไพ่ต้องเป็นแต้มเดียวกัน ไม่ใช่ KและQ",  # Intl.ListFormat, as CLDR joins in Thai
        "แบบ คลาสสิก ไม่มีหางม้า",
        "เกมจบแล้ว",
        "จะหมดมือยังต้องมีคานาสต้าเจ็ดแท้และไวลด์ด้วย",
    ],
}


@pytest.mark.parametrize("lang", sorted(SAID))
def test_each_kind_of_parameter_is_said_in_the_page_s_language(
    new_context: NewContext, lang: str
) -> None:
    page = open_lobby(new_context())[0]
    shown = page.evaluate(
        """async ([lang, kinds]) => {
            const common = await import("/web/common.js");
            await common.loadLanguage(lang);
            return kinds.map(([key, params]) =>
                common.detailOf(new common.Refused(400, "R-X-1", "English", { key, params })));
        }""",
        [lang, KINDS],
    )
    assert shown == SAID[lang]


# --- a language switched with a refusal on the screen -------------------------------------------
# The pages drew a refusal once, in the language of that moment: a player who switched the
# language kept the old one on the screen (the rule's line, the detail's words) until his next
# refusal. Now what a refusal or a notice says is drawn again in the new language.


def said(lang: str, key: str, **values: str) -> str:
    """The catalogue's sentence (app/web/i18n/<lang>.json) with its {placeholders} filled."""
    text: str = json.loads((Path(WEB_DIR) / "i18n" / f"{lang}.json").read_text("utf-8"))[key]
    return re.sub(r"\{(\w+)\}", lambda m: values[m[1]], text)


def worded(lang: str, key: str, **values: str) -> str:
    """A refusal's detail in ``lang`` (app/web/i18n/details/<lang>.json), its params filled."""
    path = Path(WEB_DIR) / "i18n" / "details" / f"{lang}.json"
    text: str = json.loads(path.read_text("utf-8"))[key]
    return re.sub(r"\{(\w+)\}", lambda m: values[m[1]], text)


def rule_line(lang: str, rule: str) -> str:
    """The pages' "Refused: <the rule's line> (<rule>)" in ``lang``."""
    lines = json.loads((Path(WEB_DIR) / "i18n" / "rules" / f"{lang}.json").read_text("utf-8"))
    return said(lang, "error", message=lines[rule], code=rule)


def test_a_refused_move_is_said_again_in_the_language_switched_to(
    new_context: NewContext, http: httpx.Client
) -> None:
    mia = mias_page(new_context, mia_after_drawing(http, HAND, "s"))
    select_and_meld(mia, "KC/1 KD/1 KH/1")
    error = mia.locator("#moves #error")  # where she pressed Meld
    expect(error.locator(".refusal-rule")).to_have_text(rule_line("en", "R-MA-INIT-1"))
    detail = error.locator(".refusal-detail").inner_text()
    assert detail == "the initial meld counts 30 from the hand; this side needs 125"
    for lang in ("zh", "ru"):
        in_language(mia, lang)
        expect(error.locator(".refusal-rule")).to_have_text(rule_line(lang, "R-MA-INIT-1"))
        expect(error.locator(".refusal-detail")).to_have_text(
            worded(lang, "init.short_from_hand", points="30", minimum="125")
        )
        expect(error.locator("a.rule-link")).to_have_attribute("href", "/rules/R-MA-INIT-1")
    screenshot(mia, "refusal-line-switched-ru", full_page=False)
    in_language(mia, "en")  # and back: the server's words alone under the line again
    expect(error.locator(".refusal-rule")).to_have_text(rule_line("en", "R-MA-INIT-1"))
    expect(error.locator(".refusal-detail")).to_have_text(detail)


def test_a_refusal_the_page_made_itself_is_said_again_in_the_language_switched_to(
    new_context: NewContext, http: httpx.Client
) -> None:
    """The meld limits' refusal, said before anything is sent (table_moves.js), in the words
    of the page's own catalogue rather than a rule's line; the meld's rank by its word, "the
    seven meld" (a screen reader read "the Q meld" as "the queue meld")."""
    mia = mias_page(new_context, mia_after_drawing(http, HAND, "p"))
    select_and_meld(mia, "7C/1 7D/1 7H/1 2C/1")
    error = mia.locator("#moves #error")
    for lang in ("en", "zh", "ru"):
        in_language(mia, lang)
        why = said(lang, "meld_limit_no_wild", rank=said(lang, "rank_7"))
        cannot = said(lang, "meld_limit_cannot", why=why)
        expect(error).to_have_text(said(lang, "error", message=cannot, code="R-MA-MELD-5"))


def test_the_lobby_s_refusal_and_notice_are_said_again_in_the_language_switched_to(
    new_context: NewContext, http: httpx.Client
) -> None:
    host, alert = refused_teams(new_context, http, ["kaj", "lev", "mai", "nat", "oto"], "en")
    expect(alert.locator(".refusal-rule")).to_have_text(rule_line("en", "R-SEAT-2"))
    for lang in ("zh", "ru"):
        in_language(host, lang)
        expect(alert.locator(".refusal-rule")).to_have_text(rule_line(lang, "R-SEAT-2"))
    # A success's notice too ("You are signed out.", at the top).
    host.locator("#sign-out").click()
    expect(host.locator("#notice")).to_have_text(said("ru", "signed_out"))
    in_language(host, "zh")
    expect(host.locator("#notice")).to_have_text(said("zh", "signed_out"))


def test_the_replay_s_and_the_audit_s_refusals_are_said_again_in_the_language_switched_to(
    new_context: NewContext, http: httpx.Client
) -> None:
    """The audit refuses a player who is no auditor (R-VIEW-4); the replay, a deal that does
    not exist (not_found: no rule; its detail by key, ``deal.not_found``). Who is signed in is
    said again too."""
    game = open_table(http, ["pia", "quin"])
    context = new_context()
    table_page(context, game.headers["pia"], game.table)  # signs the browser in
    audit = context.new_page()
    audit.goto(f"/audit/deals/{game.deal_id}")
    expect(audit.locator("#refused-text .refusal-rule")).to_have_text(rule_line("en", "R-VIEW-4"))
    replay = context.new_page()
    replay.goto("/deals/00000000-0000-4000-8000-000000000000/replay")
    refused = replay.locator("#refused-text")
    nowhere = "00000000-0000-4000-8000-000000000000"
    expect(refused).to_have_text(f"Refused: no deal {nowhere} (not_found)")
    for lang in ("zh", "ru"):
        in_language(audit, lang)
        expect(audit.locator("#refused-text .refusal-rule")).to_have_text(
            rule_line(lang, "R-VIEW-4")
        )
        expect(audit.locator("#who")).to_have_text(said(lang, "signed_in_as", name="pia"))
        in_language(replay, lang)
        message = worded(lang, "deal.not_found", id=nowhere)
        expect(refused).to_have_text(said(lang, "error", message=message, code="not_found"))
        expect(replay.locator("#who")).to_have_text(said(lang, "signed_in_as", name="pia"))
    screenshot(audit, "refusal-audit-switched-ru", full_page=False)
