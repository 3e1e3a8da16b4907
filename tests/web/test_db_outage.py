"""A player's table page while PostgreSQL does not answer (docs/operations.md, "When
PostgreSQL goes away"), with every part real: the server on PostgreSQL through a TCP relay
(tests/support/relay.py) that the test cuts and resumes, and Chromium.

A move pressed during the outage is answered 503 ``database_unavailable``: the page says the
server could not be reached, in the player's words and language (as for a proxy's 502), not
"Refused: ... (database_unavailable)" as if a rule had refused his move; nothing is recorded.
His buttons are his again at once; once the database is back, the page reads the deal again by
itself (no stream event comes to make it: nobody can move), its notice goes away with no
press, and the same press is accepted and recorded once."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Backend, make_backend, running
from tests.support.relay import Relay
from tests.web.conftest import NewContext, screenshot
from tests.web.pages import LIVE_MS, table_page

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

#: CANASTA_DATABASE_WAIT_SECONDS: a request waits this long for the database, then 503.
WAIT_SECONDS = "1"


@pytest.fixture
def relay(migrated_postgres_url: str) -> Iterator[tuple[Relay, str]]:
    relay, url = Relay.to_url(migrated_postgres_url)
    yield relay, url
    relay.cut()


@pytest.fixture
def web_server(relay: tuple[Relay, str], tmp_path: Path) -> Iterator[Backend]:
    """This module's server: PostgreSQL through the relay (overrides the SQLite one)."""
    env = {
        "CANASTA_DATABASE_WAIT_SECONDS": WAIT_SECONDS,
        "CANASTA_RUN_BOTS": "false",
        "CANASTA_READY_TIMEOUT_SECONDS": "0.5",
    }
    yield from running(make_backend("postgres", tmp_path, relay[1], extra_env=env))


def first_move(page: Page) -> str | None:
    """The name of the first move the page offers its player, if any."""
    moves = page.locator("#moves [data-move]")
    return moves.first.get_attribute("data-move") if moves.count() else None


def test_a_move_pressed_while_the_database_is_away_says_the_server_could_not_be_reached(
    new_context: NewContext, web_server: Backend, relay: tuple[Relay, str]
) -> None:
    api = web_server.api()
    ann, bob = api.register("ann"), api.register("bob")
    table = api.seated_table([ann, bob])
    deal = api.start(ann, table)
    pages = {
        player.name: table_page(new_context(), {"Authorization": f"Bearer {player.token}"}, table)
        for player in (ann, bob)
    }
    for page in pages.values():
        expect(page.locator("#deal")).to_be_visible(timeout=LIVE_MS)
    acting = next(name for name, page in pages.items() if first_move(page))
    page = pages[acting]
    move = page.locator("#moves [data-move]").first
    before = api.deal(deal, spectator=True)["step"]

    relay[0].cut()
    # His press gets the 503; the page's read after it gets one too (nobody can move, so no
    # stream event will come to catch the page up).
    deal_read = re.compile(rf"/deals/{deal}$")
    with page.expect_response(lambda r: bool(deal_read.search(r.url)) and r.status == 503):
        move.click()
    notice = page.get_by_text("The server could not be reached.")
    expect(notice).to_be_visible()
    expect(page.locator("body")).not_to_contain_text("database_unavailable")
    expect(page.locator("body")).not_to_contain_text("Refused")
    # His buttons are his again at once (not left disabled as while a command is on its way).
    expect(move).to_be_enabled()
    screenshot(page, "db-outage-move")

    relay[0].resume()
    # The page reads again by itself: the notice goes once the server answers, with no press.
    expect(notice).to_be_hidden(timeout=LIVE_MS)
    pressed = page.locator("#moves [data-move]").first.get_attribute("data-move")
    page.locator(f'#moves [data-move="{pressed}"]').click()
    expect(page.locator(f'#moves [data-move="{pressed}"]')).to_have_count(0, timeout=LIVE_MS)
    assert api.deal(deal, spectator=True)["step"] > before
    kinds = [event["kind"] for event in api.events(deal)]
    assert kinds.count("DeckCut") == 1, "his move (the cut), recorded once"
