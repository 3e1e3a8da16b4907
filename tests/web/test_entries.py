"""The table page for the entries other than classic of four (docs/rules/, docs/web.md): what
it says must fit the entry being played. ``modern_american`` lays every three, red or black,
in the side's threes area and scores them per colour (R-MA-THREE-1, R-MA-THREE-2), so the page
calls that area and its row of the breakdown "Threes", and its log says "black three" for a
black one and for the card drawn to replace it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Backend
from tests.support.http import Game, open_table, send_with_menu
from tests.web.conftest import NewContext, screenshot, stacked_decks_server
from tests.web.deals import _deck
from tests.web.pages import open_lobby, table_page

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

CUT = 54


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """This module's server deals stacked decks, to deal the threes the tests need."""
    yield from stacked_decks_server(tmp_path_factory, "entries")


def cut(http: httpx.Client, game: Game, name: str) -> None:
    """``name`` cuts the deck as it was stacked, lifting CUT cards (the menu's own move)."""
    headers = game.headers[name]
    menu = http.get(f"/deals/{game.deal_id}/moves", headers=headers).json()
    move: dict[str, Any] = next(m for m in menu["moves"] if m == {"type": "cut", "n": CUT})
    send_with_menu(http, headers, game.deal_id, move)


def test_modern_american_calls_its_threes_threes(
    new_context: NewContext, http: httpx.Client
) -> None:
    # Seat 3 deals, seat 0 (ann, side A) cuts and is dealt a black and a red three: both are
    # laid at once and replaced, by K♠ and K♥ (R-MA-THREE-1).
    hands = {0: ["3C/1", "3H/1"]}
    deck = _deck("modern_american", 4, 3, CUT, hands, ["KS/1", "KH/1"])
    game = open_table(http, ["ann", "bob", "cyd", "dee"], entry="modern_american", start=False)
    game.start({"dealer": 3, "deck": deck})
    cut(http, game, "ann")

    page = table_page(new_context(), game.headers["ann"], game.table)
    threes = page.locator(".side[data-side=A] .red-threes")
    expect(threes.locator("[data-card]")).to_have_count(2)
    expect(threes.locator(".caption")).to_have_text("Threes")
    log = page.locator("#log")
    expect(log).to_contain_text("ann laid down a black three: 3♣.")
    expect(log).to_contain_text("ann laid down a red three: 3♥.")
    expect(log).to_contain_text("ann drew K♠ to replace a black three.")
    expect(log).to_contain_text("ann drew K♥ to replace a red three.")
    screenshot(page, "table-modern-american-threes")

    # The breakdown's row (the deal would have to be played out to be scored): the table
    # page's own renderer, given a deal's scores.
    scores = {
        side: {"melds": 0, "canasta_bonus": 0, "going_out": 0, "red_threes": 300, "hands": 0}
        | {"total": 300}
        for side in ("A", "B")
    }
    rows = page.evaluate(
        """async (scores) => {
            const { breakdownTable } = await import("/web/deal_render.js");
            const row = (variant) => breakdownTable(scores, variant)
                .querySelector("tr[data-part=red_threes] th").textContent;
            return [row("modern_american"), row("classic")];
        }""",
        scores,
    )
    assert rows == ["Threes (R-MA-THREE-2)", "Red threes"]  # the rule of its score linked


def test_the_draw_hint_names_the_pile_only_when_it_may_be_taken(
    new_context: NewContext, http: httpx.Client
) -> None:
    # modern_american's pile starts empty (no card is turned up): the first player may only
    # draw, and the hint must not tell him to take the pile (R-PILE-1: an empty pile cannot
    # be taken).
    deck = _deck("modern_american", 4, 3, CUT, {}, [])
    game = open_table(http, ["eva", "fay", "gil", "hal"], entry="modern_american", start=False)
    game.start({"dealer": 3, "deck": deck})
    cut(http, game, "eva")

    page = table_page(new_context(), game.headers["eva"], game.table)
    expect(page.locator(".pile .empty")).to_be_visible()
    expect(page.locator("#moves [data-move=draw]")).to_be_visible()
    expect(page.locator("#moves [data-move=take_pile]")).to_have_count(0)
    expect(page.locator("#move-hint")).to_contain_text(
        "Draw from the stock: the pile cannot be taken now."
    )
    expect(page.locator("#move-hint")).not_to_contain_text("take the pile")


def test_a_complete_meld_says_it_takes_no_more_and_a_natural_canasta_closes_its_rank_in_modern_american(
    new_context: NewContext,
) -> None:
    """A capped meld at seven takes no more cards (R-MA-MELD-1); in modern_american only a
    natural canasta closes its rank to both sides (R-MA-MELD-2): after a mixed one a side may
    start that rank again, so the page must not make both look alike."""
    page, _ = open_lobby(new_context())
    natural = {"rank": "8", "cards": [f"8{s}/1" for s in "HDCSHDC"], "closed": True}
    mixed = {"rank": "8", "cards": [f"8{s}/1" for s in "HDCSHD"] + ["2C/1"], "closed": True}
    said = page.evaluate(
        """async ([natural, mixed]) => {
          const { meldLabel } = await import("/web/deal_render.js");
          return [
            meldLabel(natural, "modern_american"), meldLabel(mixed, "modern_american"),
            meldLabel(natural, "ponytail"),
          ];
        }""",
        [natural, mixed],
    )
    assert said == [
        "8 ×7 · natural canasta · complete: takes no more cards"
        " · its rank is closed: nobody may meld it again",
        "8 ×7 · 1 wild · mixed canasta · complete: takes no more cards",
        "8 ×7 · natural canasta · complete: takes no more cards",
    ]


def test_a_player_sitting_the_deal_out_still_sees_his_own_seat_marked(
    new_context: NewContext, http: httpx.Client
) -> None:
    """classic for five: one player sits each deal out (R-SEAT rules of docs/rules/classic.md)
    and sees what a spectator sees, but his seat is still his: "(you)" on it, as for the others."""
    names = ["ivy", "jon", "kim", "lee", "max"]
    game = open_table(http, names, entry="classic", teams=[[0, 2, 4]])
    view = http.get(f"/deals/{game.deal_id}").json()
    (out,) = view["sitting_out"]
    page = table_page(new_context(), game.headers[names[out]], game.table)
    expect(page.get_by_text("You sit this deal out")).to_be_visible()
    mine = page.locator(f"li.seat-box[data-seat='{out}']")
    expect(mine).to_have_attribute("data-sits-out", "true")
    expect(mine.locator(".marks")).to_contain_text("you")
    expect(page.locator("li.seat-box .marks", has_text="you")).to_have_count(1)
    screenshot(page, "table-sitting-out")


def test_the_unopened_side_s_freeze_is_noted_only_while_a_pile_may_be_taken(
    new_context: NewContext,
) -> None:
    """R-PILE-2: a side without its initial meld finds the pile frozen. The page says so
    while there is a pile to take, not before the cut, over an empty pile (a modern_american
    deal begins with one) or after the deal."""
    page, _ = open_lobby(new_context())
    pile: dict[str, Any] = {"crosswise": [], "always_frozen": False, "top": "9H/1", "size": 4}
    base = {"seat": 0, "sides": {"0": "A", "1": "B"}, "opened": {"A": False, "B": False}}
    base["pile"] = pile
    cases = [
        base | {"phase": "draw"},
        base | {"phase": "cut"},
        base | {"phase": "over"},
        base | {"phase": "draw", "pile": pile | {"top": None, "size": 0}},
        base | {"phase": "draw", "opened": {"A": True, "B": False}},
    ]
    notes = page.evaluate(
        """async (cases) => {
          const { pileNotes } = await import("/web/deal_render.js");
          return cases.map((view) => pileNotes(view).length);
        }""",
        cases,
    )
    assert notes == [1, 0, 0, 0, 0]


def test_a_complete_meld_is_no_target_for_the_selected_cards(
    new_context: NewContext, http: httpx.Client
) -> None:
    """A complete capped meld takes no more cards (R-PT-MELD-1, R-MA-MELD-1), so the page does
    not offer it as a meld to add the selected cards to: a tap on it sent them as a new meld of
    its rank, and the refusal spoke of new melds to a player who meant to add to it. A meld
    still open stays a button."""
    game = open_table(http, ["pia", "quin", "rae", "sol"], entry="ponytail")
    page = table_page(new_context(), game.headers["pia"], game.table)
    targets = page.evaluate(
        """async (deal) => {
          const { renderDeal } = await import("/web/deal_render.js");
          const answer = await fetch(`/deals/${deal}`, { headers: { Accept: "application/json" } });
          const view = await answer.json();
          const side = view.sides[String(view.seat)];
          view.melds[side] = [
            { rank: "9", cards: ["9H/1", "9D/1", "9C/1", "9S/1", "9H/2", "9D/2", "9C/2"], closed: true },
            { rank: "K", cards: ["KH/1", "KD/1", "KC/1"], closed: false },
          ];
          const box = document.createElement("div");
          renderDeal(box, view, { onMeldClick: () => {} });
          return [...box.querySelectorAll(`[data-side="${side}"] [data-meld]`)]
            .map((meld) => [meld.dataset.meld, meld.tagName]);
        }""",
        game.deal_id,
    )
    assert targets == [["9", "DIV"], ["K", "BUTTON"]]
