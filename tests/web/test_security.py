"""The pages under their Content-Security-Policy in a real browser (docs/operations.md,
"Security headers"): every page works with no violation of its policy (no script, style,
frame or connection the policy refuses, as the browser reports them: its console and the
``securitypolicyviolation`` event), another site cannot frame the table page, and what a
visitor types or puts in an address is shown as text, never run.

Screenshots: ``.screenshots/security-*.png``."""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import BrowserContext, ConsoleMessage, Dialog, Response, expect

from tests.e2e.conftest import Backend
from tests.support.http import Game, open_table, register_player, state_reader
from tests.web.conftest import NewContext, screenshot, stacked_decks_server
from tests.web.pages import LIVE_MS, goto_ready, open_lobby, open_page, sign_in, sign_up

pytestmark = pytest.mark.slow

AUDITOR = "audrey"
#: What the browser's console says of a policy it enforces.
POLICY_WORDS = re.compile(r"Content Security Policy|Permissions-Policy|Refused to", re.I)
#: Reports a violation to the test (``expose_binding``) from every document of a context.
REPORT = """document.addEventListener("securitypolicyviolation", (e) => window.cspViolation(
    `${e.effectiveDirective} refused ${e.blockedURI} (${e.sourceFile}:${e.lineNumber})`));"""


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """This module's server: ``audrey`` is an auditor (CANASTA_AUDITORS)."""
    yield from stacked_decks_server(tmp_path_factory, "security", CANASTA_AUDITORS=AUDITOR)


@dataclass
class Watch:
    """What the browser reported of one context's pages: policy violations and console
    lines about a policy, and the answers of the server it received."""

    origin: str
    violations: list[str] = field(default_factory=list)
    answers: list[Response] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def console(self, message: ConsoleMessage) -> None:
        if POLICY_WORDS.search(message.text):
            self.violations.append(f"console {message.type}: {message.text}")


def watched(context: BrowserContext, origin: str) -> Watch:
    """Watches every page ``context`` opens from now on."""
    watch = Watch(origin)
    context.expose_binding(
        "cspViolation",
        lambda source, text: watch.violations.append(f"{source['frame'].url}: {text}"),
    )
    context.add_init_script(REPORT)
    context.on("console", watch.console)
    context.on("response", lambda answer: watch.answers.append(answer))

    def dialog(opened: Dialog) -> None:  # alert(), confirm(): a script that should not run
        watch.dialogs.append(opened.message)
        opened.dismiss()

    context.on("dialog", dialog)
    return watch


def check_answers(watch: Watch) -> int:
    """Every answer of the server has nosniff, and none but a static file may be kept by a
    cache (the pages are revalidated: ``no-cache``); returns how many were checked."""
    checked = 0
    for answer in watch.answers:
        if not answer.url.startswith(watch.origin):
            continue
        headers = answer.headers
        path = answer.url[len(watch.origin) :]
        assert headers.get("x-content-type-options") == "nosniff", answer.url
        assert "frame-ancestors 'none'" in headers.get("content-security-policy", ""), answer.url
        if not path.startswith(("/web/", "/docs-assets/")):
            assert headers.get("cache-control") in ("no-store", "no-cache"), (path, headers)
            if not headers.get("content-type", "").startswith("text/html"):
                assert headers["cache-control"] == "no-store", (path, headers)
        checked += 1
    return checked


@pytest.fixture(scope="module")
def finished(web_server: Backend) -> Iterator[Game]:
    """A 2-player classic deal played to its end over HTTP (for the replay and the audit)."""
    with httpx.Client(base_url=web_server.server.url, timeout=30) as http:
        game = open_table(http, ["fin-ann", "fin-bob"])
        game.play_deal(state_reader(web_server.shadow()), random.Random(3))
        yield game


def test_every_page_works_under_its_policy(
    new_context: NewContext, web_server: Backend, http: httpx.Client, finished: Game
) -> None:
    origin = web_server.server.url
    watches: list[Watch] = []

    def person() -> tuple[BrowserContext, Watch]:
        context = new_context()
        watches.append(watched(context, origin))
        return context, watches[-1]

    # The lobby: sign up, the language menu, a private table and its invitation link.
    ann_context, _ = person()
    ann, _ = open_lobby(ann_context)
    sign_up(ann, "ann")
    ann.locator("#lang").select_option("zh")
    expect(ann.locator("html")).to_have_attribute("lang", "zh")
    ann.locator("#lang").select_option("en")
    expect(ann.get_by_label("Your name")).to_be_attached()
    ann.get_by_label("Players").select_option("2")
    ann.get_by_label("Private table: by invitation only").check()
    ann.get_by_role("button", name="Create the table").click()
    expect(ann.get_by_role("region", name="Your invitation link")).to_be_visible()
    link = ann.get_by_label("Invitation link", exact=True).input_value()
    screenshot(ann, "security-lobby-invitation")
    ann.get_by_role("button", name="Done").click()
    private = ann.locator("#private-tables").get_by_role(
        "article", name="Classic table of 2, host ann"
    )
    private.get_by_role("button", name="Take a seat").click()
    expect(private).to_contain_text("Seat 1: ann (you)", timeout=LIVE_MS)

    # The invitation, opened by another player; then the host's controls start the game.
    bob_context, _ = person()
    bob = open_page(bob_context, link)
    sign_up(bob, "bob")
    bob.get_by_role("button", name="Join", exact=True).click()
    expect(bob.get_by_role("status")).to_have_text("You sit in seat 2.")
    start = private.get_by_role("button", name="Start the game")
    start.click(timeout=LIVE_MS)
    expect(private.get_by_role("link", name="Open the table")).to_be_visible(timeout=LIVE_MS)
    screenshot(ann, "security-lobby-host")

    # The table, as a player (his hand, his moves) and live; and a bot's practice table.
    private.get_by_role("link", name="Open the table").click()
    ann.wait_for_url("**/tables/*")
    expect(ann.locator("body[data-ready=true]")).to_be_attached()
    expect(ann.locator("#deal")).to_contain_text("ann (you")
    expect(ann.locator("#seat-panel")).to_contain_text("Leave my seat")
    screenshot(ann, "security-table-player")
    bob.get_by_label("Bot level").select_option("basic")
    bob.get_by_role("button", name="Play now").click()
    bob.wait_for_url("**/tables/*")
    expect(bob.locator("#moves [data-move]").first).to_be_visible(timeout=LIVE_MS)
    screenshot(bob, "security-table-practice")

    # A spectator of a public table in play; the replay and the audit of a finished deal.
    public = open_table(http, ["pub-ann", "pub-bob"])
    spectator_context, _ = person()
    spectator = open_page(spectator_context, f"/tables/{public.table}")
    expect(spectator.locator("#deal")).to_contain_text("pub-ann")
    screenshot(spectator, "security-table-spectator")
    replay = open_page(spectator_context, f"/deals/{finished.deal_id}/replay")
    replay.locator("#next").click()
    expect(replay).to_have_url(re.compile(r"step=2$"))
    screenshot(replay, "security-replay")
    auditor_context, _ = person()
    sign_in(auditor_context, register_player(http, AUDITOR))
    audit = open_page(auditor_context, f"/audit/deals/{finished.deal_id}")
    expect(audit.locator("#verdict-summary")).not_to_be_empty()
    screenshot(audit, "security-audit", full_page=False)

    # The rules' pages: the overview, a rule opened by its link (highlighted by rules.js),
    # and the overview's table of the entries.
    rules = spectator_context.new_page()
    rules.goto("/rules/common#R-PILE-3")
    expect(rules.locator("[id='R-PILE-3']")).to_be_visible()
    rules.goto("/rules")
    expect(rules.locator("table").first).to_be_visible()
    screenshot(rules, "security-rules", full_page=False)

    # The API's own pages: Swagger UI (an operation opened) and ReDoc (its search).
    docs = spectator_context.new_page()
    docs.goto("/docs")
    operation = docs.locator(".opblock").first
    expect(operation).to_be_visible()
    operation.locator(".opblock-summary").click(no_wait_after=True)
    expect(docs.get_by_role("button", name="Try it out").first).to_be_visible()
    screenshot(docs, "security-docs", full_page=False)
    redoc = spectator_context.new_page()
    redoc.goto("/redoc")
    expect(redoc.get_by_role("heading", name=re.compile("canasta-ledger"))).to_be_visible()
    redoc.get_by_placeholder("Search").fill("deal")
    expect(redoc.locator("[role=search] li, [data-role='search:results'] li").first).to_be_visible()
    screenshot(redoc, "security-redoc", full_page=False)

    violations = [line for watch in watches for line in watch.violations]
    assert violations == [], "\n".join(violations)
    assert sum(check_answers(watch) for watch in watches) > 50
    streams = [a.url for watch in watches for a in watch.answers if "/stream" in a.url]
    assert streams, "the table pages' live streams were checked too"


@contextmanager
def another_site(body: str) -> Iterator[str]:
    """A site of somebody else's on this machine that answers every GET with ``body``; its
    address (``localhost``: another site than the server's ``127.0.0.1``; a public address
    may not frame a private one at all, whatever the headers, in Chromium)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_another_site_cannot_frame_the_table_page(
    new_context: NewContext, web_server: Backend, http: httpx.Client
) -> None:
    """A page of another site that frames the table page under a decoy (to make a signed-in
    player click "Leave my seat" or a move through it) gets nothing: the browser refuses to
    show the frame (frame-ancestors 'none') and says so in its console."""
    game = open_table(http, ["frm-ann", "frm-bob"])
    context = new_context()
    sign_in(context, game.host)
    refused: list[str] = []
    context.on("console", lambda message: refused.append(message.text))
    target = f"{web_server.server.url}/tables/{game.table}"
    decoy = f'<h1>Win a prize</h1><iframe id="victim" src="{target}" width="900" height="600">'
    with another_site(decoy + "</iframe>") as attacker:
        page = context.new_page()
        page.goto(attacker)
        expect(page.get_by_role("heading", name="Win a prize")).to_be_visible()
        page.wait_for_load_state("load")
        frame = page.frame_locator("#victim")
        page.wait_for_timeout(1_000)  # the table page, had it been shown, would be ready
        expect(frame.locator("body[data-ready=true]")).to_have_count(0)
        expect(frame.locator("#deal")).to_have_count(0)
        assert any("frame-ancestors" in text for text in refused), refused
        screenshot(page, "security-framed")


def test_an_invitation_code_never_reaches_a_server_log(
    new_context: NewContext, web_server: Backend
) -> None:
    """The store keeps only a hash of a private table's code, but the invitation link had it
    in the address's query (``/?invite=<table>:<code>``): every opening of the link wrote it in
    the server's access log (and a proxy's). The link now carries it after the "#", which a
    browser never sends; older ``?invite=`` links still fill the form."""
    host_context = new_context()
    host, _ = open_lobby(host_context)
    sign_up(host, "ivy")
    host.get_by_label("Players").select_option("2")
    host.get_by_label("Private table: by invitation only").check()
    host.get_by_role("button", name="Create the table").click()
    expect(host.get_by_role("region", name="Your invitation link")).to_be_visible()
    link = host.get_by_label("Invitation link", exact=True).input_value()
    pair = link.split("invite=")[1]
    table, code = pair.split(":")
    assert link.startswith(f"{web_server.server.url}/#invite=")

    guest_context = new_context()
    guest, sent = open_lobby(guest_context)
    guest.goto(link)
    sign_up(guest, "jon")
    expect(guest.get_by_label("Invitation link you received")).to_have_value(pair)
    guest.get_by_role("button", name="Join", exact=True).click()
    expect(guest.get_by_role("status")).to_have_text("You sit in seat 1.")
    expect(guest).to_have_url(f"{web_server.server.url}/")  # the code leaves the address
    # What the browser sent is what an access log writes (the address with its query; this
    # test server keeps no access log): the code is in none of it.
    assert [url for url in sent if f"/tables/{table}/seats" in url], sent
    assert not [url for url in sent if code in url]
    assert code not in web_server.server.log()

    # An older link, with the code in the query, still fills the form.
    older = open_page(guest_context, f"/?invite={quote(pair)}")
    expect(older.get_by_label("Invitation link you received")).to_have_value(pair)


#: Addresses a visitor may be sent to, with markup, quotes and script URLs in them.
HOSTILE = [
    "<img src=x onerror=alert(1)>",
    '"><svg onload=alert(2)>',
    "javascript:alert(3)",
    "\u202egnp.exe<b>bold",  # a right-to-left override (no "/": it would split the path)
    "<script>alert(4)" + "x" * 3000,
]


def test_what_a_visitor_types_or_is_sent_is_shown_as_text(
    new_context: NewContext, web_server: Backend
) -> None:
    """Markup in an address, an invitation link or a name is never run nor made into
    elements: the pages show it as text (or refuse it) and the policy reports nothing."""
    context = new_context()
    watch = watched(context, web_server.server.url)
    page = context.new_page()
    for text in HOSTILE:
        part = quote(text, safe="")
        for path in (
            f"/tables/{part}",
            f"/deals/{part}",
            f"/deals/{part}/replay?step={part}",
            f"/audit/deals/{part}",
        ):
            page.goto(path)
            expect(page.locator("body[data-ready=true]")).to_be_attached()
            expect(page.get_by_role("alert").filter(has_text="Refused").first).to_be_visible()
            assert page.locator("img, svg, script:not([src]), b").count() == 0, path
        goto_ready(page, f"/?invite={part}")
        field = page.get_by_label("Invitation link you received")
        expect(field).to_have_value(text)
        page.get_by_label("Your name").fill(text[:200])
        page.get_by_role("button", name="Create my account").click()
        expect(page.get_by_role("alert")).to_contain_text("Refused")
        assert page.locator("main img, main svg, main b").count() == 0
    screenshot(page, "security-hostile-name")
    assert watch.violations == [], "\n".join(watch.violations)
    assert watch.dialogs == []
