"""A click on one of the side's melds adds the selected cards to it, within the entry's meld
limits (the move menu's ``meld_limits``, docs/api.md), the same way "Meld the selected cards"
groups them (composeMelds). A ``modern_american`` player who selected a deuce and clicked her
side's 7s meld had it sent to the server's dry run and saw its English message after the round
trip ("sevens never take wild cards"); now the page refuses at once, with the rule's id, in the
player's language, and sends nothing. An addition the limits accept still goes to the server."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect

from domain import commands as c
from tests.e2e.conftest import Backend
from tests.support.http import Game
from tests.web.conftest import NewContext, screenshot, stacked_decks_server
from tests.web.pages import open_lobby, record_requests
from tests.web.test_meld_limits import limits_of, mia_after_drawing, mias_page, sent_nothing

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

#: mia opens with 7 7 7, A A A A and K K K (125) and keeps Q Q 7; she draws a deuce.
HAND = "7C/1 7D/1 7H/1 AC/1 AD/1 AH/1 AS/1 KC/1 KD/1 KH/1 QC/1 QD/1 7S/1"


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """This module's server deals stacked decks (tests/web/deals.py)."""
    yield from stacked_decks_server(tmp_path_factory, "meldadd")


def opened(http: httpx.Client, suffix: str) -> Game:
    game = mia_after_drawing(http, HAND, suffix, stock=["2C/1"])
    opening = c.Meld(
        melds=(
            c.MeldSpec(cards=("7C/1", "7D/1", "7H/1"), rank="7"),
            c.MeldSpec(cards=("AC/1", "AD/1", "AH/1", "AS/1"), rank="A"),
            c.MeldSpec(cards=("KC/1", "KD/1", "KH/1"), rank="K"),
        )
    )
    answer = game.send(game.names[0], opening)
    assert answer.status_code == 200, answer.text
    return game


def select_and_add(page: Page, cards: str, rank: str) -> None:
    for code in cards.split():
        page.locator(f'#hand [data-card="{code}"]').click()
    page.locator(f'#deal [data-meld="{rank}"][data-side="A"]').click()


def server_says(game: Game, cards: str, rank: str) -> str:
    """The rule the server's dry run names for that addition."""
    spec = c.MeldSpec(cards=tuple(cards.split()), rank=rank)
    answer = game.check(game.names[0], c.Meld(melds=(spec,)))
    assert answer.status_code == 200, answer.text
    assert not answer.json()["accepted"], answer.text
    return str(answer.json()["error"]["code"])


def test_a_deuce_onto_the_sevens_is_refused_before_sending(
    new_context: NewContext, http: httpx.Client
) -> None:
    game = opened(http, "a")
    mia = mias_page(new_context, game)
    expect(mia.locator("#hand [data-card]")).to_have_count(4)
    urls = record_requests(mia)
    select_and_add(mia, "7S/1 2C/1", "7")
    error = mia.locator("#error")
    expect(error).to_have_text(
        "Refused: the selected cards cannot be added to the seven meld: "
        "the seven meld takes no wild card (R-MA-MELD-5)"
    )
    expect(error.locator("a.rule-link")).to_have_attribute("href", "/rules/R-MA-MELD-5")
    screenshot(mia, "meld-addition-sevens-and-a-deuce")
    assert sent_nothing(urls), urls
    assert server_says(game, "7S/1 2C/1", "7") == "R-MA-MELD-5"
    expect(mia.locator("#hand [data-card]")).to_have_count(4)  # nothing laid
    # A deuce onto the kings (three naturals): after the initial meld a wild card joins only
    # a meld of five naturals (R-MA-MELD-3).
    mia.locator('#moves [data-move="clear"]').click()
    select_and_add(mia, "2C/1", "K")
    expect(error).to_have_text(
        "Refused: the selected cards cannot be added to the king meld: a wild card joins the "
        "king meld only when it holds at least 5 natural cards (R-MA-MELD-3)"
    )
    assert sent_nothing(urls), urls
    assert server_says(game, "2C/1", "K") == "R-MA-MELD-3"
    # The seven alone is within the limits: sent, and laid.
    mia.locator('#moves [data-move="clear"]').click()
    select_and_add(mia, "7S/1", "7")
    expect(mia.locator('#deal [data-meld="7"][data-side="A"] [data-card]')).to_have_count(4)
    expect(error).to_be_hidden()
    expect(mia.locator("#hand [data-card]")).to_have_count(3)


def test_the_refusal_is_in_the_player_s_language(
    new_context: NewContext, http: httpx.Client
) -> None:
    mia = mias_page(new_context, opened(http, "b"))
    mia.locator("#lang").select_option("ru")
    expect(mia.locator("html")).to_have_attribute("lang", "ru")
    urls = record_requests(mia)
    select_and_add(mia, "2C/1", "7")
    expect(mia.locator("#error")).to_have_text(
        "Отказ: выбранные карты нельзя добавить к комбинации «семёрка»: к комбинации «семёрка» "
        "нельзя добавить дикую карту (R-MA-MELD-5)"
    )
    screenshot(mia, "meld-addition-sevens-and-a-deuce-ru", full_page=False)
    assert sent_nothing(urls), urls


def test_classic_a_third_wild_card_needs_naturals_to_outnumber_them(
    new_context: NewContext, http: httpx.Client
) -> None:
    page = open_lobby(new_context())[0]
    classic = limits_of(http, "classic", 4)

    def problem(cards: str, rank: str, meld: dict[str, object]) -> str | None:
        found = page.evaluate(
            """async ([cards, rank, limits, melds]) => {
                const { composeAddition } = await import("/web/table_moves.js");
                return composeAddition(cards, rank, limits, melds).problem;
            }""",
            [cards.split(), rank, classic, [meld]],
        )
        return None if found is None else str(found["rule"])

    nines = {"rank": "9", "size": 5, "naturals": 3, "wilds": 2, "closed": False, "canasta": False}
    assert problem("2C/1", "9", nines) == "R-MELD-3"  # 3 naturals, 3 wild cards
    assert problem("9C/2 2C/1", "9", nines) is None  # 4 naturals, 3 wild cards
    assert problem("9C/2 2C/1 2D/1", "9", nines) == "R-MELD-2"  # a fourth wild card
    # Cards of another rank: the dry run names the card.
    assert problem("KC/1", "9", nines) is None
