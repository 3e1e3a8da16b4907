"""The server restarts under open pages (docs/operations.md, "Restarts and crashes"): a player's
table page, a spectator's and the lobby stay open while the server is killed (SIGKILL, as a
crash) and started again on the same store. Without a reload, each page reconnects by itself
and catches up: every event of the deal in its log once, none missed, and the message "The
server could not be reached." that the outage showed is taken down once the server answers
again (it stayed up for good before). And behind a reverse proxy, which answers 502 while
the server is down: the table page's streams come back too (the browser gives up on an
``EventSource`` that gets an error answer; the table's stream was then lost for good, and with
it the seats, scores and next deals), and the proxy's 502 reads as the server unreachable and
goes with the outage (it stayed, as "Refused: Bad Gateway (502)")."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.conftest import Backend, make_backend, running
from tests.support.http import register_player
from tests.support.relay import BAD_GATEWAY, Relay
from tests.web.conftest import PAGE_WAIT_MS, NewContext, screenshot
from tests.web.pages import LIVE_MS, open_lobby, table_page
from tests.web.practice import check_log, play_moves, start_practice, wait_until_quiet

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

UNREACHABLE = "The server could not be reached."
#: The player's own moves between the two crashes, and after the second.
MOVES = 6


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """This module's own server (SQLite, as ``make run``): its test kills it."""
    yield from running(make_backend("sqlite", tmp_path_factory.mktemp("restart")))


def test_open_pages_reconnect_and_catch_up_after_a_crash_without_a_reload(
    web_server: Backend, new_context: NewContext, http: httpx.Client
) -> None:
    server = web_server.server
    ann = register_player(http, "ann")
    table, deal = start_practice(http, ann)

    mine = new_context()
    page = table_page(mine, ann, table)
    lobby, _ = open_lobby(mine)  # signed in by the same cookie
    spectator = new_context().new_page()
    spectator.goto(f"/tables/{table}")
    expect(spectator.locator("body[data-ready=true]")).to_be_attached()
    pages = (page, lobby, spectator)
    for opened in pages:  # a reload would lose it
        opened.evaluate("window.notReloaded = true")
    # Her first move: the cut, or her first draw if the bot cut (the first dealer is drawn).
    step = wait_until_quiet(http, ann, deal)
    first = page.locator("#moves :is([data-move=cut], [data-move=draw])")
    expect(first).to_be_visible()

    # A crash while ann is to act: her click finds no server, and the lobby's next poll neither.
    server.kill()
    first.click()
    alert, lobby_alert = page.get_by_role("alert"), lobby.get_by_role("alert")
    expect(alert).to_have_text(UNREACHABLE)
    expect(lobby_alert).to_have_text(UNREACHABLE, timeout=LIVE_MS)
    reconnecting = page.locator("#connection")
    expect(reconnecting).to_be_visible()
    screenshot(page, "restart-unreachable")

    server.start()
    # Back: the messages go by themselves, and her move is still hers to make (nothing recorded).
    expect(alert).to_be_hidden(timeout=LIVE_MS)
    # The server answered her page's reading again: her streams are reopened then, not at the
    # end of a wait that grew through the outage (live.js), which could leave her table still
    # for many seconds more (it failed CI: the log had not caught up in 15 s).
    expect(reconnecting).to_be_hidden(timeout=5_000)
    expect(lobby_alert).to_be_hidden(timeout=LIVE_MS)
    expect(lobby.locator(f"[data-table='{table}']").first).to_be_visible()
    assert http.get(f"/tables/{table}", headers=ann).json()["your_last_seq"] == 0
    first.click()
    deadline = time.monotonic() + LIVE_MS / 1000
    while http.get(f"/tables/{table}", headers=ann).json()["your_last_seq"] == 0:
        assert time.monotonic() < deadline, "her move after the restart was not recorded"
        time.sleep(0.05)
    assert http.get(f"/deals/{deal}").json()["step"] > step
    play_moves(http, ann, deal, MOVES)

    # A crash in the middle of the deal, with the bot playing and both streams open.
    server.kill()
    time.sleep(1.0)
    server.start()
    play_moves(http, ann, deal, MOVES)
    wait_until_quiet(http, ann, deal)

    check_log(page, http.get(f"/deals/{deal}/events", headers=ann).json(), "ann")
    check_log(spectator, http.get(f"/deals/{deal}/events").json(), "the spectator")
    expect(alert).to_be_hidden()
    for opened in pages:
        assert opened.evaluate("window.notReloaded === true"), "a page was reloaded"
    screenshot(page, "restart-caught-up")
    screenshot(spectator, "restart-spectator-caught-up")


def test_behind_a_proxy_the_table_page_follows_the_table_again_after_a_restart(
    web_server: Backend, browser: Browser, http: httpx.Client
) -> None:
    server = web_server.server
    cat, dan = register_player(http, "cat"), register_player(http, "dan")
    table = http.post("/tables", json={"entry": "classic", "players": 2}, headers=cat).json()["id"]
    for number, player in enumerate((cat, dan)):
        assert http.post(f"/tables/{table}/seats", json={"seat": number}, headers=player).is_success
    assert http.post(f"/tables/{table}/start", headers=cat).status_code == 201
    proxy = Relay("127.0.0.1", server.port, refused=BAD_GATEWAY)
    try:
        context = browser.new_context(base_url=f"http://127.0.0.1:{proxy.port}")
        try:
            context.set_default_timeout(PAGE_WAIT_MS)
            page = table_page(context, dan, table)  # dan's page, through the proxy
            cats = page.locator("li[data-seat-play='0']")
            expect(cats).to_have_attribute("data-away", "false")

            server.kill()
            deadline = time.monotonic() + LIVE_MS / 1000
            while proxy.refusals < 3:  # both streams tried again and got the proxy's 502
                assert time.monotonic() < deadline, "the page did not try to reconnect"
                time.sleep(0.1)
            server.start()

            # What the table's stream tells dan's page: cat leaves her seat (the bot plays it).
            assert http.post(f"/tables/{table}/leave", headers=cat).status_code == 200
            expect(cats).to_have_attribute("data-away", "true", timeout=LIVE_MS)
            expect(page.locator("#log li[data-kind=SeatPlayerChanged]")).to_have_count(1)
            expect(page.get_by_role("alert")).to_be_hidden()  # the outage is over
            screenshot(page, "restart-behind-a-proxy")
        finally:
            context.close()
    finally:
        proxy.cut()


#: In the page: ``EventSource`` replaced by one the test opens and fails at will (each made is
#: kept in ``window.sources``), so that live.js's waits can be run on Playwright's clock.
FAKE_SOURCES = """() => {
  window.sources = [];
  window.EventSource = class {
    constructor(url) { this.url = url; this.listeners = {}; window.sources.push(this); }
    addEventListener(kind, listener) { (this.listeners[kind] ||= []).push(listener); }
    close() { this.closed = true; }
    fire(kind) { for (const listener of this.listeners[kind] || []) listener({ data: "{}" }); }
  };
}"""

#: When the page's clock starts (paused: the test moves it).
START = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)

FOLLOW = """async () => {
  const live = await import("/web/live.js");
  window.common = await import("/web/common.js");
  live.followStream({ url: () => "/stream", kinds: [] });
}"""


def test_a_stream_is_reopened_soon_after_the_server_is_seen_back_whenever_that_comes(
    browser: Browser, web_server: Backend
) -> None:
    """live.js: a sign that the server is back (it answered one of the page's requests) that
    came while the stream's attempt was under way, or within 1.5 s of its start, was dropped:
    the stream waited out its grown wait, up to 10 s, "reconnecting" up meanwhile (likely the
    stress run's failure of the test above: the notice still up 5 s after the server's return).
    Now the next attempt comes at most 1.5 s after the last one. Run on Playwright's clock, with
    an ``EventSource`` the test fails at will."""
    context = browser.new_context(base_url=web_server.server.url)
    try:
        page = context.new_page()
        page.clock.install(time=START)
        page.goto("/rules")  # a page of the server (its scripts may be imported)
        page.clock.pause_at(START + timedelta(hours=1))  # time moves only by run_for now
        page.evaluate(FAKE_SOURCES)
        page.evaluate(FOLLOW)

        def made() -> int:
            return int(page.evaluate("window.sources.length"))

        def fail_and_wait_out() -> None:
            """The attempt fails (the server away: the waits grow to 5-10 s); the clock is run
            up to the next attempt's start."""
            before = made()
            page.evaluate("window.sources.at(-1).fire('error')")
            for _ in range(100):
                page.clock.run_for(100)
                if made() > before:
                    return
            raise AssertionError("no attempt within 10 s")

        page.evaluate("window.sources[0].fire('open')")
        page.clock.run_for(5_000)
        # 0. An open stream drops, the server having answered the page meanwhile (its reads at
        #    each event): it waits its 0.75-1.5 s as ever, "reconnecting" up meanwhile.
        page.evaluate("window.common.api('GET', '/health')")
        page.evaluate("window.sources.at(-1).fire('error')")
        page.clock.run_for(700)
        assert made() == 1, "an open stream that dropped was reopened at once"
        page.clock.run_for(800)
        assert made() == 2
        page.evaluate("window.sources.at(-1).fire('open')")
        for _ in range(4):
            fail_and_wait_out()
        # 1. The server answers the page while an attempt is under way; then that attempt fails.
        before = made()
        page.evaluate("window.common.api('GET', '/health')")
        page.evaluate("window.sources.at(-1).fire('error')")
        page.clock.run_for(1_500)
        assert made() == before + 1, "not reopened after the server was seen back"

        for _ in range(4):
            fail_and_wait_out()
        # 2. An attempt fails at once; the server answers the page right after.
        before = made()
        page.evaluate("window.sources.at(-1).fire('error')")
        page.evaluate("window.common.api('GET', '/health')")
        page.clock.run_for(1_500)
        assert made() == before + 1, "not reopened after the server was seen back"
    finally:
        context.close()
