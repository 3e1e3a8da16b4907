"""The pages for a player who plays with the keyboard only or with a screen reader, and on a
phone (docs/web.md, "Accessibility"), as such a player met them: on a phone the move panel
covered his hand when his turn came."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Backend
from tests.support.http import Headers, register_player, send_with_menu
from tests.web.conftest import PHONES, TOUCH, NewContext, screenshot, stacked_decks_server
from tests.web.deals import classic_four, play_step, send, start_table
from tests.web.pages import HEARD, in_language, open_page, sign_in, snapshot, table_page
from tests.web.practice import his_draw, play_moves, start_practice, wait_until_quiet

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

AUDITOR = "aldo"


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """This module's server deals stacked decks (tests/web/deals.py); ``aldo`` audits."""
    yield from stacked_decks_server(tmp_path_factory, "accessibility", CANASTA_AUDITORS=AUDITOR)


@pytest.fixture(scope="module")
def auditor(web_server: Backend) -> Headers:
    """The auditor's headers, registered once for the module's tests."""
    with httpx.Client(base_url=web_server.server.url, timeout=10) as client:
        return register_player(client, AUDITOR)


#: In the page: is the whole hand on the screen, above the move panel that stays at its bottom?
HAND_ABOVE_PANEL = """() => {
  const hand = document.getElementById("hand")?.getBoundingClientRect();
  const panel = document.getElementById("moves").getBoundingClientRect();
  return !!hand && hand.top >= 0 && hand.bottom <= panel.top + 0.5 && panel.bottom <= innerHeight + 0.5;
}"""


def practice_page(
    new_context: NewContext, http: httpx.Client, name: str, **options: Any
) -> tuple[Page, str]:
    """``name``'s practice game against the basic bot, on his table page (a new context with
    ``options``); and its first deal's id."""
    headers = register_player(http, name)
    table, deal = start_practice(http, headers)
    return table_page(new_context(**options), headers, table), deal


def test_on_a_phone_his_hand_and_the_move_panel_are_both_in_sight_when_his_turn_comes(
    new_context: NewContext, http: httpx.Client
) -> None:
    page, _ = practice_page(new_context, http, "pia", viewport=PHONES["upright"], **TOUCH)
    his_draw(page)
    # Drawn: his two new cards and the panel's play step in sight together.
    page.locator('#moves [data-move="draw"]').tap()
    discard = page.locator('#moves [data-move="discard"]')
    expect(discard).to_be_visible()
    page.wait_for_function(HAND_ABOVE_PANEL)
    screenshot(page, "phone-turn-hand-in-sight-play", full_page=False)
    page.locator("#hand button[data-card]").last.tap()
    # While the bot plays he looks at the top of the page (the seats, the pile). When his turn
    # comes his hand is in sight above the panel: he had to scroll past the deal to find his
    # cards, under the panel, at every turn. He scrolls up before he discards (the panel stays
    # at the screen's bottom): scrolled after, a quick bot's turn could end first, and the
    # scroll would undo the page's.
    page.evaluate("() => window.scrollTo(0, 0)")
    discard.tap()
    expect(page.locator('#moves [data-move="draw"]')).to_be_visible()
    page.wait_for_function(HAND_ABOVE_PANEL)
    screenshot(page, "phone-turn-hand-in-sight", full_page=False)


#: A card's face as the page prints it ("Q♥", "10♣", "★"): never what a screen reader is given.
GLYPHS = re.compile(r"[♠♥♦♣★☆]")
#: A card as a screen reader is given it: an image named "queen of hearts, deck 2".
SPOKEN_CARD = re.compile(r'img "(\w+ of \w+|big joker|little joker), deck \d"')
#: In the page: the live regions around the log, if any (a region read out as it changes).
LIVE_AROUND_LOG = """() => !!document.getElementById("log")
  .closest('[aria-live]:not([aria-live=off]), [role=log], [role=status], [role=alert]')"""


def test_a_screen_reader_hears_the_moves_made_since_he_opened_the_page_in_words(
    new_context: NewContext, http: httpx.Client
) -> None:
    headers = register_player(http, "ray")
    table, deal = start_practice(http, headers)
    play_moves(http, headers, deal, 4)  # the deal under way before he opens the page
    quiet = wait_until_quiet(http, headers, deal)
    page = table_page(new_context(), headers, table)
    expect(page.locator(f"#log li[data-step='{quiet}']")).to_be_attached()
    # The log is not read out: opening the page read every line of the deal so far (and a
    # switch of language read them all again). Only what happens from now on is spoken.
    assert not page.evaluate(LIVE_AROUND_LOG)
    said = page.locator("#said p")
    expect(said).to_have_count(0)
    # His log's lines give a screen reader the cards' names, not the symbols printed.
    dealt = page.locator("#log li[data-kind=CardsDealt]")
    expect(dealt).to_contain_text("Your cards:")
    assert GLYPHS.search(dealt.inner_text().split("Your cards:")[1])
    spoken = dealt.aria_snapshot()
    assert "Your cards:" in spoken and " of " in spoken and not GLYPHS.search(spoken), spoken
    # A move now (his, then the bot's): said once each, in words.
    play_moves(http, headers, deal, 2)
    expect(said.first).to_be_attached()
    lines = said.all_inner_texts()
    assert lines and not any(GLYPHS.search(line) for line in lines), lines
    assert len(lines) <= 4, lines  # the latest few, never the whole log
    # The pile's top and the cards of his hand, as the replay shows them (no buttons there):
    # each an image named by its card; they were silent (a bare label on a span is not read).
    events = http.get(f"/deals/{deal}/events", headers=headers).json()
    started = next(e["step"] for e in events if e["kind"] == "PlayStarted")
    replay = new_context()
    sign_in(replay, headers)
    shown = open_page(replay, f"/deals/{deal}/replay?step={started}")
    expect(shown.locator(f"#deal .deal[data-step='{started}'] .pile .card").first).to_be_attached()
    pile = shown.locator("#deal .pile").aria_snapshot()
    assert SPOKEN_CARD.search(pile), pile
    hand = shown.locator("#deal #hand").aria_snapshot()
    assert len(SPOKEN_CARD.findall(hand)) >= 11, hand
    # The step's words are spoken too.
    expect(shown.locator("#words-said")).not_to_be_empty()
    assert not GLYPHS.search(shown.locator("#words-said").inner_text())


#: In the page (JavaScript put at the start of a function): a colour's contrast with another
#: (WCAG's ratio), and the background behind a node, the first opaque one of it or its
#: ancestors (the pages draw no text over images).
COLOURS = """
  const rgb = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const channel = (c) => { c /= 255; return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  const luminance = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  const contrast = (one, other) => {
    const [a, b] = [luminance(one), luminance(other)].sort((x, y) => y - x);
    return (a + 0.05) / (b + 0.05);
  };
  const background = (node) => {
    for (let at = node; at; at = at.parentElement) {
      const colour = rgb(getComputedStyle(at).backgroundColor);
      if (colour.length === 3 || colour[3] === 1) return colour.slice(0, 3);
    }
    return [255, 255, 255];
  };
"""

#: In the page: each visible text whose colour stands against its background at less than WCAG
#: AA's 4.5:1 (3:1 for large text), as [ratio, words, colour, background].
LOW_CONTRAST = (
    "() => {"
    + COLOURS
    + """
  const low = [];
  for (const node of document.querySelectorAll("body *")) {
    const words = [...node.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join("").trim();
    const box = node.getBoundingClientRect();
    if (!words || box.width <= 1 || box.height <= 1 || !node.checkVisibility()) continue;
    const style = getComputedStyle(node);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    const ratio = contrast(rgb(style.color), background(node));
    if (ratio < (large ? 3 : 4.5)) low.push([ratio.toFixed(2), words.slice(0, 40), style.color, background(node).join(",")]);
  }
  return low;
}"""
)


def test_the_table_s_words_stand_out_from_their_background(
    new_context: NewContext, http: httpx.Client
) -> None:
    page, deal = practice_page(new_context, http, "cam")
    his_draw(page)
    page.locator('#moves [data-move="draw"]').click()
    # His play step, nothing selected yet: Meld and Discard are there, not yet to be pressed.
    # Their grey read 2.6:1, white on grey: a player with low sight could not tell what they were.
    expect(page.locator('#moves [data-move="discard"]')).to_be_disabled()
    assert page.evaluate(LOW_CONTRAST) == []
    screenshot(page, "table-contrast", full_page=False)
    lobby = open_page(new_context(), "/")
    assert lobby.evaluate(LOW_CONTRAST) == []
    # The replay's first step: First and Previous cannot be pressed there.
    replay = open_page(page.context, f"/deals/{deal}/replay?step=1")
    expect(replay.get_by_role("button", name="Previous")).to_be_disabled()
    assert replay.evaluate(LOW_CONTRAST) == []


#: In the page: what has the focus ("body" when it is lost), and whether the ring drawn around
#: it (the outline, or the ring of a box-shadow) stands out from what is behind it at 3:1.
FOCUS = (
    "() => {"
    + COLOURS
    + """
  const node = document.activeElement;
  if (!node || node === document.body) return { at: "body", ring: 0 };
  const behind = background(node.parentElement);
  const style = getComputedStyle(node);
  const rings = [];
  if (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) >= 2) rings.push(rgb(style.outlineColor));
  if (style.boxShadow !== "none") rings.push(rgb(style.boxShadow).slice(0, 3));
  const at = node.id || node.dataset.move || (node.dataset.card ? "card" : node.tagName);
  return { at, inMoves: !!node.closest("#moves"), ring: Math.max(0, ...rings.map((ring) => contrast(ring, behind))) };
}"""
)


def tab_to(page: Page, selector: str, back: bool = False) -> None:
    """Tab (or Shift+Tab) until the focus is on an element that matches ``selector``."""
    for _ in range(80):
        if page.evaluate(f"() => !!document.activeElement?.matches({selector!r})"):
            return
        page.keyboard.press("Shift+Tab" if back else "Tab")
    pytest.fail(f"Tab never reached {selector}: {page.evaluate(FOCUS)}")


def cut_by_keyboard(page: Page) -> None:
    """Cuts by the keyboard if the deal asks him to; then waits for his draw."""
    cut = page.locator('#moves [data-move="cut"]')
    draw = page.locator('#moves [data-move="draw"]')
    expect(cut.or_(draw)).to_be_visible()
    if cut.is_visible():
        tab_to(page, '#moves [data-move="cut"]')
        page.keyboard.press("Enter")
    expect(draw).to_be_visible()


def test_a_turn_by_keyboard_alone_keeps_the_focus_in_sight_and_says_the_move(
    new_context: NewContext, http: httpx.Client
) -> None:
    page, _ = practice_page(new_context, http, "kai")
    cut_by_keyboard(page)
    # His seat says whose turn it is; its arrow is for the eye: a screen reader said "black
    # right-pointing triangle, to play".
    seat = page.locator("#deal li[data-turn=true]")
    expect(seat).to_contain_text("▶ to play")
    spoken = snapshot(seat)
    assert "to play" in spoken and "▶" not in spoken, spoken
    tab_to(page, '#moves [data-move="draw"]')
    # The ring around the focused button: amber on white read 1.9:1, hard to find.
    focus = page.evaluate(FOCUS)
    assert focus["ring"] >= 3, focus
    page.keyboard.press("Enter")
    discard = page.locator('#moves [data-move="discard"]')
    expect(discard).to_be_visible()
    focus = page.evaluate(FOCUS)
    assert focus["at"] == "moves" or focus["inMoves"], focus  # never lost to the page
    # Back into his hand (it comes just before the panel), a card chosen with Space.
    tab_to(page, "#hand button[data-card]", back=True)
    focus = page.evaluate(FOCUS)
    assert focus["ring"] >= 3, focus
    card = page.evaluate("() => document.activeElement.getAttribute('aria-label')")
    page.keyboard.press("Space")
    expect(page.locator("#hand button[aria-pressed=true]")).to_have_count(1)
    tab_to(page, '#moves [data-move="discard"]')
    page.evaluate(HEARD)
    page.keyboard.press("Enter")
    # His discard is said in words ("kai discarded queen of hearts."), in the spoken log, once.
    said = f"kai discarded {card.rsplit(',', 1)[0]}."
    page.wait_for_function("said => window.heard.includes(said)", arg=said)
    heard = page.evaluate("() => window.heard")
    assert heard.count(said) == 1 and not any(GLYPHS.search(line) for line in heard), heard
    focus = page.evaluate(FOCUS)
    assert focus["at"] != "body", focus
    screenshot(page, "table-keyboard-discarded", full_page=False)


def test_melds_and_the_audit_s_steps_are_named_in_words(
    new_context: NewContext, http: httpx.Client, auditor: Headers
) -> None:
    deal = classic_four()
    game = start_table(http, deal)
    for step in deal.steps:
        play_step(http, game, step)
        if step.kind == "meld":
            break
    page = open_page(new_context(), f"/tables/{game.table}")
    meld = page.locator("#deal [data-meld]").first
    expect(meld).to_contain_text(re.compile(r"^\S+ ×\d"))  # printed "A ×3"
    # Spoken "ace: a meld of 3 cards", not "A times 3"; the hand's "K ×3" the same way.
    sides = page.locator("#deal .sides")
    expect(sides).to_match_aria_snapshot("- group /\\w+. a meld of \\d+ cards.*/")
    assert "×" not in sides.aria_snapshot()
    context = new_context()
    sign_in(context, auditor)
    audit = open_page(context, f"/audit/deals/{game.deal}")
    summaries = audit.locator("#audit-events summary")
    expect(summaries.first).to_be_attached()
    # Tab went through a row of summaries all named "The stored record and every hand at this
    # step": each says its step now.
    names = summaries.evaluate_all("nodes => nodes.map((node) => node.getAttribute('aria-label'))")
    assert len(set(names)) == len(names) and "(Step 1)" in names[0], names


def test_the_lobby_s_buttons_and_links_are_named_after_their_table(
    new_context: NewContext, http: httpx.Client
) -> None:
    """A screen reader's list of buttons read "Take a seat, Take a seat": each is named
    after its table too, its visible words first (so a spoken command finds it)."""
    for host in ("hanna", "hugo"):
        headers = register_player(http, host)
        created = http.post("/tables", json={"entry": "classic", "players": 4}, headers=headers)
        assert created.status_code == 201, created.text
    visitor = register_player(http, "vera")
    page = open_page(sign_in(new_context(), visitor), "/")
    seats = page.get_by_role("button", name=re.compile(r"^Take a seat: "))
    expect(seats).to_have_count(2)
    names = {seats.nth(i).get_attribute("aria-label") for i in range(2)}
    assert names == {
        "Take a seat: Classic table of 4, host hanna",
        "Take a seat: Classic table of 4, host hugo",
    }


#: A card's spoken Russian name: "дама червей", "большой джокер".
RUSSIAN_CARD = re.compile(r"^(\w+ \w+|большой джокер|малый джокер)$")


def test_a_russian_screen_reader_hears_the_cards_one_by_one_each_in_a_sentence_that_fits(
    new_context: NewContext, http: httpx.Client
) -> None:
    """A Russian player's screen reader said "nika сбрасывает двойка бубён" (a name in the
    nominative where the sentence needs the accusative), and his dealt cards as one run of
    words, "валет червей десятка червей дама пик ...": a row of cards is a list now, and each
    sentence names a card where its nominative is right, after a colon."""
    headers = register_player(http, "nika")
    table, _ = start_practice(http, headers)
    page = open_page(sign_in(new_context(locale="ru-RU"), headers), f"/tables/{table}")
    page.evaluate(HEARD)
    cut_by_keyboard(page)  # if he cuts: his cards are dealt then
    dealt = page.locator("#log li[data-kind=CardsDealt] .visually-hidden")
    expect(dealt).to_contain_text("Ваши карты: ")
    cards = dealt.inner_text().split("Ваши карты: ")[1].removesuffix(".").split(", ")
    assert len(cards) >= 11 and all(RUSSIAN_CARD.match(card) for card in cards), cards
    tab_to(page, '#moves [data-move="draw"]')
    page.keyboard.press("Enter")
    # "nika берёт из прикупа: дама червей, семёрка пик." (two cards in a game of two).
    page.wait_for_function(
        "() => window.heard.some((line) => line.startsWith('nika берёт из прикупа: '))"
    )
    drawn = next(
        line for line in page.evaluate("() => window.heard") if "берёт из прикупа: " in line
    )
    drawn_cards = drawn.split(": ", 1)[1].removesuffix(".").split(", ")
    assert len(drawn_cards) == 2 and all(RUSSIAN_CARD.match(c) for c in drawn_cards), drawn
    tab_to(page, "#hand button[data-card]", back=True)
    card = page.evaluate("() => document.activeElement.getAttribute('aria-label')")
    page.keyboard.press("Space")
    tab_to(page, '#moves [data-move="discard"]')
    page.keyboard.press("Enter")
    said = f"nika сбрасывает карту: {card.rsplit(',', 1)[0]}."
    page.wait_for_function("said => window.heard.includes(said)", arg=said)


def test_the_replay_s_and_the_audit_s_summaries_show_where_the_focus_is(
    new_context: NewContext, http: httpx.Client, auditor: Headers
) -> None:
    """Tab reached the replay's "Every step" and the audit's records, summaries that opened
    with Enter, but their ring was the browser's thin default: the focus seemed lost."""
    headers = auditor
    _, deal = start_practice(http, headers)
    play_moves(http, headers, deal, 2)
    context = sign_in(new_context(), headers)
    replay = open_page(context, f"/deals/{deal}/replay?step=1")
    tab_to(replay, "summary")
    focus = replay.evaluate(FOCUS)
    assert focus["ring"] >= 3, focus
    replay.keyboard.press("Enter")
    expect(replay.locator("details:has(> summary)")).to_have_attribute("open", "")
    screenshot(replay, "replay-summary-focus", full_page=False)
    audit = open_page(context, f"/audit/deals/{deal}")
    expect(audit.locator("#audit-events summary").first).to_be_attached()
    tab_to(audit, "#audit-events summary")
    focus = audit.evaluate(FOCUS)
    assert focus["ring"] >= 3, focus
    screenshot(audit, "audit-summary-focus", full_page=False)


#: In the page: the hand's cards (their codes, in order) and which of them has the focus.
HAND_FOCUS = """() => {
  const cards = [...document.querySelectorAll("#hand button[data-card]")];
  return { count: cards.length, at: cards.indexOf(document.activeElement) };
}"""


def test_the_arrow_keys_move_along_his_hand(new_context: NewContext, http: httpx.Client) -> None:
    """Shift+Tab from the move panel comes to his hand's last card; its first was fourteen
    more Shift+Tabs away. The arrows, Home and End move along the hand; Tab still stops at
    every card, Space still chooses one."""
    page, _ = practice_page(new_context, http, "ari")
    his_draw(page)
    tab_to(page, '#moves [data-move="draw"]')
    page.keyboard.press("Enter")
    expect(page.locator('#moves [data-move="discard"]')).to_be_visible()
    tab_to(page, "#hand button[data-card]", back=True)
    hand = page.evaluate(HAND_FOCUS)
    assert hand["at"] == hand["count"] - 1 and hand["count"] >= 11, hand
    page.keyboard.press("Home")
    assert page.evaluate(HAND_FOCUS)["at"] == 0
    page.keyboard.press("ArrowLeft")  # at the first card it stays
    assert page.evaluate(HAND_FOCUS)["at"] == 0
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    assert page.evaluate(HAND_FOCUS)["at"] == 2
    page.keyboard.press("ArrowUp")
    assert page.evaluate(HAND_FOCUS)["at"] == 1
    focus = page.evaluate(FOCUS)
    assert focus["ring"] >= 3, focus
    page.keyboard.press("Space")
    expect(page.locator("#hand button[data-card]").nth(1)).to_have_attribute("aria-pressed", "true")
    assert page.evaluate(HAND_FOCUS)["at"] == 1  # the redraw keeps the focus on the card
    page.keyboard.press("End")
    assert page.evaluate(HAND_FOCUS)["at"] == hand["count"] - 1
    screenshot(page, "table-keyboard-hand-arrows", full_page=False)


def test_enter_in_the_cut_s_field_cuts_the_number_typed(
    new_context: NewContext, http: httpx.Client
) -> None:
    """He typed how many cards to lift and pressed Enter, as in any form: nothing happened
    (he had to Tab on to the button). Enter cuts now."""
    names = ("cuann", "cubob", "cucyd", "cudee")
    game = start_table(http, classic_four(cut=30), names)
    page = open_page(sign_in(new_context(), game.headers["cuann"]), f"/tables/{game.table}")
    tab_to(page, "#cut-n")
    page.keyboard.press("ControlOrMeta+a")
    page.keyboard.type("30")
    page.keyboard.press("Enter")
    expect(page.locator("#log li[data-kind=DeckCut]")).to_have_text(
        "cuann cut the deck, lifting 30."
    )
    focus = page.evaluate(FOCUS)
    assert focus["at"] != "body", focus


def test_the_next_deal_is_said_from_its_beginning(
    new_context: NewContext, http: httpx.Client
) -> None:
    """He pressed Next deal by the keyboard: his screen reader said nothing of the new deal
    (its beginning, who cuts, his new cards) but the moves made after the page had read it."""
    deal = classic_four()
    names = ("ndann", "ndbob", "ndcyd", "nddee")
    game = start_table(http, deal, names)
    for step in deal.steps:
        play_step(http, game, step)
    host = game.headers["ndann"]
    page = open_page(sign_in(new_context(), host), f"/tables/{game.table}")
    page.evaluate(HEARD)
    tab_to(page, "#next-deal")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => window.heard.some((line) => line.startsWith('Deal 2 of Classic begins'))"
    )
    focus = page.evaluate(FOCUS)
    assert focus["at"] != "body", focus
    # Its cutter cuts: the cards dealt, his own named, are said too (as before).
    deal_id = http.get(f"/tables/{game.table}").json()["current_deal"]
    for name in names:
        menu = http.get(f"/deals/{deal_id}/moves", headers=game.headers[name]).json()
        cuts = [move for move in menu["moves"] if move["type"] == "cut"]
        if cuts:
            send_with_menu(http, game.headers[name], deal_id, cuts[0])
    page.wait_for_function("() => window.heard.some((line) => line.includes('Your cards: '))")
    heard = page.evaluate("() => window.heard")
    assert heard[0].startswith("Deal 2 of Classic begins"), heard  # nothing of deal 1 again
    assert sum("Your cards: " in line for line in heard) == 1, heard


def test_a_red_three_laid_is_said_apart_from_its_card(
    new_context: NewContext, http: httpx.Client
) -> None:
    """ "cyd laid down the red three three of hearts", "cyd亮出红三红心3": the kind and the
    card ran together; a colon sets the card apart now, in every language."""
    deal = classic_four()
    names = ("rtann", "rtbob", "rtcyd", "rtdee")
    game = start_table(http, deal, names)
    play_step(http, game, deal.steps[0])  # the cut: rtcyd's red three is laid at once
    page = open_page(sign_in(new_context(), game.headers["rtann"]), f"/tables/{game.table}")
    spoken = page.locator("#log li[data-kind=RedThreeLaid] .visually-hidden")
    for lang, words in (
        ("en", "rtcyd laid down a red three: three of hearts."),
        ("zh", "rtcyd亮出红三：红心3。"),
        ("ru", "rtcyd выкладывает красную тройку: тройка червей."),
    ):
        in_language(page, lang)
        expect(spoken).to_have_text(words)


def test_a_meld_s_rank_is_said_by_its_name(new_context: NewContext, http: httpx.Client) -> None:
    """ "mkdee added king of hearts ... to the K meld": a screen reader read the printed
    letter ("the A meld" as "the uh meld", «Q» in a Russian sentence); the meld's rank is
    said by its name now, as its meld is ("king: a meld of 4 cards")."""
    deal = classic_four()
    names = ("mkann", "mkbob", "mkcyd", "mkdee")
    game = start_table(http, deal, names)
    for step in deal.steps[: [s.move for s in deal.steps].index("seat 1 answers yes") + 1]:
        play_step(http, game, step)
    four = {"cards": ["KC/1", "KD/1", "KD/2", "KH/1"], "rank": "K"}
    queens = {"cards": ["QC/1", "QD/1", "QH/1", "QS/1"], "rank": "Q"}
    send(http, game, 3, {"type": "meld", "melds": [four, queens], "discard": None})
    more = {"cards": ["KH/2", "KS/1", "KS/2"], "rank": "K"}
    send(http, game, 3, {"type": "meld", "melds": [more], "discard": None})
    page = open_page(sign_in(new_context(), game.headers["mkann"]), f"/tables/{game.table}")
    added = page.locator("#log li[data-kind=MeldExtended]")
    expect(added.locator("[aria-hidden=true]")).to_have_text(
        re.compile(r"^mkdee added K♥ K♠ K♠ to the K meld of Side B\.$")
    )
    expect(added.locator(".visually-hidden")).to_have_text(
        "mkdee added king of hearts, king of spades, king of spades to the king meld of Side B."
    )
    in_language(page, "ru")
    expect(added.locator(".visually-hidden")).to_have_text(
        "mkdee добавляет к комбинации «король» (Команда B): король червей, король пик, король пик."
    )
    # The replay says it the same way, at that step and in its list of steps.
    at = int(added.get_attribute("data-step") or 0)
    replay = open_page(page.context, f"/deals/{game.deal_id}/replay?step={at}")
    expect(replay.locator("#words-said")).to_contain_text("к комбинации «король»")
    listed = replay.locator(f"#step-list li[data-step='{at}'] button")
    assert "«король»" in (listed.get_attribute("aria-label") or ""), listed.get_attribute(
        "aria-label"
    )
