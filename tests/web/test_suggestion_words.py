"""The words of the move panel's suggestions (docs/web.md, "The table page").

The one that goes out says so: the menu's
going-out meld read "Meld: K♠ + ★ · then discard 3♣", and with nothing left to meld but the
last card "Meld:  · then discard ☆" (a Thai player met "ลงชุด: · แล้วทิ้ง ☆"): nothing said
that the tap ends the deal. It now reads "Go out: Q♣ Q♦ Q♥ Q♠ · then discard 9♣", and "Go out:
discard ☆" for the last card alone (a modern_american menu's, which goes out with a discard)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Backend
from tests.web.conftest import NewContext, screenshot, stacked_decks_server
from tests.web.deals import (
    WILD_ACES_KINGS,
    WILD_ACES_MOVES,
    send,
    wild_aces_until_going_out,
)
from tests.web.pages import table_page

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    yield from stacked_decks_server(tmp_path_factory, "going-out")


def test_the_going_out_suggestion_says_it_goes_out(
    new_context: NewContext, http: httpx.Client
) -> None:
    game = wild_aces_until_going_out(http, ("goann", "gobob", "gocyd", "godee"))
    page = table_page(new_context(), game.headers["godee"], game.table)
    # He lays the kings, a natural canasta: his side may go out, with four queens and 9♣.
    send(http, game, 3, {"type": "meld", "melds": [WILD_ACES_KINGS]})
    suggestions = page.locator("#moves [data-move=suggestion]")
    going_out = suggestions.filter(has_text="9♣")
    expect(going_out).to_have_count(1)
    expect(going_out).to_have_text("Go out: Q♣ Q♦ Q♥ Q♠ · then discard 9♣")
    expect(page.locator("#moves")).not_to_contain_text("Meld:")
    screenshot(page, "going-out-suggestion")
    going_out.click()
    expect(page.locator("table.breakdown")).to_be_visible()
    assert http.get(f"/deals/{game.deal_id}").json()["phase"] == "over"


def test_a_take_of_the_pile_says_the_top_card_goes_with_the_hands_cards(
    new_context: NewContext, http: httpx.Client
) -> None:
    """ "Take the pile: top 5♦ 5♠" read as if 5♦ 5♠ were the top, in Russian "Взять сброс:
    сверху 5♦ 5♠", "on top 5♦ 5♠"; the 5♥ on the pile goes with his 5♦ 5♠."""
    names = ("tkann", "tkbob", "tkcyd", "tkdee")
    game = wild_aces_until_going_out(http, names, moves=WILD_ACES_MOVES[:1])  # the cut only
    page = table_page(new_context(), game.headers["tkann"], game.table)
    take = page.locator("#moves [data-move=suggestion]").filter(has_text="5♦ 5♠")
    for lang, words in (
        ("en", "Take the pile: the top card with 5♦ 5♠ + A♥ A♠ 2♣"),
        ("ru", "Взять сброс: верхнюю карту, к ней — 5♦ 5♠ + A♥ A♠ 2♣"),
    ):
        page.locator("#lang").select_option(lang)
        expect(take).to_have_text(words)
        screenshot(page, f"suggestion-take-top-{lang}")
