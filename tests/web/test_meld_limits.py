""" "Meld the selected cards" groups the selection within the entry's meld limits (the move
menu's ``meld_limits``, docs/api.md): a ``modern_american`` player who selected 7 7 7 and a
deuce saw the page send them as one meld and the server refuse it (sevens never take wild
cards, R-MA-MELD-5); with 7 7 7 7, K K K, A A A and a deuce the page gave the deuce to the
sevens, refused too, where K K K 2 is a meld. Now the page gives each wild card to a meld
that may take it, and says why a selection cannot be melded, with the rule's id, before it
sends anything (no dry run, no command), in the player's language. The other entries' limits differ (R-MELD-2/3 in
``classic``, ``extra_six`` and ``always_frozen``, R-PT-MELD-1 in ``ponytail``): the page's
grouping is checked with each entry's own menu."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from domain import commands as c
from tests.e2e.conftest import Backend
from tests.support.http import Game, open_table
from tests.web.conftest import NewContext, screenshot, stacked_decks_server
from tests.web.deals import deck_for
from tests.web.pages import open_lobby, record_requests, table_page

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

CUT = 60
NAMES = ["mia", "ned", "ola", "pia"]
#: mia's hand in the first two tests: sevens, kings, aces and three wild cards.
HAND = "7C/1 7D/1 7H/1 7S/1 KC/1 KD/1 KH/1 AC/1 AD/1 AH/1 2C/1 2D/1 BJ/1"


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """This module's server deals stacked decks (tests/web/deals.py)."""
    yield from stacked_decks_server(tmp_path_factory, "meldlimits")


def mia_after_drawing(
    http: httpx.Client, hand: str, suffix: str, stock: list[str] | None = None
) -> Game:
    """A ``modern_american`` table of four (seat 3 deals): mia, in seat 0, holds ``hand``
    (the rest is filled in), cuts and draws (``stock[0]`` if given) over HTTP; she is in her
    play step."""
    names = [f"{name}{suffix}" for name in NAMES]
    game = open_table(http, names, entry="modern_american", start=False)
    deck = deck_for("modern_american", 4, 3, CUT, {0: hand.split()}, stock or [])
    game.start({"dealer": 3, "deck": deck})
    for command in (c.Cut(n=CUT), c.Draw()):
        answer = game.send(names[0], command)
        assert answer.status_code == 200, answer.text
    return game


def mias_page(new_context: NewContext, game: Game) -> Page:
    return table_page(new_context(), game.headers[game.names[0]], game.table)


def select_and_meld(page: Page, cards: str) -> None:
    for code in cards.split():
        page.locator(f'#hand [data-card="{code}"]').click()
    page.locator('#moves [data-move="meld"]').click()


def sent_nothing(urls: list[str]) -> bool:
    """No dry run and no command among the requests the page made."""
    return not any("/commands" in url for url in urls)


def test_sevens_with_a_deuce_are_refused_before_sending(
    new_context: NewContext, http: httpx.Client
) -> None:
    mia = mias_page(new_context, mia_after_drawing(http, HAND, "1"))
    expect(mia.locator("#hand [data-card]")).to_have_count(14)
    urls = record_requests(mia)
    select_and_meld(mia, "7C/1 7D/1 7H/1 2C/1")
    error = mia.locator("#error")
    expect(error).to_have_text(
        "Refused: the selected cards cannot be melded: the seven meld takes no wild card "
        "(R-MA-MELD-5)"
    )
    expect(error.locator("a.rule-link")).to_have_attribute("href", "/rules/R-MA-MELD-5")
    screenshot(mia, "meld-limits-sevens-and-a-deuce")
    assert sent_nothing(urls), urls
    expect(mia.locator("#hand [data-card]")).to_have_count(14)  # nothing laid
    expect(mia.locator('#hand [data-card="2C/1"]')).to_have_attribute("aria-pressed", "true")


def test_the_refusal_is_in_the_player_s_language(
    new_context: NewContext, http: httpx.Client
) -> None:
    game = mia_after_drawing(http, HAND, "4")
    mia = mias_page(new_context, game)
    mia.locator("#lang").select_option("ru")  # the page's language menu
    expect(mia.locator("html")).to_have_attribute("lang", "ru")
    select_and_meld(mia, "7C/1 7D/1 7H/1 2C/1")
    expect(mia.locator("#error")).to_have_text(
        "Отказ: выбранные карты нельзя выложить: к комбинации «семёрка» нельзя добавить дикую "
        "карту (R-MA-MELD-5)"
    )
    screenshot(mia, "meld-limits-sevens-and-a-deuce-ru", full_page=False)


def test_the_deuce_goes_to_the_kings_not_to_the_sevens(
    new_context: NewContext, http: httpx.Client
) -> None:
    mia = mias_page(new_context, mia_after_drawing(http, HAND, "2"))
    select_and_meld(mia, "7C/1 7D/1 7H/1 7S/1 KC/1 KD/1 KH/1 AC/1 AD/1 AH/1 2C/1")
    sevens = mia.locator('#deal [data-meld="7"][data-side="A"]')
    expect(sevens.locator("[data-card]")).to_have_count(4)  # clean: 130 from the hand
    kings = mia.locator('#deal [data-meld="K"][data-side="A"]')
    expect(kings.locator('[data-card="2C/1"]')).to_have_count(1)
    expect(mia.locator('#deal [data-meld="A"][data-side="A"] [data-card]')).to_have_count(3)
    expect(mia.locator("#error")).to_be_hidden()
    expect(mia.locator("#hand [data-card]")).to_have_count(3)
    screenshot(mia, "meld-limits-deuce-to-the-kings")


def test_after_the_initial_meld_a_pair_with_a_deuce_is_refused_before_sending(
    new_context: NewContext, http: httpx.Client
) -> None:
    # mia opens with 7 7 7, A A A A and K K K (125); she draws the deuce. Q Q 2 would then be
    # a new meld of two naturals and a wild card: after the initial meld a wild card joins
    # only a meld of five naturals (R-MA-MELD-3).
    hand = "7C/1 7D/1 7H/1 AC/1 AD/1 AH/1 AS/1 KC/1 KD/1 KH/1 QC/1 QD/1 9C/1"
    game = mia_after_drawing(http, hand, "3", stock=["2C/1"])
    mia_name = game.names[0]
    opening = c.Meld(
        melds=(
            c.MeldSpec(cards=("7C/1", "7D/1", "7H/1"), rank="7"),
            c.MeldSpec(cards=("AC/1", "AD/1", "AH/1", "AS/1"), rank="A"),
            c.MeldSpec(cards=("KC/1", "KD/1", "KH/1"), rank="K"),
        )
    )
    answer = game.send(mia_name, opening)
    assert answer.status_code == 200, answer.text
    mia = mias_page(new_context, game)
    expect(mia.locator("#hand [data-card]")).to_have_count(4)
    urls = record_requests(mia)
    select_and_meld(mia, "QC/1 QD/1 2C/1")
    expect(mia.locator("#error")).to_have_text(
        "Refused: the selected cards cannot be melded: a wild card joins the queen meld only "
        "when it holds at least 5 natural cards (R-MA-MELD-3)"
    )
    screenshot(mia, "meld-limits-after-the-initial-meld")
    assert sent_nothing(urls), urls
    # The deuce alone would be a wild-card meld of one card (R-MA-MELD-4).
    mia.locator('#moves [data-move="clear"]').click()
    select_and_meld(mia, "2C/1")
    expect(mia.locator("#error")).to_contain_text("(R-MA-MELD-4)")
    assert sent_nothing(urls), urls


def limits_of(http: httpx.Client, entry: str, players: int, **table: Any) -> dict[str, Any]:
    """The ``meld_limits`` of a new table's menu (seat 0, before any meld)."""
    names = [f"{entry[:4]}{players}{'f' if table else ''}{i}" for i in range(players)]
    teams = [[0, 2, 4], [1, 3, 5]] if entry == "extra_six" else None
    game = open_table(http, names, entry=entry, teams=teams, table=table or None)
    menu = http.get(f"/deals/{game.deal_id}/moves", headers=game.headers[names[0]])
    limits: dict[str, Any] = menu.json()["meld_limits"]
    return limits


def compose(page: Page, cards: str, limits: dict[str, Any]) -> dict[str, Any]:
    """The page's own grouping of ``cards`` under ``limits`` (no meld of the side yet)."""
    result: dict[str, Any] = page.evaluate(
        """async ([cards, limits]) => {
            const { composeMelds } = await import("/web/table_moves.js");
            return composeMelds(cards, limits, []);
        }""",
        [cards.split(), limits],
    )
    return result


def test_each_entry_s_limits_group_the_selection(
    new_context: NewContext, http: httpx.Client
) -> None:
    page = open_lobby(new_context())[0]
    classic = limits_of(http, "classic", 4)
    frozen = limits_of(http, "classic", 2, options={"always_frozen": True})
    six = limits_of(http, "extra_six", 6)
    ponytail = limits_of(http, "ponytail", 4)
    american = limits_of(http, "modern_american", 4)

    def problem(cards: str, limits: dict[str, Any]) -> str | None:
        found = compose(page, cards, limits)["problem"]
        return None if found is None else str(found["rule"])

    # Wild cards beyond what the naturals can carry: 9 9 9 + three wilds (not outnumbered),
    # 9 9 9 9 + four wilds (at most three), in every entry with R-MELD-2/3.
    for limits in (classic, frozen, six):
        assert problem("9C/1 9D/1 9H/1 2C/1 2D/1 2H/1", limits) == "R-MELD-3"
        assert problem("9C/1 9D/1 9H/1 9S/1 2C/1 2D/1 2H/1 2S/1", limits) == "R-MELD-2"
        assert problem("9C/1 9D/1 9H/1 9S/1 2C/1 2D/1 2H/1", limits) is None
    # ponytail: complete at seven (R-PT-MELD-1): six eights take one wild card, not two.
    assert problem("8C/1 8D/1 8H/1 8S/1 8C/2 8D/2 2C/1 2D/1", ponytail) == "R-PT-MELD-1"
    assert problem("8C/1 8D/1 8H/1 8S/1 8C/2 8D/2 2C/1", ponytail) is None
    # modern_american: two wild cards at most (R-MA-MELD-1), none for sevens (R-MA-MELD-5).
    assert problem("KC/1 KD/1 KH/1 KS/1 2C/1 2D/1 2H/1", american) == "R-MA-MELD-1"
    assert problem("7C/1 7D/1 7H/1 2C/1", american) == "R-MA-MELD-5"
    # Q Q 2 2 is a meld there (not outnumbered), not in classic.
    assert problem("QC/1 QD/1 2C/1 2D/1", american) is None
    assert problem("QC/1 QD/1 2C/1 2D/1", classic) == "R-MELD-3"
    # The wild cards go where they may: J J J J 9 9 2 2 2 is J J J J 2 2 and 9 9 2 in classic
    # (the page once gave the jacks all three deuces and sent the nines alone, R-MELD-1).
    grouped = compose(page, "JD/1 JD/2 JH/1 JS/1 9C/1 9D/1 2D/1 2C/1 2H/1", classic)
    assert grouped == {
        "melds": [
            {"cards": ["JD/1", "JD/2", "JH/1", "JS/1", "2C/1", "2H/1"], "rank": "J"},
            {"cards": ["9C/1", "9D/1", "2D/1"], "rank": "9"},
        ],
        "problem": None,
    }
    # 7 7 7 7 K K K + a deuce in modern_american: the deuce with the kings.
    grouped = compose(page, "7C/1 7D/1 7H/1 7S/1 KC/1 KD/1 KH/1 2C/1", american)
    assert grouped["melds"] == [
        {"cards": ["7C/1", "7D/1", "7H/1", "7S/1"], "rank": "7"},
        {"cards": ["KC/1", "KD/1", "KH/1", "2C/1"], "rank": "K"},
    ]
