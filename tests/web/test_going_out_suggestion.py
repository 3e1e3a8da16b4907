"""The move panel's suggestion that goes out says so (docs/web.md, "The table page"): the menu's
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
