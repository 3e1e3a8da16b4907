"""What a screen reader says at the table, the replay and the audit (docs/web.md,
"Accessibility"), as a blind player heard it in a game: every bot's line began with its whole
name, "bot:basic:1 (bot, basic) drew a card"; the suggestions' "+" and "·" were read "plus" and
"dot"; the red threes' caption was said twice; the replay's deal heading stood at the level of
the section around it. (Its refusals' "the Q meld", read "the queue meld", are
tests/web/test_meld_limits.py's and test_meld_additions.py's.)"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Backend
from tests.support.http import register_player
from tests.web.conftest import NewContext, screenshot, stacked_decks_server
from tests.web.deals import (
    WILD_ACES_KINGS,
    WILD_ACES_MOVES,
    classic_four,
    play_step,
    send,
    start_table,
    wild_aces_until_going_out,
)
from tests.web.pages import HEARD, in_language, open_page, sign_in, snapshot, table_page
from tests.web.practice import play_moves, start_practice, wait_until_quiet

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

AUDITOR = "audra"


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """Stacked decks (tests/web/deals.py); ``audra`` audits."""
    yield from stacked_decks_server(tmp_path_factory, "spoken-lines", CANASTA_AUDITORS=AUDITOR)


def test_a_bot_is_said_by_its_short_name_and_printed_in_full(
    new_context: NewContext, http: httpx.Client
) -> None:
    headers = register_player(http, "blia")
    table, deal = start_practice(http, headers, players=4)  # three bots: bot:basic:1 to 3
    page = table_page(new_context(), headers, table)
    page.evaluate(HEARD)
    play_moves(http, headers, deal, 3)  # his moves, the three bots' turns between them
    wait_until_quiet(http, headers, deal)
    page.wait_for_function("() => window.heard.some((line) => line.startsWith('Bot 1 '))")
    heard = page.evaluate("() => window.heard")
    # "Bot 2 drew 2 cards.", where he heard "bot:basic:2 (bot, basic) drew 2 cards."
    assert not any("bot:" in line or "(bot, basic)" in line for line in heard), heard
    assert any(line.startswith("Bot 2 ") for line in heard), heard
    # The log prints the full name; its spoken words are the short ones.
    drew = page.locator("#log li").filter(has_text="bot:basic:3 (bot, basic) drew").first
    step = drew.get_attribute("data-step")
    line = page.locator(f"#log li[data-step='{step}']")
    expect(line.locator("[aria-hidden=true]")).to_contain_text("bot:basic:3 (bot, basic) drew")
    expect(line.locator(".visually-hidden")).to_have_text(re.compile(r"^Bot 3 drew"))
    # The seats list names each bot in full, once.
    seats = snapshot(page.locator("#deal li.seat-box").first.locator(".."))
    assert "bot:basic:1 (bot, basic)" in seats, seats
    for lang, bot in (("ru", "Бот 3 "), ("zh", "机器人3"), ("th", "บอท 3 ")):
        in_language(page, lang)
        expect(line.locator(".visually-hidden")).to_have_text(re.compile(f"^{bot}"))
    # The replay's step says it so too, and never a card he may not see (a bot's draw).
    in_language(page, "en")
    replay = open_page(page.context, f"/deals/{deal}/replay?step={step}")
    words = replay.locator("#words-said")
    expect(words).to_have_text(re.compile(r"^Step \d+: Bot 3 drew "))
    assert not re.search(r" of (hearts|diamonds|clubs|spades)", words.inner_text()), words


def test_a_bot_s_turn_is_awaited_by_its_short_name(
    new_context: NewContext, http: httpx.Client
) -> None:
    """The status line a screen reader hears, "Waiting for bot 1.", and the button of a
    question to a bot partner, "Ask bot 2: may I go out?"."""
    headers = register_player(http, "blib")
    table, _ = start_practice(http, headers, players=4)
    page = table_page(new_context(), headers, table)
    cut = page.locator('#moves [data-move="cut"]')
    draw = page.locator('#moves [data-move="draw"]')
    expect(cut.or_(draw)).to_be_visible()
    if cut.is_visible():
        cut.click()
    draw.click()
    ask = page.locator('#moves [data-move="ask_partner"]')
    expect(ask).to_have_text("Ask bot:basic:2 (bot, basic): may I go out?")
    expect(ask).to_have_attribute("aria-label", "Ask bot 2: may I go out?")
    # He discards: the bots play; while one of them does, the status is said with its short name.
    page.evaluate("""() => {
      window.statuses = [];
      const status = document.getElementById("status");
      new MutationObserver(() => window.statuses.push(
        [...status.querySelectorAll(".visually-hidden")].map((node) => node.textContent).join("")
      )).observe(status, { childList: true, subtree: true });
    }""")
    page.locator("#hand button[data-card]").last.click()
    page.locator('#moves [data-move="discard"]').click()
    page.wait_for_function(
        "() => window.statuses.some((said) => /^Waiting for bot \\d\\.$/.test(said))"
    )
    screenshot(page, "spoken-bot-names", full_page=False)


def test_the_suggestions_are_named_in_words(new_context: NewContext, http: httpx.Client) -> None:
    """ "Take the pile: the top card with 5♦ 5♠ + A♥ A♠ 2♣" was read "... plus ace of
    hearts ..."; "Go out: ... · then discard 9♣" "... dot then discard ..."; a meld's "ace: a
    meld of 3 cards · 1 wild" "... dot 1 wild"."""
    names = ("swann", "swbob", "swcyd", "swdee")
    game = wild_aces_until_going_out(http, names, moves=WILD_ACES_MOVES[:1])  # the cut only
    page = table_page(new_context(), game.headers["swann"], game.table)
    take = page.locator("#moves [data-move=suggestion]").filter(has_text="5♦ 5♠")
    expect(take).to_have_text("Take the pile: the top card with 5♦ 5♠ + A♥ A♠ 2♣")  # printed
    for lang, said in (
        (
            "en",
            "Take the pile: the top card with five of diamonds, five of spades; and ace of"
            " hearts, ace of spades, two of clubs",
        ),
        (
            "ru",
            "Взять сброс: верхнюю карту, к ней — пятёрка бубён, пятёрка пик; и туз червей,"
            " туз пик, двойка треф",
        ),
        ("zh", "拿取弃牌堆: 顶牌连同 方块5、黑桃5；以及红心A、黑桃A、梅花2"),
        ("th", "เก็บกองทิ้ง: ใบบนสุดพร้อม"),
    ):
        in_language(page, lang)
        label = take.get_attribute("aria-label") or ""
        assert label.startswith(said) and "+" not in label and "·" not in label, label
    # The going-out suggestion of the same deal, later.
    going = wild_aces_until_going_out(http, ("sweve", "swfay", "swgus", "swhal"))
    dee = table_page(new_context(), going.headers["swhal"], going.table)
    # A meld's parts the same way: printed "A ×3 · 1 wild", said "..., 1 wild" (not "dot").
    aces = dee.locator('#deal [data-meld="A"][data-side="A"]')
    expect(aces).to_contain_text("A ×3 · 1 wild")
    expect(aces).to_have_attribute("aria-label", "ace: a meld of 3 cards, 1 wild")
    send(http, going, 3, {"type": "meld", "melds": [WILD_ACES_KINGS]})
    out = dee.locator("#moves [data-move=suggestion]").filter(has_text="9♣")
    expect(out).to_have_text("Go out: Q♣ Q♦ Q♥ Q♠ · then discard 9♣")
    expect(out).to_have_attribute(
        "aria-label",
        "Go out: queen of clubs, queen of diamonds, queen of hearts, queen of spades, then"
        " discard nine of clubs",
    )


#: A heading of an aria snapshot: its level.
HEADING = re.compile(r"- '?heading \"([^\"]*)\" \[level=(\d)\]")


def outline(page: Page) -> list[tuple[int, str]]:
    """The page's headings as a screen reader lists them: (level, words), in order."""
    return [
        (int(level), words)
        for words, level in HEADING.findall(page.locator("body").aria_snapshot())
    ]


def assert_outline(headings: list[tuple[int, str]]) -> None:
    """One h1, first; no level skipped on the way down."""
    levels = [level for level, _ in headings]
    assert levels and levels[0] == 1 and levels.count(1) == 1, headings
    for before, after in pairwise(levels):
        assert after <= before + 1, headings


def test_the_headings_of_the_replay_the_audit_and_the_table_nest(
    new_context: NewContext, http: httpx.Client
) -> None:
    """The replay's "Deal 1 of Classic" was a level 2 heading inside "The table at this
    step", another level 2: a screen reader's list of headings put them side by side."""
    deal = classic_four()
    names = ("hdann", "hdbob", "hdcyd", "hddee")
    game = start_table(http, deal, names)
    for step in deal.steps[:4]:
        play_step(http, game, step)
    context = sign_in(new_context(), game.headers["hdann"])
    replay = open_page(context, f"/deals/{game.deal_id}/replay?step=4")
    expect(replay.locator("#deal .deal-title")).to_be_visible()
    headings = outline(replay)
    assert_outline(headings)
    at_step = next(i for i, (_, words) in enumerate(headings) if words == "The table at this step")
    assert headings[at_step][0] == 2 and headings[at_step + 1] == (3, "Deal 1 · Classic"), headings
    assert (4, "Side A: hdann, hdcyd") in headings, str(headings)
    screenshot(replay, "replay-headings", full_page=False)
    table = open_page(context, f"/tables/{game.table}")
    expect(table.locator("#deal .deal-title")).to_be_visible()
    assert_outline(outline(table))
    assert (2, "Deal 1 · Classic") in outline(table)
    audit_context = sign_in(new_context(), register_player(http, AUDITOR))
    audit = open_page(audit_context, f"/audit/deals/{game.deal_id}")
    expect(audit.locator("#audit-events summary").first).to_be_attached()
    assert_outline(outline(audit))


def test_the_red_threes_are_named_once(new_context: NewContext, http: httpx.Client) -> None:
    """ "Red threes, list, Red threes": the caption, then the list's name."""
    deal = classic_four()
    names = ("r3ann", "r3bob", "r3cyd", "r3dee")
    game = start_table(http, deal, names)
    play_step(http, game, deal.steps[0])  # the cut: r3cyd's red three is laid at once
    page = open_page(sign_in(new_context(), game.headers["r3ann"]), f"/tables/{game.table}")
    threes = page.locator("#deal .red-threes")
    expect(threes).to_be_visible()
    expect(threes).to_contain_text("Red threes")  # printed for the eye
    # The side's region as a screen reader has it (read again if the deal was being redrawn).
    page.wait_for_function("() => !!document.querySelector('#deal .red-threes [role=img]')")
    spoken = snapshot(threes.locator(".."))
    assert spoken.count("Red threes") == 1 and "three of hearts" in spoken, spoken
    screenshot(page, "red-threes-named-once", full_page=False)


def test_a_refusal_says_its_rank_by_its_word(new_context: NewContext, http: httpx.Client) -> None:
    """ "... meld the top card with two natural Js from your hand": his screen reader said
    "J s"; the page prints the server's words and says "two natural jacks", in Russian
    "с двумя натуральными валет" where it said «J»."""
    deal = classic_four()
    names = ("rrann", "rrbob", "rrcyd", "rrdee")
    game = start_table(http, deal, names)
    for step in deal.steps[:4]:  # ... seat 0 discards J♠: the pile frozen for side B
        play_step(http, game, step)
    bob = table_page(new_context(), game.headers["rrbob"], game.table)
    bob.locator('#hand [data-card="JD/1"]').click()  # one jack: not a pair
    bob.locator('#moves [data-move="take_pile"]').click()
    detail = bob.locator("#error .refusal-detail")
    expect(detail.locator("[aria-hidden=true]")).to_contain_text("two natural Js")
    expect(detail.locator(".visually-hidden")).to_contain_text("two natural jacks")
    assert " Js " not in detail.aria_snapshot(), detail.aria_snapshot()
    screenshot(bob, "refusal-rank-said", full_page=False)
    in_language(bob, "ru")
    expect(detail.locator("[aria-hidden=true]")).to_contain_text("натуральными J ")
    expect(detail.locator(".visually-hidden")).to_contain_text("натуральными валет ")
