"""The table page on a phone held upright, a small one and one on its side, played by tapping
(docs/web.md, "Layout"): the cards a player taps and the button that plays them are on screen
together, the move panel never hides a card, and a refused move is said where he is looking."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.conftest import Backend
from tests.support.http import open_table, register_player
from tests.web.conftest import (
    DESKTOP,
    PHONES,
    TOUCH,
    NewContext,
    screenshot,
    scroll_to,
    stacked_decks_server,
)
from tests.web.deals import NAMES, classic_four, deck_for, play_step, start_table
from tests.web.pages import LIVE_MS, open_lobby, signed_in, table_page
from tests.web.practice import play_moves, wait_until_quiet

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`, not `make test-fast`

#: In the page: is the element on screen, whole, and the one a tap at its centre reaches
#: (nothing drawn over it)? Answers what covers it otherwise.
REACHABLE = """node => {
  const box = node.getBoundingClientRect();
  const inside = box.top >= 0 && box.left >= 0 && box.bottom <= innerHeight + 0.5
    && box.right <= innerWidth + 0.5;
  if (!inside) return `off screen: ${JSON.stringify(box)} in ${innerWidth}x${innerHeight}`;
  const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  return node.contains(hit) ? "" : `covered by ${hit?.outerHTML.slice(0, 80)}`;
}"""


def reachable(locator: Any) -> None:
    """The element is on screen and a tap at its centre reaches it."""
    assert locator.evaluate(REACHABLE) == ""


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """A server set up for tests: the host may say who deals (R-DEAL-3)."""
    yield from stacked_decks_server(tmp_path_factory, "phone")


def move(page: Page, name: str) -> Any:
    return page.locator(f'#moves [data-move="{name}"]')


@pytest.mark.parametrize("held", list(PHONES))
def test_a_player_taps_cards_and_plays_them_without_losing_either_from_sight(
    new_context: NewContext, web_server: Backend, http: httpx.Client, held: str
) -> None:
    # bob (seat 1) cuts and plays first: seat 0 deals.
    game = open_table(http, [f"ann-{held}", f"bob-{held}"], start=False)
    game.start({"dealer": 0})
    context = new_context(viewport=PHONES[held], **TOUCH)
    bob = table_page(context, game.headers[f"bob-{held}"], game.table)
    hand = bob.locator("#hand button[data-card]")
    move(bob, "cut").tap()
    expect(hand).to_have_count(15)
    move(bob, "draw").tap()
    expect(hand).to_have_count(17)
    expect(move(bob, "meld")).to_be_visible()

    # From the top of the deal (the seats, the pile), the buttons that play are on screen.
    scroll_to(bob.locator("#deal"), "start")
    screenshot(bob, f"phone-{held}-deal-top", full_page=False)
    reachable(move(bob, "meld"))
    # No card is hidden under the move panel once scrolled into view (from above: it lands at
    # the bottom of the screen), nor is the panel once a card is tapped.
    codes = hand.evaluate_all("nodes => nodes.map(n => n.dataset.card)")
    for code in codes:
        card = bob.locator(f'#hand [data-card="{code}"]')
        scroll_to(bob.locator("#deal"), "start")
        scroll_to(card)
        reachable(card)
    two = [codes[0], codes[-1]]  # two cards are never a meld (R-MELD-1)
    for code in two:
        bob.locator(f'#hand [data-card="{code}"]').tap()
        reachable(bob.locator(f'#hand [data-card="{code}"]'))
        reachable(move(bob, "meld"))
    screenshot(bob, f"phone-{held}-selected", full_page=False)
    move(bob, "meld").tap()
    # The refusal is said on screen, in the move panel, not at the top of the page.
    error = bob.locator("#error")
    expect(error).to_contain_text("Refused")
    reachable(error)
    expect(bob.locator("#moves #error")).to_be_visible()
    screenshot(bob, f"phone-{held}-refused", full_page=False)

    move(bob, "clear").tap()
    bob.locator(f'#hand [data-card="{codes[-1]}"]').tap()
    reachable(move(bob, "discard"))
    move(bob, "discard").tap()
    expect(hand).to_have_count(0)  # not his turn: the cards are not buttons any more
    expect(bob.locator("#hand [data-card]")).to_have_count(16)
    # The next move clears the refusal; the page never scrolls sideways.
    expect(error).to_be_hidden()
    assert bob.evaluate("() => document.scrollingElement.scrollWidth <= innerWidth")


#: In the page: is the hand's top where it was (``top``)? The hand is looked up at each try: the
#: deal is drawn anew at each of the page's reads (a stream event may come after the view the
#: test waited for), and a hand held from before such a redraw is detached, its top 0.
HAND_AT = "top => Math.abs(document.getElementById('hand').getBoundingClientRect().top - top) < 1"


def test_the_hand_stays_where_the_player_looks_while_the_others_meld(
    new_context: NewContext, web_server: Backend, http: httpx.Client
) -> None:
    """The deal above the hand grows (a meld of aces, a question, a canasta of kings) while
    cyd (seat 2) looks at his hand: it stays where it was on his screen."""
    deal = classic_four()
    game = start_table(http, deal, tuple(f"{name}-still" for name in NAMES))
    cyd = table_page(
        new_context(viewport=PHONES["upright"], **TOUCH), game.headers["cyd-still"], game.table
    )
    play_step(http, game, deal.steps[0])  # the cut: the hands are dealt
    hand = cyd.locator("#hand")
    dealt = http.get(f"/deals/{game.deal_id}").json()["step"]
    expect(cyd.locator(f'#deal .deal[data-step="{dealt}"]')).to_be_attached()
    expect(cyd.locator("#hand [data-card]")).to_have_count(11)
    scroll_to(hand, "center")
    top = hand.evaluate("node => node.getBoundingClientRect().top")
    for step in deal.steps[1:-1]:  # to the last move, which ends the deal
        play_step(http, game, step)
        step_now = http.get(f"/deals/{game.deal_id}").json()["step"]
        expect(cyd.locator(f'#deal .deal[data-step="{step_now}"]')).to_be_attached()
        # (a mobile page scrolls a moment after the call that asks it to)
        try:
            cyd.wait_for_function(HAND_AT, arg=top, timeout=3000)
        except PlaywrightTimeout:
            moved = hand.evaluate("node => node.getBoundingClientRect().top") - top
            pytest.fail(f"after {step.move}, the hand moved by {moved} px")
    expect(cyd.locator('[data-meld="K"][data-side="B"]')).to_be_attached()
    screenshot(cyd, "phone-hand-kept-in-place", full_page=False)


def cards(text: str) -> list[str]:
    """Card codes written one after another: ``cards("AS/1 KH/2")``."""
    return text.split()


#: A deal of two where bob (seat 1, who cuts and plays first) opens with K♠ K♥ K♦ and 2♣.
KINGS_AND_A_TWO = deck_for(
    "classic",
    2,
    0,
    50,
    {
        0: cards("AS/1 AH/1 AD/1 7S/1 7H/1 7D/1 4C/1 5C/1 6C/1 8C/1 9C/1 10C/1 JC/1 QC/1 KC/1"),
        1: cards("KS/1 KH/1 KD/1 2C/1 4D/1 5D/1 6D/1 8D/1 9D/1 10D/1 JD/1 QD/1 4S/1 5S/1 6S/1"),
    },
    ["9H/1", "8H/1", "8S/1"],
)

#: In the page: do the boxes of the parts of a card, or of a label, overlap (the outline of a
#: selected card counts: 4 px around it)? Both are looked up and measured in one go, in the page
#: as it is drawn now: the deal is drawn anew at each of the page's reads (a stream event that
#: comes late on a busy machine), and an element held from before such a redraw is detached,
#: its box 0 x 0 at the corner (two of them "overlap" by the margin).
OVERLAPS = """([first, second, margin]) => {
  const [one, two] = [first, second].map((selector) => document.querySelector(selector));
  if (!one || !two) return `not on the page: ${one ? second : first}`;
  const a = one.getBoundingClientRect();
  const b = two.getBoundingClientRect();
  return a.left < b.right + margin && b.left < a.right + margin
    && a.top < b.bottom + margin && b.top < a.bottom + margin;
}"""


def overlap(page: Page, first: str, second: str, margin: int = 0) -> bool:
    """Do the elements the CSS selectors ``first`` and ``second`` find overlap on the page?"""
    answer = page.evaluate(OVERLAPS, [first, second, margin])
    if isinstance(answer, str):
        pytest.fail(answer)
    return bool(answer)


def test_selected_cards_and_a_wild_card_in_a_meld_stay_readable(
    new_context: NewContext, web_server: Backend, http: httpx.Client
) -> None:
    game = open_table(http, ["ann-reads", "bob-reads"], start=False)
    game.start({"dealer": 0, "deck": KINGS_AND_A_TWO})
    bob = table_page(
        new_context(viewport=PHONES["small"], **TOUCH), game.headers["bob-reads"], game.table
    )
    bob.locator("#cut-n").fill("50")  # the deck is stacked for that cut
    move(bob, "cut").tap()
    move(bob, "draw").tap()
    expect(bob.locator("#hand button[data-card]")).to_have_count(17)
    kings = ["KS/1", "KH/1", "KD/1"]
    for code in [*kings, "2C/1"]:
        bob.locator(f'#hand [data-card="{code}"]').tap()
    # A selected card is lifted and outlined: its group's label ("K ×3") is not under it.
    for code in [*kings, "2C/1"]:
        selected = f'#hand [data-card="{code}"]'
        expect(bob.locator(selected)).to_have_attribute("aria-pressed", "true")
        label = f'#hand .group:has([data-card="{code}"]) .group-label'
        assert not overlap(bob, label, selected, margin=4), f"{code} covers its group's label"
    screenshot(bob, "phone-selected-labels", full_page=False)
    move(bob, "meld").tap()
    in_meld = '[data-meld="K"][data-side="B"] [data-card="2C/1"]'
    two = bob.locator(in_meld)
    expect(two).to_be_visible()
    # Its mark ("WILD") is under its suit, not printed over it.
    assert not overlap(bob, f"{in_meld} .suit", f"{in_meld} .mark")
    assert not overlap(bob, f"{in_meld} .rank", f"{in_meld} .mark")
    scroll_to(two)  # (a redraw by a late stream event may replace it while it scrolls)
    screenshot(bob, "phone-wild-in-meld", full_page=False)
    # The hint says how to add to a meld in words that fit a touch screen.
    expect(bob.locator("#move-hint")).to_contain_text("tap or click the meld")


def test_the_turn_clock_is_in_sight_while_the_player_chooses(
    new_context: NewContext, web_server: Backend, http: httpx.Client
) -> None:
    game = open_table(http, ["ann-clock", "bob-clock"], start=False, table={"turn_seconds": 120})
    game.start({"dealer": 0})
    bob = table_page(
        new_context(viewport=PHONES["upright"], **TOUCH), game.headers["bob-clock"], game.table
    )
    move(bob, "cut").tap()
    move(bob, "draw").tap()
    hand = bob.locator("#hand button[data-card]")
    expect(hand).to_have_count(17)
    hand.last.tap()  # his eyes on the bottom of his hand, far below the top of the page
    clock = bob.get_by_role("timer")
    expect(clock).to_contain_text("s left to play")
    reachable(clock)
    reachable(move(bob, "discard"))
    screenshot(bob, "phone-turn-clock", full_page=False)
    # A spectator has no move panel: the clock is at the top of his page.
    watcher = new_context(viewport=PHONES["upright"], **TOUCH).new_page()
    watcher.goto(f"/tables/{game.table}")
    expect(watcher.get_by_role("timer")).to_contain_text("bob-clock")
    reachable(watcher.get_by_role("timer"))


def test_the_host_s_controls_fit_the_table_s_card_in_the_lobby(
    new_context: NewContext, web_server: Backend, http: httpx.Client
) -> None:
    """A host on a small phone with an open table of six: its teams and "Add a bot" stay
    inside the table's card, whose every button he can tap."""
    game = open_table(http, ["hal-fits"], start=False, table={"entry": "extra_six", "players": 6})
    page = signed_in(open_lobby(new_context(viewport=PHONES["small"], **TOUCH))[0], game.host)
    card = page.locator(".table-card", has=page.get_by_text("host hal-fits"))
    expect(card.get_by_role("button", name="Add a bot to seat 6")).to_be_visible()
    inside = """card => [...card.querySelectorAll('fieldset, select, button')].filter((node) => {
      const box = node.getBoundingClientRect();
      const outer = card.getBoundingClientRect();
      return box.right > outer.right + 0.5 || box.left < outer.left - 0.5;
    }).map((node) => node.outerHTML.slice(0, 60))"""
    assert card.evaluate(inside) == []
    card.get_by_role("button", name="Add a bot to seat 6").tap()
    expect(card).to_contain_text("Seat 6: bot:basic:5")
    scroll_to(card)
    screenshot(page, "phone-lobby-host-controls", full_page=False)


def test_the_replay_s_controls_stay_on_screen_below_the_deal(
    new_context: NewContext, web_server: Backend, http: httpx.Client
) -> None:
    """A spectator steps through a finished deal of four on a phone while looking at the
    melds at the bottom of the deal: Next and the step's words stay on screen."""
    deal = classic_four()
    game = start_table(http, deal, tuple(f"{name}-replay" for name in NAMES))
    for step in deal.steps:
        play_step(http, game, step)
    for held in ("upright", "landscape"):
        page = new_context(viewport=PHONES[held], **TOUCH).new_page()
        page.goto(f"/deals/{game.deal_id}/replay?step=10")
        expect(page.locator("body[data-ready=true]")).to_be_attached()
        expect(page.locator("#words")).to_contain_text("Step 10")
        side_b = page.locator('#deal .side[data-side="B"]')
        for shown in range(11, 14):
            # His eyes on the bottom of the deal: Next is on screen there, before he taps it.
            scroll_to(side_b, "end")
            reachable(page.locator("#next"))
            page.locator("#next").tap()
            expect(page.locator("#words")).to_contain_text(f"Step {shown}")
            reachable(page.locator("#words"))
        screenshot(page, f"phone-replay-{held}", full_page=False)


def test_a_spectator_reads_the_log_s_newest_lines_while_he_watches_the_deal(
    new_context: NewContext, web_server: Backend, http: httpx.Client
) -> None:
    """A spectator on a phone watches ann play a bot: the log's newest line is on screen,
    whole, wherever in the deal he looks, and the next one comes there without a scroll (the
    log's home, the end of the page, was 1,800 px below the deal's top: he saw the table
    change but never the words for it). A player's own page keeps his move panel there, the
    log in its place; so does a finished deal, and a desktop's spectator."""
    ann = register_player(http, "ann-watched")
    practice = {"entry": "classic", "players": 2, "bot": "basic"}
    started = http.post("/tables/practice", json=practice, headers=ann).json()
    table, deal = started["table"], started["deal"]
    watchers = {
        held: new_context(viewport=PHONES[held], **TOUCH).new_page()
        for held in ("upright", "landscape")
    }
    for watcher in watchers.values():
        watcher.goto(f"/tables/{table}")
        expect(watcher.locator("body[data-ready=true]")).to_be_attached()

    def newest_line_in_sight(watcher: Page) -> None:
        last = http.get(f"/deals/{deal}/events").json()[-1]["step"]
        line = watcher.locator(f"#log li[data-step='{last}']")
        expect(line).to_be_attached(timeout=LIVE_MS)
        expect(line).not_to_be_empty()
        # His eyes on the top of the page, on the pile, on the bottom of the deal.
        deal_end = watcher.locator("#deal").evaluate(
            "node => node.getBoundingClientRect().bottom + scrollY - innerHeight"
        )
        pile = watcher.locator("#deal .pile").evaluate(
            "node => node.getBoundingClientRect().top + scrollY"
        )
        for y in (0, pile, deal_end):
            watcher.evaluate("y => window.scrollTo(0, y)", y)
            watcher.wait_for_function(
                "y => Math.abs(scrollY - Math.max(0, Math.min(y, "
                "document.scrollingElement.scrollHeight - innerHeight))) < 2",
                arg=y,
            )
            reachable(line)
            assert line.evaluate("node => node.scrollWidth <= node.clientWidth"), "cut short"

    play_moves(http, ann, deal, 4)
    wait_until_quiet(http, ann, deal)
    for watcher in watchers.values():
        newest_line_in_sight(watcher)
    upright = watchers["upright"]
    scroll_to(upright.locator("#deal .pile"), "start")
    screenshot(upright, "phone-spectator-log", full_page=False)
    # ann moves again: its words come where he looks, without a scroll.
    at = upright.evaluate("scrollY")
    play_moves(http, ann, deal, 1)
    # Once the bot is done too: a line the bot's moves push up the log (it scrolls, 9rem at
    # most) is out of sight, rightly, and a tap at it would reach the deal above the panel.
    wait_until_quiet(http, ann, deal)
    last = http.get(f"/deals/{deal}/events").json()[-1]["step"]
    expect(upright.locator(f"#log li[data-step='{last}']")).to_be_attached(timeout=LIVE_MS)
    assert upright.evaluate("scrollY") == at
    reachable(upright.locator(f"#log li[data-step='{last}']"))

    # Elsewhere the log stays where it was: ann's own phone (her move panel at the bottom of
    # the screen), a desktop, the deal over.
    place = "() => getComputedStyle(document.getElementById('log-panel')).position"
    wait_until_quiet(http, ann, deal)
    mine = table_page(new_context(viewport=PHONES["upright"], **TOUCH), ann, table)
    expect(mine.locator("#moves [data-move]").first).to_be_visible(timeout=LIVE_MS)
    assert mine.evaluate(place) == "static"
    desk = new_context(viewport=DESKTOP).new_page()
    desk.goto(f"/tables/{table}")
    expect(desk.locator("#log li").first).to_be_attached()
    assert desk.evaluate(place) == "static"
    assert upright.evaluate(place) == "sticky"
    assert http.post(f"/tables/{table}/stop", headers=ann).status_code == 200
    expect(upright.locator("#deal .deal[data-phase=over]")).to_be_attached(timeout=LIVE_MS)
    assert upright.evaluate(place) == "static"
