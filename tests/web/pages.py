"""What the browser tests do on the lobby page, shared by them: open it, sign up by its form,
sign in again with a token, open a page once it is ready."""

from __future__ import annotations

from playwright.sync_api import BrowserContext, Locator, Page, expect

from tests.support.http import Headers
from tests.web.conftest import screenshot

#: Long enough for the lobby's polling (3 s) and its read model to catch up.
LIVE_MS = 15_000


def record_requests(page: Page) -> list[str]:
    """Every URL the page requests from now on."""
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    return urls


def open_lobby(context: BrowserContext) -> tuple[Page, list[str]]:
    page = context.new_page()
    urls = record_requests(page)
    page.goto("/")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    return page, urls


def sign_up(page: Page, name: str, shot: str | None = None) -> str:
    """Signs up by the form; returns the token the page shows once, and dismisses it (after
    a screenshot named ``shot`` if given)."""
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name="Create my account").click()
    box = page.get_by_role("region", name="Your token: keep it safe")
    expect(box).to_be_visible()
    expect(box).to_contain_text("only way back")
    token = page.get_by_label("Token", exact=True).input_value()
    assert token
    expect(page.get_by_text(f"Signed in as {name}")).to_be_visible()
    if shot:
        screenshot(page, shot)
    page.get_by_role("button", name="I have saved my token").click()
    expect(box).to_be_hidden()
    return token


def signed_in(page: Page, headers: dict[str, str]) -> Page:
    """Signs the lobby in with the bearer token of ``headers`` (the "Sign in again" form)."""
    page.get_by_label("Your token", exact=True).fill(headers["Authorization"].split()[1])
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_text("Signed in as")).to_be_visible()
    return page


def table_page(context: BrowserContext, headers: dict[str, str], table: str) -> Page:
    """A player's table page: a new page of ``context`` signed in with the token of
    ``headers`` (the lobby's form), then the table's address, ready."""
    page = signed_in(open_lobby(context)[0], headers)
    page.goto(f"/tables/{table}")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    return page


def sign_in(context: BrowserContext, headers: Headers) -> BrowserContext:
    """Opens a browser session for the token's player (what the lobby's sign-in does)."""
    answer = context.request.post(
        "/sessions", headers={**headers, "X-Canasta-CSRF": "1", "Accept": "application/json"}
    )
    assert answer.status == 201, answer.text()
    return context


def open_page(context: BrowserContext, path: str) -> Page:
    """A new page of the context at ``path``, once it says it is ready."""
    return goto_ready(context.new_page(), path)


def goto_ready(page: Page, path: str) -> Page:
    """``page`` gone to ``path``, once it says it is ready."""
    page.goto(path)
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    return page


def in_language(page: Page, lang: str) -> Page:
    """Chooses ``lang`` in the page's language menu and waits until the page speaks it."""
    page.locator("#lang").select_option(lang)
    expect(page.locator("html")).to_have_attribute("lang", lang)
    return page


#: In the page: from now on, ``window.heard`` gathers each line added to the table page's
#: spoken log (``#said``: what a screen reader is told, each line once).
HEARD = """() => {
  window.heard = [];
  new MutationObserver((changes) => {
    for (const change of changes) for (const node of change.addedNodes) window.heard.push(node.textContent);
  }).observe(document.getElementById("said"), { childList: true });
}"""


def snapshot(locator: Locator) -> str:
    """The element's accessibility tree, as a screen reader has it: read again when it came
    empty (the table page redraws the deal on every event: the node read was replaced)."""
    spoken = ""
    for _ in range(20):
        spoken = spoken or locator.aria_snapshot()
    return spoken
