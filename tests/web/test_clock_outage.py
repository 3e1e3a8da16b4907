"""The turn clock across an outage of the server, in a real browser (docs/tables.md, "Turn
clock"; docs/operations.md, "Restarts and crashes"): a player's table page stays open while
the server is killed in her turn and kept down for longer than the whole turn; her cut sent
meanwhile gets no answer. Back, her page reconnects by itself, at once when the server
answers her page again, says in its log that the server was out of service and her clock
starts again, and counts her whole time down again: her turn is not timed out at once, and
her cut, past her old deadline, counts."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Backend, make_backend, running
from tests.support.http import open_table
from tests.web.conftest import NewContext, screenshot
from tests.web.pages import LIVE_MS, table_page

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

#: The table's clock. The page tries to reopen its stream after waits that double from 1.5 s
#: up to 10 s (live.js): after an outage that ends past the turn's old deadline (about 30 s),
#: it is back within some 10 s of the restart, well within the whole turn again.
TURN_SECONDS = 30
OUTAGE_SECONDS = 2
#: Where the screenshots are copied for a person to look at.
SHOTS = Path("/tmp/clock-outage")


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """This module's own server (SQLite, as ``make run``): its test kills it."""
    env = {"CANASTA_TURN_SECONDS_MIN": "1", "CANASTA_OUTAGE_SECONDS": str(OUTAGE_SECONDS)}
    yield from running(make_backend("sqlite", tmp_path_factory.mktemp("outage"), extra_env=env))


def test_the_page_shows_the_clock_started_again_after_an_outage(
    web_server: Backend, new_context: NewContext, http: httpx.Client
) -> None:
    server = web_server.server
    game = open_table(http, ("ann", "bob"), table={"turn_seconds": TURN_SECONDS})
    ann, bob = (game.headers[name] for name in game.names)
    table = game.table
    view = http.get(f"/tables/{table}").json()
    to_act = http.get(f"/deals/{view['current_deal']}").json()
    assert to_act["phase"] == "cut"
    player = (ann, bob)[to_act["cutter"]]  # her page is open; she does not move
    page = table_page(new_context(), player, table)
    page.evaluate("window.notReloaded = true")
    clock = page.get_by_role("timer").first
    expect(clock).to_be_visible()
    old_deadline = datetime.fromisoformat(to_act["deadline"])

    server.kill()
    # She tries to cut while the server is away: nothing answers, nothing is recorded.
    cut = page.locator("#moves [data-move=cut]")
    cut.click()
    expect(page.get_by_role("alert")).to_have_text("The server could not be reached.")
    reconnecting = page.locator("#connection")
    expect(reconnecting).to_be_visible()
    time.sleep(max(0.0, (old_deadline - datetime.now(UTC)).total_seconds() + 1))
    assert datetime.now(UTC) > old_deadline
    server.start()
    # Her page reads again every 2 s while it gets no answer: the first answer reopens its
    # streams at once, not after a wait grown through the outage (live.js: up to 10 s; until
    # 4 December 2026 up to 30 s, which left her log and clock still some 15 s after the return).
    expect(reconnecting).to_be_hidden(timeout=6_000)

    restarted = page.locator("#log li[data-kind=TurnClockRestarted]")
    # Within the page's longest wait between two tries (10 s; it was 30 s) and some slack.
    expect(restarted).to_have_count(1, timeout=LIVE_MS)
    expect(restarted).to_contain_text("The server was out of service during")
    expect(restarted).to_contain_text("clock starts again, with the whole time")
    expect(page.locator("#log li[data-kind=TurnTimedOut]")).to_have_count(0)
    # The log's line comes with the stream; the clock's new deadline with the deal's view, read
    # again after it (a moment later on a busy box: until then the old deadline shows 0 s).
    expect(clock).to_have_attribute("data-left", re.compile(r"^[1-9][0-9]*$"))
    expect(clock).to_contain_text("s left to play")
    left = int(clock.get_attribute("data-left") or "-1")
    assert 0 < left <= TURN_SECONDS, left
    assert page.evaluate("window.notReloaded === true"), "the page was reloaded"
    shot = screenshot(page, "clock-outage-restarted")
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / shot.name).write_bytes(shot.read_bytes())
    # She cuts now, past her old deadline, within her whole time again: it counts.
    cut.click()
    expect(page.locator("#log li[data-kind=DeckCut]")).to_have_count(1)
    expect(page.locator("#log li[data-kind=TurnTimedOut]")).to_have_count(0)
