"""A connection that dies without a word under open table pages (docs/web.md, "Live"): a
laptop's lid closed and opened, a Wi-Fi switch, a NAT or proxy that forgets an idle
connection without a FIN or RST. The browser keeps such an ``EventSource`` "open" for many
minutes while nothing comes, and the page showed the old table for ever ("Waiting for ann"
long after ann had moved). The relay in front of the server stops forwarding the bytes of
the connections open (``Relay.stall``) and closes none; the pages notice the silence within
a bounded time (twice the server's heartbeat interval and 5 s: the stream sends heartbeats
JavaScript sees, ``?heartbeat=event``), say they are reconnecting, and resume both streams
without a reload, every log line once, none missed."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Route, expect

from tests.e2e.conftest import Backend, make_backend, running
from tests.support.http import register_player
from tests.support.relay import Relay
from tests.web.conftest import DESKTOP, PAGE_WAIT_MS, PHONES, TOUCH, screenshot
from tests.web.pages import LIVE_MS, table_page
from tests.web.practice import check_log, play_moves, start_practice, wait_until_quiet

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

#: The server's heartbeat interval here: a page takes 2 x 1 + 5 = 7 s of silence for a death.
HEARTBEAT_SECONDS = 1
RECONNECTING = "Connection lost: reconnecting…"
#: The requests that open a page's streams (GET /deals/{id}/stream?..., /tables/{id}/stream?...).
STREAMS = re.compile(r"/stream\?")
#: Records each time the page says it is reconnecting (the notice may be up for a moment only).
COUNT_NOTICES = """() => {
  window.reconnectNotices = 0;
  window.notReloaded = true;
  const notice = document.getElementById("connection");
  if (!notice) return;
  new MutationObserver(() => { if (!notice.hidden) window.reconnectNotices += 1; })
    .observe(notice, { attributes: true, attributeFilter: ["hidden"] });
}"""


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    backend = make_backend(
        "sqlite",
        tmp_path_factory.mktemp("silent"),
        extra_env={"CANASTA_STREAM_HEARTBEAT_SECONDS": str(HEARTBEAT_SECONDS)},
    )
    yield from running(backend)


def _stream_requests(page: Page) -> list[str]:
    urls: list[str] = []
    page.on(
        "request", lambda request: urls.append(request.url) if "/stream" in request.url else None
    )
    return urls


def test_pages_notice_a_silently_dead_connection_and_resume_their_streams(
    web_server: Backend, browser: Browser, http: httpx.Client
) -> None:
    ann = register_player(http, "ann")
    table, deal = start_practice(http, ann)
    relay = Relay("127.0.0.1", web_server.server.port)
    contexts: list[BrowserContext] = []
    try:
        for options in ({"viewport": DESKTOP}, {"viewport": PHONES["upright"], **TOUCH}):
            context = browser.new_context(
                base_url=f"http://127.0.0.1:{relay.port}", locale="en-GB", **options
            )
            context.set_default_timeout(PAGE_WAIT_MS)
            contexts.append(context)
        page = table_page(contexts[0], ann, table)  # ann's own page, on a desktop
        spectator = contexts[1].new_page()  # somebody watching on a phone
        streams = _stream_requests(spectator)
        spectator.goto(f"/tables/{table}")
        expect(spectator.locator("body[data-ready=true]")).to_be_attached()
        pages = (page, spectator)
        for opened in pages:
            opened.evaluate(COUNT_NOTICES)
        step = wait_until_quiet(http, ann, deal)
        for opened in pages:
            expect(opened.locator(f"#deal .deal[data-step='{step}']")).to_be_attached()

        # A quiet table (the bot waits for ann) is not a dead one: its heartbeats keep the
        # streams open well past the silence a page allows.
        opened_streams = len(streams)
        time.sleep(3 * HEARTBEAT_SECONDS + 5 + 1)
        assert len(streams) == opened_streams, f"a quiet stream was reopened: {streams}"
        assert [p.evaluate("window.reconnectNotices") for p in pages] == [0, 0]

        # Every connection dies silently; ann plays on (from another device) with the bot.
        # The spectator's streams, once reopened, are held back a moment: his notice is up
        # only until they are open again (0.8 s at times: a busy box's look could come after).
        held: list[Route] = []
        spectator.route(STREAMS, lambda route: held.append(route))
        relay.stall()
        stalled = time.monotonic()
        play_moves(http, ann, deal, 3)
        notice = spectator.locator("#connection")
        expect(notice).to_be_visible(timeout=LIVE_MS)
        expect(notice).to_have_text(RECONNECTING)
        noticed = time.monotonic() - stalled
        screenshot(spectator, "silent-drop-reconnecting", full_page=False)
        spectator.unroute(STREAMS)
        for route in held:
            route.continue_()
        expect(notice).to_be_hidden(timeout=LIVE_MS)
        wait_until_quiet(http, ann, deal)
        check_log(page, http.get(f"/deals/{deal}/events", headers=ann).json(), "ann")
        check_log(spectator, http.get(f"/deals/{deal}/events").json(), "the spectator")
        assert noticed < 2 * HEARTBEAT_SECONDS + 5 + 3, f"noticed after {noticed:.1f} s"
        for opened in pages:
            assert opened.evaluate("window.reconnectNotices") >= 1, "no word of the reconnection"
            expect(opened.locator("#connection")).to_be_hidden()

        # The table's stream is back too: the host stops the game, and both pages hear it.
        assert http.post(f"/tables/{table}/stop", headers=ann).status_code == 200
        for opened in pages:
            expect(opened.locator("#totals .winner")).to_have_text(
                "The host stopped the game.", timeout=LIVE_MS
            )
            assert opened.evaluate("window.notReloaded === true"), "a page was reloaded"
        screenshot(page, "silent-drop-caught-up")
    finally:
        for context in contexts:
            context.close()
        relay.cut()
