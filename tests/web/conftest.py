"""Browser tests: Playwright drives Debian's Chromium against a real server.

The server is ``uvicorn app.main:app`` on the embedded SQLite store, as ``make run`` starts it
(``tests/e2e``'s helpers). Playwright's own browsers are not downloaded: the installed
``chromium`` is launched by path (``CANASTA_CHROMIUM``, default ``/usr/bin/chromium``;
``make test`` installs it with apt-get when missing, scripts/chromium.sh). A missing browser
fails the tests: they are never skipped.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Locator,
    Page,
    ViewportSize,
    expect,
    sync_playwright,
)
from playwright.sync_api import Error as PlaywrightError

from tests.e2e.conftest import Backend, make_backend, running
from tests.e2e.server import REPO

CHROMIUM = Path(os.environ.get("CANASTA_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: Screenshots of the pages (gitignored), to look at after a run.
SCREENSHOTS = REPO / ".screenshots"
DESKTOP: ViewportSize = {"width": 1280, "height": 900}
PHONE: ViewportSize = {"width": 375, "height": 812}
#: Phones as a player holds them (tests/web/test_phone.py): upright, a small one, and on its side;
#: their contexts are made with ``TOUCH`` (a mobile viewport with a touch screen: ``tap()``).
PHONES: dict[str, ViewportSize] = {
    "upright": {"width": 390, "height": 844},
    "small": {"width": 360, "height": 640},
    "landscape": {"width": 844, "height": 390},
}
TOUCH = {"is_mobile": True, "has_touch": True}
#: How long an action or an ``expect`` waits for the page. Playwright's own 5 s for ``expect``
#: was too short on a loaded CI machine: a disk flush stalling SQLite's commit once kept a
#: spectator's view from arriving within it, though it came right after.
PAGE_WAIT_MS = 15_000
expect.set_options(timeout=PAGE_WAIT_MS)


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """One server per test module (SQLite, one worker); its log must stay clean."""
    yield from running(make_backend("sqlite", tmp_path_factory.mktemp("web")))


def stacked_decks_server(
    tmp_path_factory: pytest.TempPathFactory, name: str, **env: str
) -> Iterator[Backend]:
    """For a module's own ``web_server`` fixture (``yield from``): a server set up for tests,
    which accepts stacked decks, fixed dealers and earlier scores at the start
    (``CANASTA_ALLOW_STACKED_DECKS``, R-DEAL-3), in a new directory named after ``name``;
    ``env`` adds settings (``CANASTA_AUDITORS=...``). SQLite, one worker, its log must stay
    clean, as ``web_server``'s."""
    extra = {"CANASTA_ALLOW_STACKED_DECKS": "true", **env}
    yield from running(make_backend("sqlite", tmp_path_factory.mktemp(name), extra_env=extra))


@pytest.fixture
def http(web_server: Backend) -> Iterator[httpx.Client]:
    """A plain HTTP client of the module's server (set-up and moves beside the browser)."""
    with httpx.Client(base_url=web_server.server.url, timeout=10) as client:
        yield client


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless; a missing one fails with how to install it."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"no Chromium at {CHROMIUM}: the browser tests need it. `make test` installs it "
            "(scripts/chromium.sh), or: apt-get install chromium (or set CANASTA_CHROMIUM)",
            pytrace=False,
        )
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


#: Opens a new browser context (its own cookies: one person) with the given viewport.
NewContext = Callable[..., BrowserContext]


@pytest.fixture
def new_context(browser: Browser, web_server: Backend) -> Iterator[NewContext]:
    """Browser contexts on the server's origin, closed after the test."""
    opened: list[BrowserContext] = []

    def new(
        viewport: ViewportSize = DESKTOP, locale: str = "en-GB", **options: Any
    ) -> BrowserContext:
        context = browser.new_context(
            base_url=web_server.server.url, viewport=viewport, locale=locale, **options
        )
        context.set_default_timeout(PAGE_WAIT_MS)
        opened.append(context)
        return context

    yield new
    for context in opened:
        context.close()


def screenshot(page: Page, name: str, *, full_page: bool = True) -> Path:
    """Saves the whole page (or only what the window shows) as ``.screenshots/<name>.png``."""
    SCREENSHOTS.mkdir(exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


#: In the page: is the element (still in the page: a redraw may have replaced it) where
#: ``scrollIntoView`` with this ``block`` puts it (one taller than the screen: filling it)? A
#: node taken out of the page measures 0 x 0 at the corner, which would pass for "scrolled".
SCROLLED = """([node, block]) => {
  if (!node.isConnected) return false;
  const box = node.getBoundingClientRect();
  if (block === "start") return Math.abs(box.top) < 2;
  // The room the page keeps below what it scrolls into view (a phone's move panel sticks
  // there: app/web/table_layout.js): an element already on screen but under the panel is not
  // scrolled to yet, only the page has not scrolled (it does so a moment after the call).
  const padding = parseFloat(getComputedStyle(document.documentElement).scrollPaddingBottom) || 0;
  const bottom = innerHeight - padding;
  if (box.height > bottom) return box.top <= 0.5 && box.bottom >= bottom - 0.5;
  return box.top >= -0.5 && box.bottom <= bottom + 0.5;
}"""


def scroll_to(locator: Locator, block: str = "nearest") -> None:
    """Scrolls the element into view, as a finger would, and waits until it is there (a
    mobile page scrolls after the call returns, and drops the scroll if a redraw replaced
    the element meanwhile: then again). Not Playwright's ``scroll_into_view_if_needed``: the
    pages redraw under load (a stream event, the lobby's poll), and it then fails with
    'Element is not attached to the DOM'."""
    last: PlaywrightError | None = None
    for _ in range(5):
        try:
            locator.evaluate(f"node => node.scrollIntoView({{block: '{block}'}})")
            locator.page.wait_for_function(
                SCROLLED, arg=[locator.element_handle(), block], timeout=2000
            )
            return
        except PlaywrightError as error:  # a timeout too: not there yet
            last = error  # or replaced by a redraw meanwhile: look it up again
    pytest.fail(f"{locator} could not be scrolled into view ({block}): {last}")
