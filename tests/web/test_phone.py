"""The table page on a phone held upright, a small one and one on its side, played by tapping
(docs/web.md, "Layout"): the cards a player taps and the button that plays them are on screen
together, the move panel never hides a card, and a refused move is said where he is looking."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Backend, make_backend, running
from tests.support.http import open_table
from tests.web.conftest import PHONES, TOUCH, NewContext, screenshot
from tests.web.deals import NAMES, classic_four, play_step, start_table
from tests.web.pages import table_page

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
    backend = make_backend(
        "sqlite",
        tmp_path_factory.mktemp("phone"),
        extra_env={"CANASTA_ALLOW_STACKED_DECKS": "true"},
    )
    yield from running(backend)


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
    bob.locator("#deal").evaluate("node => node.scrollIntoView({block: 'start'})")
    screenshot(bob, f"phone-{held}-deal-top", full_page=False)
    reachable(move(bob, "meld"))
    # No card is hidden under the move panel once scrolled into view (from above: it lands at
    # the bottom of the screen), nor is the panel once a card is tapped.
    codes = hand.evaluate_all("nodes => nodes.map(n => n.dataset.card)")
    for code in codes:
        card = bob.locator(f'#hand [data-card="{code}"]')
        bob.locator("#deal").evaluate("node => node.scrollIntoView({block: 'start'})")
        card.evaluate("node => node.scrollIntoView({block: 'nearest'})")
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
    expect(cyd.locator("#hand [data-card]")).to_have_count(11)
    hand.evaluate("node => node.scrollIntoView({block: 'center'})")
    top = hand.evaluate("node => node.getBoundingClientRect().top")
    for step in deal.steps[1:-1]:  # to the last move, which ends the deal
        play_step(http, game, step)
        step_now = http.get(f"/deals/{game.deal_id}").json()["step"]
        expect(cyd.locator(f'#deal .deal[data-step="{step_now}"]')).to_be_attached()
        moved = hand.evaluate("node => node.getBoundingClientRect().top") - top
        assert abs(moved) < 1, f"after {step.move}, the hand moved by {moved} px"
    expect(cyd.locator('[data-meld="K"][data-side="B"]')).to_be_attached()
    screenshot(cyd, "phone-hand-kept-in-place", full_page=False)
