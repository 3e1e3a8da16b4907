"""A whole deal in real browsers, only by clicking (docs/web.md): four people sign up in the
lobby, the host creates a classic table of four, everybody takes a seat, the host starts, and
they play the short, known deal of ``tests/web/deals.py`` (a stacked deck, the server in test
mode) from the cut to the score breakdown, each in his own browser context. A fifth context,
signed out, watches from the lobby's "Watch" link: it sees every move live, and nothing it
was given (answers, stream messages, the page's HTML and storage) holds a card that was hidden
at that step, checked against the auditor's history (tests/web/secrecy.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, Route, expect

from tests.e2e.conftest import Backend
from tests.support.http import register_player
from tests.web.conftest import NewContext, screenshot, stacked_decks_server
from tests.web.deals import ScriptedDeal, Step, classic_four
from tests.web.pages import LIVE_MS, open_lobby, sign_up
from tests.web.recorder import PageRecorder
from tests.web.secrecy import read_history

pytestmark = pytest.mark.slow  # browsers and a server: part of `make test`

AUDITOR = "audra"
NAMES = ("ada", "ben", "cleo", "dov")  # room seats 0 to 3, in the order they sit down
TABLE = "Classic table of 4, host ada"


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """Stacked decks (tests only, R-DEAL-3) and an auditor to check the spectator against."""
    yield from stacked_decks_server(tmp_path_factory, "full", CANASTA_AUDITORS=AUDITOR)


def stack_the_deck(page: Page, deal: ScriptedDeal) -> None:
    """The test mode's one liberty: the host's click on "Start the game" sends the page's own
    request, to which the test adds the stacked deck (the page knows nothing of it)."""

    def add_deck(route: Route) -> None:
        body = json.loads(route.request.post_data or "{}") or {}
        headers = {**route.request.headers, "content-type": "application/json"}
        route.continue_(post_data=json.dumps({**body, **deal.start_body}), headers=headers)

    page.route("**/tables/*/start", add_deck)


def deal_step(page: Page) -> int:
    return int(page.locator("#deal .deal").get_attribute("data-step") or 0)


def play(page: Page, step: Step) -> None:
    """The clicks that make ``step``'s move on the acting player's page."""
    moves = page.locator("#moves")
    if step.kind == "cut":
        page.locator("#cut-n").fill(str(step.command["n"]))
        moves.locator('[data-move="cut"]').click()
    elif step.kind == "draw":
        moves.locator('[data-move="draw"]').click()
    elif step.kind == "ask_partner":
        moves.locator(
            f'[data-move="ask_partner"][data-partner="{step.command["partner"]}"]'
        ).click()
    elif step.kind == "answer":
        moves.locator(f'[data-move="answer_{"yes" if step.command["yes"] else "no"}"]').click()
    elif step.kind == "meld" and step.command.get("discard"):
        # Going out: the menu's own meld-and-discard, offered as a suggestion.
        discard = step.command["discard"]
        face = discard.split("/")[0]
        shown = face[:-1] + {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}[face[-1]]
        moves.locator('[data-move="suggestion"]').filter(has_text=shown).click()
    elif step.kind in ("meld", "discard"):
        for code in step.cards:
            card = page.locator(f'#hand [data-card="{code}"]')
            card.click()
            expect(card).to_have_attribute("aria-pressed", "true")
        moves.locator(f'[data-move="{step.kind}"]').click()
    else:
        raise AssertionError(f"no clicks for {step.kind}")


def test_four_players_play_a_whole_deal_by_clicking_and_a_spectator_sees_every_move(
    new_context: NewContext, web_server: Backend
) -> None:
    deal = classic_four()
    with httpx.Client(base_url=web_server.server.url, timeout=15) as http:
        auditor = register_player(http, AUDITOR)

    # The lobby: four sign-ups, the host's table, four seats taken in turn, the start.
    pages: list[Page] = []
    for name in NAMES:
        page, _ = open_lobby(new_context())
        sign_up(page, name)
        pages.append(page)
    host = pages[0]
    host.get_by_label("Entry").select_option("classic")
    host.get_by_label("Players").select_option("4")
    host.get_by_role("button", name="Create the table").click()
    for seat, page in enumerate(pages):
        card = page.locator("#open-tables").get_by_role("article", name=TABLE)
        card.get_by_role("button", name="Take a seat").click(timeout=LIVE_MS)
        expect(page.get_by_role("status")).to_have_text(f"You sit in seat {seat + 1}.")
    stack_the_deck(host, deal)
    open_card = host.locator("#open-tables").get_by_role("article", name=TABLE)
    open_card.get_by_role("button", name="Start the game").click(timeout=LIVE_MS)
    expect(host.locator("#error")).to_be_hidden()
    expect(host.get_by_role("status")).to_have_text("The game has started.")

    # Everybody opens the table from the lobby; the spectator by its "Watch" link. What each
    # page is given from now on is recorded.
    recorders = [PageRecorder(page) for page in pages]
    for page in pages:
        playing = page.locator("#playing-tables").get_by_role("article", name=TABLE)
        playing.get_by_role("link", name="Open the table").click(timeout=LIVE_MS)
        expect(page.locator("body[data-ready=true]")).to_be_attached()
    watcher, _ = open_lobby(new_context())
    recorder = PageRecorder(watcher)
    watched = watcher.locator("#playing-tables").get_by_role("article", name=TABLE)
    watched.get_by_role("link", name="Watch").click(timeout=LIVE_MS)
    expect(watcher.locator("body[data-ready=true]")).to_be_attached()
    expect(watcher.locator("#hand")).to_have_count(0)
    deal_id = watcher.locator("#deal .deal").get_attribute("data-deal")
    assert deal_id
    everyone = [*pages, watcher]

    # The deal, move by move: the acting player clicks; everybody's page, the spectator's too,
    # shows the new step and its events in the log without a reload.
    step_no = deal_step(watcher)
    for number, step in enumerate(deal.steps, 1):
        play(pages[step.seat], step)
        step_no += len(step.events)
        for page in everyone:
            expect(page.locator(f'#deal .deal[data-step="{step_no}"]')).to_be_attached()
        for kind in step.events:
            if kind == "DealScored":
                continue
            expect(watcher.locator(f'#log li[data-kind="{kind}"]').first).to_be_attached()
        recorder.snapshot()
        if number == 8:  # mid-deal: the player about to ask, and the spectator
            screenshot(pages[3], "table-four-player")
            screenshot(watcher, "table-four-spectator")

    # The end: every page shows the same breakdown and the totals.
    for page in everyone:
        breakdown = page.locator("table.breakdown")
        expect(breakdown).to_be_visible()
        for scores in deal.scores.values():
            expect(breakdown).to_contain_text(str(scores["total"]))
    screenshot(pages[3], "table-score-breakdown")
    # Each log line came once: as many lines as the deal's events the spectator may see.
    logged = watcher.locator("#log li").evaluate_all("nodes => nodes.map(n => n.dataset.step)")
    assert len(logged) == len(set(logged))

    # The host stops the game from the table page; the lobby lists it among the games played,
    # and its results open at the table page.
    host.locator("#stop-game").click()
    host.locator("#stop-confirm").click()
    expect(host.locator("#totals")).to_contain_text("The host stopped the game.")
    lobby, _ = open_lobby(new_context())
    played = lobby.locator("#finished-tables").get_by_role("article", name=TABLE)
    expect(played).to_contain_text("stopped", timeout=LIVE_MS)
    played.get_by_role("link", name="See the results").click()
    expect(lobby.locator("#totals")).to_contain_text(str(deal.scores["B"]["total"]))

    # Nothing the spectator was given held a card hidden at that step.
    with httpx.Client(base_url=web_server.server.url, timeout=15) as http:
        secrets = read_history(http, deal_id, auditor)
    seen = recorder.seen()
    assert any(s.where.startswith("SSE") for s in seen), "the spectator followed the stream"
    assert secrets.violations(seen) == []
    assert secrets.last_step == step_no
    # And each player's page held only what his seat may see.
    for seat, player in enumerate(recorders):
        player.snapshot()
        assert secrets.violations(player.seen(), seat=seat) == [], NAMES[seat]
