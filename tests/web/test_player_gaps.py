"""What a player met playing practice games in the browser, phone and desktop (docs/web.md):
the hint says why he may not go out yet; the menu's take of the top alone onto a meld is said
in words, not as a bare "top"; the little joker is printed "☆" on its card, as the log names
it; "Leave my seat" tells the host nothing about the host giving his seat away, and tells a
player who leaves a table where nobody else plays that the bots then finish the game; each
deal of the running totals links to its replay; the seats before the start say which are
bots."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Backend
from tests.support.http import register_player
from tests.web.conftest import PHONES, TOUCH, NewContext, screenshot, stacked_decks_server
from tests.web.deals import (
    ScriptedDeal,
    Step,
    classic_four,
    deck_for,
    play_step,
    start_table,
)
from tests.web.pages import LIVE_MS, open_lobby, sign_up, table_page

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """This module's server deals stacked decks (tests/web/deals.py)."""
    yield from stacked_decks_server(tmp_path_factory, "player")


def _cards(text: str) -> list[str]:
    return text.split()


def ace_on_top() -> ScriptedDeal:
    """``classic`` for four, seat 3 deals: seat 0 opens with three aces, seat 1 discards an
    ace, and seat 2 (seat 0's partner, who holds the little joker) may take the pile with the
    top alone onto his side's aces."""
    hands = {
        0: _cards("AS/1 AH/1 AD/1 4S/1 5S/1 6S/1 7S/1 8S/1 9S/1 10S/1 JS/1"),
        1: _cards("4D/1 5D/1 6D/1 7D/1 8D/1 9D/1 10D/1 JD/1 4C/1 5C/1 AC/1"),
        2: _cards("LJ/1 7C/1 8C/1 9C/1 10C/1 JC/1 4S/2 5S/2 6S/2 7S/2 8S/2"),
        3: _cards("KS/1 KH/1 KD/1 KC/1 KS/2 KH/2 KD/2 QS/1 QH/1 QD/1 QC/1"),
    }
    stock = ["5H/1", "4H/1", "6H/1"]  # the card turned up, then seat 0's and seat 1's draws
    aces = {"cards": ["AD/1", "AH/1", "AS/1"], "rank": "A"}
    steps = [
        Step(0, "seat 0 cuts", {"type": "cut", "n": 54},
             ("DeckCut", "CardsDealt", "CardTurnedUp", "PlayStarted")),
        Step(0, "seat 0 draws", {"type": "draw"}, ("CardsDrawn",)),
        Step(0, "seat 0 melds three aces", {"type": "meld", "melds": [aces], "discard": None},
             ("MeldLaid",)),
        Step(0, "seat 0 discards J♠", {"type": "discard", "card": "JS/1"}, ("CardDiscarded",)),
        Step(1, "seat 1 draws", {"type": "draw"}, ("CardsDrawn",)),
        Step(1, "seat 1 discards A♣", {"type": "discard", "card": "AC/1"}, ("CardDiscarded",)),
    ]  # fmt: skip
    return ScriptedDeal(
        name="classic, an ace on top for seat 2",
        entry="classic",
        players=4,
        dealer=3,
        cut=54,
        hands=hands,
        stock=stock,
        deck=deck_for("classic", 4, 3, 54, hands, stock),
        steps=steps,
        scores={},
    )


def test_the_hint_says_why_he_may_not_go_out(new_context: NewContext, http: httpx.Client) -> None:
    deal = ace_on_top()
    game = start_table(http, deal, ("ann", "bob", "cyd", "dee"))
    ann = table_page(new_context(), game.headers["ann"], game.table)
    play_step(http, game, deal.steps[0])
    ann.locator('#moves [data-move="draw"]').click()
    # Not a bare "You may not go out yet.": the menu's go_out.lacks says why.
    expect(ann.locator("#move-hint")).to_contain_text(
        "You may not go out yet: your side lacks a canasta."
    )


def test_the_little_joker_is_printed_as_the_log_names_it(
    new_context: NewContext, http: httpx.Client
) -> None:
    deal = ace_on_top()
    game = start_table(http, deal, ("amy", "ben", "cat", "dan"))
    cat = table_page(new_context(), game.headers["cat"], game.table)
    play_step(http, game, deal.steps[0])
    # "☆" on its card and its group, as the log says it ("Your cards: ... ☆"), not "★".
    expect(cat.locator("#log")).to_contain_text("☆")
    expect(cat.locator('#hand [data-card="LJ/1"] .rank')).to_have_text("☆")
    expect(cat.locator("#hand")).to_contain_text("☆ ×1")


def test_a_take_of_the_top_alone_is_said_in_words(
    new_context: NewContext, http: httpx.Client
) -> None:
    deal = ace_on_top()
    game = start_table(http, deal, ("ada", "bea", "cal", "dov"))
    cal = table_page(
        new_context(viewport=PHONES["upright"], **TOUCH), game.headers["cal"], game.table
    )
    for step in deal.steps:
        play_step(http, game, step)
    # The menu's take of the top alone onto the side's aces, in words, not "Take the pile: top".
    menu = http.get(f"/deals/{game.deal_id}/moves", headers=game.headers["cal"]).json()
    alone = [{"cards": ["TOP"], "rank": "A"}]
    assert any(m["type"] == "take_pile" and m["melds"] == alone for m in menu["moves"])
    suggestion = cal.locator('#moves [data-move="suggestion"]').filter(has_text="onto")
    expect(suggestion).to_have_text("Take the pile: the top card onto your A meld")
    # Said "onto your ace meld": the printed letter was read "onto your uh meld".
    expect(suggestion).to_have_attribute(
        "aria-label", "Take the pile: the top card onto your ace meld"
    )
    screenshot(cal, "player-take-top-onto-meld", full_page=False)
    suggestion.tap()
    expect(cal.locator('[data-meld="A"][data-side="A"] [data-card="AC/1"]')).to_be_attached()


def test_leave_my_seat_says_what_happens_to_the_host_and_the_alone(
    new_context: NewContext, http: httpx.Client
) -> None:
    # A host at a table of people: not told that "the host may give it to somebody else".
    deal = classic_four()
    game = start_table(http, deal, ("eli", "fin", "gil", "hob"))
    host = table_page(new_context(), game.headers["eli"], game.table)
    other = table_page(new_context(), game.headers["fin"], game.table)
    host.locator("#leave-seat").click()
    question = host.locator("#seat-panel")
    expect(question).to_contain_text(
        "Leave your seat? The basic bot plays it until you take it back."
    )
    expect(question).not_to_contain_text("the host may give it")
    host.locator("#leave-cancel").click()
    other.locator("#leave-seat").click()
    expect(other.locator("#seat-panel")).to_contain_text(
        "meanwhile the host may give it to somebody else"
    )

    # A practice game: nobody else plays, so the bots would finish the game in seconds.
    page = open_lobby(new_context(viewport=PHONES["upright"], **TOUCH))[0]
    sign_up(page, "ivy")
    page.get_by_role("button", name="Play now").tap()
    page.wait_for_url("**/tables/*")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    page.locator("#leave-seat").tap()
    expect(page.locator("#seat-panel")).to_contain_text(
        "Nobody else plays at this table: the bots play on without you, deal after deal, "
        "to the end of the game"
    )
    screenshot(page, "player-leave-practice-asked", full_page=False)
    page.locator("#leave-cancel").tap()
    expect(page.locator("#leave-seat")).to_be_visible()


def test_each_deal_of_the_totals_links_to_its_replay(
    new_context: NewContext, http: httpx.Client
) -> None:
    deal = classic_four()
    game = start_table(http, deal, ("jo", "kit", "lou", "max"))
    first = game.deal_id
    for step in deal.steps:
        play_step(http, game, step)
    second = game.next_deal({"deck": list(deal.deck)})
    page = new_context().new_page()  # a spectator
    page.goto(f"/tables/{game.table}")
    links = page.locator("#totals-table a[data-replay]")
    expect(links).to_have_count(1, timeout=LIVE_MS)
    expect(links.first).to_have_attribute("href", f"/deals/{first}/replay")
    expect(links.first).to_have_accessible_name("Replay of deal 1")
    links.first.click()
    page.wait_for_url(f"**/deals/{first}/replay*")
    expect(page.get_by_role("heading", name="Replay of deal 1")).to_be_visible()
    page.go_back()
    expect(page.locator("#deal .deal")).to_have_attribute("data-deal", second)
    expect(page.locator("#to-replay")).to_have_attribute("href", f"/deals/{second}/replay")


def test_the_seats_before_the_start_say_which_are_bots(
    new_context: NewContext, http: httpx.Client
) -> None:
    ned = register_player(http, "ned")
    table = http.post("/tables", json={"entry": "classic", "players": 2}, headers=ned).json()["id"]
    assert http.post(f"/tables/{table}/seats", json={"seat": 0}, headers=ned).is_success
    assert http.post(f"/tables/{table}/seats", json={"bot": "basic"}, headers=ned).is_success
    page = table_page(new_context(), ned, table)
    seats = page.locator("#waiting-seats li")
    expect(seats).to_have_text(["Seat 1: ned (you)", "Seat 2: bot:basic:1 (bot, basic)"])


def test_modern_american_penalties_link_to_what_they_are_for(new_context: NewContext) -> None:
    # A side that ended with an incomplete sevens meld and wild-card meld read "Penalties
    # -4500" and nothing else; the row now links its rule (the table page's own renderer,
    # given a deal's scores: playing a modern_american deal out would take long). So does the
    # threes' row: a side with exactly one canasta scores 0 for its threes (R-MA-THREE-2).
    page = open_lobby(new_context())[0]
    scores = {
        side: {"melds": 295, "canasta_bonus": 500, "going_out": 0, "red_threes": 0}
        | {"hands": -30, "penalties": -4500 if side == "A" else 0, "total": 0}
        for side in ("A", "B")
    }
    heads = page.evaluate(
        """async (scores) => {
            const { breakdownTable } = await import("/web/deal_render.js");
            const head = (variant, part) => breakdownTable(scores, variant)
                .querySelector(`tr[data-part=${part}] th`);
            const link = head("modern_american", "penalties").querySelector("a");
            const threes = head("modern_american", "red_threes").querySelector("a");
            return [head("modern_american", "penalties").textContent, link.getAttribute("href"),
                    link.target, head("ponytail", "penalties").textContent,
                    head("modern_american", "red_threes").textContent, threes.getAttribute("href"),
                    head("classic", "red_threes").textContent];
        }""",
        scores,
    )
    assert heads == [
        "Penalties (R-MA-SCORE-2)",
        "/rules/R-MA-SCORE-2",
        "_blank",
        "Penalties",
        "Threes (R-MA-THREE-2)",
        "/rules/R-MA-THREE-2",
        "Red threes",
    ]


def test_next_deal_is_on_a_phone_screen_when_the_deal_ends(
    new_context: NewContext, http: httpx.Client
) -> None:
    # On a phone the game panel, "Next deal"'s home, is below the whole deal (some 2,000 px
    # down): at every deal's end the host scrolled the length of the melds to find it.
    deal = classic_four()
    game = start_table(http, deal, ("oli", "pam", "quy", "ros"))
    phone = {"viewport": PHONES["upright"], **TOUCH}
    host = table_page(new_context(**phone), game.headers["oli"], game.table)
    other = table_page(new_context(**phone), game.headers["pam"], game.table)
    for step in deal.steps:
        play_step(http, game, step)
    expect(host.locator("#deal .deal")).to_have_attribute("data-phase", "over")
    nxt = host.locator("#moves #next-deal")
    expect(nxt).to_be_in_viewport()
    expect(host.locator("#move-hint")).to_have_text(
        "The deal is over: read the scores, then open the next deal."
    )
    expect(host.locator("#next-deal")).to_have_count(1)  # not in the game panel too
    expect(other.locator("#deal .deal")).to_have_attribute("data-phase", "over")
    expect(other.locator("#next-deal")).to_have_count(0)
    expect(other.locator("#moves")).to_be_hidden()
    screenshot(host, "player-phone-next-deal", full_page=False)
    first = game.deal_id
    nxt.tap()
    expect(host.locator("#deal .deal")).not_to_have_attribute("data-deal", first)
    expect(host.locator("#next-deal")).to_have_count(0)
    expect(other.locator("#deal .deal")).not_to_have_attribute("data-deal", first)


def test_the_rematch_is_on_a_phone_screen_when_the_game_ends(
    new_context: NewContext, http: httpx.Client
) -> None:
    # The same at the game's end: "Play again: open the rematch" was below the whole deal.
    deal = classic_four()
    game = start_table(http, deal, ("sal", "tam", "uma", "vic"))
    phone = {"viewport": PHONES["upright"], **TOUCH}
    tam = table_page(new_context(**phone), game.headers["tam"], game.table)
    for step in deal.steps:
        play_step(http, game, step)
    assert http.post(f"/tables/{game.table}/stop", headers=game.host).is_success
    again = tam.locator("#moves #rematch")
    expect(again).to_be_in_viewport()
    expect(tam.locator("#move-hint")).to_have_text("The host stopped the game.")
    expect(tam.locator("#rematch")).to_have_count(1)
    screenshot(tam, "player-phone-rematch", full_page=False)
    again.tap()
    expect(tam).not_to_have_url(f"**/tables/{game.table}")
    expect(tam.locator("#waiting-seats")).to_contain_text("Seat 2: tam (you)")
