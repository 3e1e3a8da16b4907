"""What a player sweep met on the table page (docs/web.md, "The table page"): the move panel's
heading said "Your move" above "Next deal" and above the game's end; the winners' line with
32-letter names ran past a small phone's edge; "Ask <partner>: may I go out?" stood as a
primary move every turn; the replay and audit pages had no way back to the lobby, and the
replay did not say who is signed in; an auditor's table page had no "Audit this deal"."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Backend
from tests.support.http import Headers, open_table, register_player
from tests.web.conftest import PHONES, TOUCH, NewContext, screenshot, stacked_decks_server
from tests.web.deals import classic_four, classic_played, deck_for, play_step, send, start_table
from tests.web.pages import open_page, sign_in, table_page

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

AUDITOR = "aud"
#: The longest names a player may have (32 letters), one per seat.
LONG = tuple(letter * 32 for letter in "WXYZ")


@pytest.fixture(scope="module")
def auditor(web_server: Backend) -> Headers:
    """The module's auditor (``CANASTA_AUDITORS``), registered once."""
    with httpx.Client(base_url=web_server.server.url, timeout=10) as client:
        return register_player(client, AUDITOR)


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """This module's server deals stacked decks (tests/web/deals.py)."""
    yield from stacked_decks_server(tmp_path_factory, "sweep", CANASTA_AUDITORS=AUDITOR)


def test_the_move_panel_says_the_deal_is_over_not_your_move(
    new_context: NewContext, http: httpx.Client
) -> None:
    game = classic_played(http, ("abe", "bea", "cal", "dot"))
    host = table_page(new_context(), game.headers["abe"], game.table)
    expect(host.locator("#moves #next-deal")).to_be_visible()
    expect(host.locator("#moves-heading")).to_have_text("The deal is over")
    expect(host.locator("#status")).to_have_text("The deal is over.")  # his panel says the rest
    # Anybody else is told what is awaited (his move panel is gone).
    other = table_page(new_context(), game.headers["bea"], game.table)
    expect(other.locator("#status")).to_have_text(
        "The deal is over: waiting for abe to open the next deal."
    )
    screenshot(other, "sweep-deal-over-waiting", full_page=False)
    screenshot(host, "sweep-deal-over-heading")
    host.locator("#next-deal").click()
    expect(host.locator("#deal .deal")).not_to_have_attribute("data-deal", game.deal_id)
    expect(host.locator("#moves-heading")).to_have_text("Your move")  # the next deal's


def test_the_game_s_end_on_a_small_phone_with_the_longest_names(
    new_context: NewContext, http: httpx.Client
) -> None:
    deal = classic_four()
    # Side A starts past the target: the game ends with this deal (R-GAME-1); its aces fall
    # short of its initial meld's minimum then, so seat 0 keeps them.
    game = start_table(http, deal, LONG, {"A": 9000, "B": 0})
    phone = {"viewport": PHONES["small"], **TOUCH}  # 360 px wide
    page = table_page(new_context(**phone), game.headers[LONG[1]], game.table)
    for step in deal.steps[:2] + deal.steps[3:]:
        play_step(http, game, step)
    expect(page.locator("#moves #rematch")).to_be_visible()
    expect(page.locator("#moves-heading")).to_have_text("The game is over")
    expect(page.locator("#move-hint")).to_contain_text(f"Winner: Side A ({LONG[0]}, {LONG[2]})")
    expect(page.locator("#winner")).to_contain_text(LONG[2])
    screenshot(page, "sweep-phone-game-over", full_page=False)
    # No text past its box, and the page never scrolls sideways.
    spill = page.evaluate(
        """() => [...document.querySelectorAll('#who, #move-hint, #winner, .sides-list li')]
             .filter((node) => node.scrollWidth > node.clientWidth + 1).map((node) => node.id || node.textContent)"""
    )
    assert spill == []
    width = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
    assert width[0] <= width[1], width
    screenshot(page, "sweep-phone-game-over-page")


def test_ask_partner_is_a_secondary_control_after_the_turn_s_moves(
    new_context: NewContext, http: httpx.Client
) -> None:
    game = classic_played(http, ("eli", "flo", "gus", "hal"), 9)  # up to seat 3's draw
    page = table_page(new_context(), game.headers["hal"], game.table)
    ask = page.get_by_role("button", name="Ask flo: may I go out?")
    expect(ask).to_be_visible()
    expect(ask).to_have_class("secondary")
    order = page.evaluate(
        "() => [...document.querySelectorAll('#move-buttons > button')].map((b) => b.dataset.move)"
    )
    assert order[-1] == "ask_partner", order  # after the turn's own moves
    page.locator('#hand [data-card="9C/2"]').click()
    discard = page.locator("#moves [data-move=discard]")
    expect(discard).to_be_enabled()
    colours = [
        node.evaluate("node => getComputedStyle(node).backgroundColor") for node in (ask, discard)
    ]
    assert colours[0] != colours[1], colours  # it does not look like the turn's moves
    screenshot(page, "sweep-ask-partner")
    ask.focus()  # still a button in the tab order, named for a screen reader
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_contain_text("flo")


def test_the_replay_and_the_audit_lead_back_to_the_lobby_and_say_who_is_signed_in(
    new_context: NewContext, http: httpx.Client, auditor: Headers
) -> None:
    game = classic_played(http, ("ida", "jon", "kim", "lou"))
    for who, headers in (("jon", game.headers["jon"]), (AUDITOR, auditor)):
        context = sign_in(new_context(), headers)
        replay = open_page(context, f"/deals/{game.deal_id}/replay")
        expect(replay.locator("#who")).to_have_text(f"Signed in as {who}")
        expect(replay.get_by_role("link", name="Back to the lobby")).to_have_attribute("href", "/")
        if who == AUDITOR:
            audit = open_page(context, f"/audit/deals/{game.deal_id}")
            expect(audit.locator("#who")).to_have_text(f"Signed in as {AUDITOR}")
            back = audit.get_by_role("banner").get_by_role("link", name="Back to the lobby")
            screenshot(audit, "sweep-audit-header", full_page=False)
            back.click()
            expect(audit).to_have_url("/")
        else:
            screenshot(replay, "sweep-replay-header", full_page=False)
    visitor = open_page(new_context(), f"/deals/{game.deal_id}/replay")
    expect(visitor.locator("#who")).to_have_text("Not signed in")
    expect(visitor.get_by_role("link", name="Back to the lobby")).to_be_visible()
    visitor.locator("#lang").select_option("ru")
    expect(visitor.locator("#who")).to_have_text("Вы не вошли")


def test_an_auditor_s_table_page_links_to_the_deal_s_audit_and_nobody_else_s(
    new_context: NewContext, http: httpx.Client, auditor: Headers
) -> None:
    game = classic_played(http, ("max", "ned", "ola", "pia"), 3)
    player = table_page(new_context(), game.headers["ned"], game.table)
    expect(player.locator("#to-replay")).to_be_visible()
    expect(player.locator("#to-audit")).to_have_count(0)  # a player sees nothing new
    visitor = open_page(new_context(), f"/tables/{game.table}")
    expect(visitor.locator("#to-replay")).to_be_visible()
    expect(visitor.locator("#to-audit")).to_have_count(0)
    page = open_page(sign_in(new_context(), auditor), f"/tables/{game.table}")
    link = page.get_by_role("link", name="Audit this deal")
    expect(link).to_have_attribute("href", f"/audit/deals/{game.deal_id}")
    screenshot(page, "sweep-table-audit-link")
    page.locator("#lang").select_option("zh")
    expect(page.locator("#to-audit")).not_to_have_text("Audit this deal")
    page.locator("#to-audit").click()
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    expect(page.locator("#verdict")).to_be_visible()


def test_the_hint_says_what_the_ponytail_is_and_when_it_may_be_picked_up(
    new_context: NewContext, http: httpx.Client
) -> None:
    # Every seat holds seven of a rank: whoever plays first completes a canasta at once.
    ranks = {0: "K", 1: "Q", 2: "J", 3: "10"}
    suits = ("S", "H", "D", "C", "S", "H", "D")
    hands = {
        seat: [f"{rank}{suit}/{1 + i // 4}" for i, suit in enumerate(suits)]
        + [f"{n}{'SHDC'[seat]}/{d}" for n in (4, 5, 6, 8) for d in (1, 2)]
        for seat, rank in ranks.items()
    }
    deck = deck_for("ponytail", 4, 3, 61, hands, [])
    game = open_table(http, ["qin", "ray", "sue", "tod"], entry="ponytail", start=False)
    game.start({"dealer": 3, "deck": deck})
    menus = {
        name: http.get(f"/deals/{game.deal_id}/moves", headers=h).json()
        for name, h in game.headers.items()
    }
    cutter = next(name for name, menu in menus.items() if menu["moves"])
    send(http, game, game.names.index(cutter), {"type": "cut", "n": 61})
    first = next(
        seat
        for seat, name in enumerate(game.names)
        if http.get(f"/deals/{game.deal_id}/moves", headers=game.headers[name]).json()["moves"]
    )
    page = table_page(new_context(), game.headers[game.names[first]], game.table)
    hint = page.locator("#move-hint")
    expect(hint).to_contain_text(
        "Your ponytail (13 face-down cards) joins your hand once your side completes its first canasta"
    )
    expect(page.locator("#moves [data-move=pick_up_ponytail]")).to_have_count(0)
    screenshot(page, "sweep-ponytail-later")
    send(http, game, first, {"type": "draw"})
    seven = hands[first][:7]
    send(http, game, first, {"type": "meld", "melds": [{"cards": seven, "rank": ranks[first]}]})
    expect(page.locator("#moves [data-move=pick_up_ponytail]")).to_be_visible()
    expect(hint).to_contain_text(
        "Your ponytail (13 face-down cards) may be picked up now: “Pick up the ponytail” adds its cards to your hand."
    )
    screenshot(page, "sweep-ponytail-now")
    page.locator("#moves [data-move=pick_up_ponytail]").click()
    expect(hint).not_to_contain_text("ponytail")
    page.locator("#lang").select_option("th")
    expect(page.locator("html")).to_have_attribute("lang", "th")
