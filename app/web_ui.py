"""The web pages (docs/web.md): static files under ``app/web/`` (HTML, plain JavaScript
modules, one stylesheet, a string catalogue per language), served as they are: no build step,
no request to another host. The pages use the public API only, signed in by a browser session
(docs/browsers.md).

``/`` is the lobby. A table, a deal, its replay and its audit have one address each, the same
as the API's (``/tables/{id}``, ``/deals/{id}``, ``/deals/{id}/replay``,
``/audit/deals/{id}``): a browser that asks for HTML (``Accept: text/html``, as it does when
it opens a link) gets the page, anything else the JSON as before. The page then asks the API
for the JSON with ``Accept: application/json``."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

WEB_URL = "/web"
WEB_DIR = Path(__file__).parent / "web"
#: Any one path segment: a mistyped id gets the page too, which shows the API's refusal
#: (422 malformed, 404) in words rather than leaving the browser on bare JSON.
_ID = r"[^/]+"
#: The pages a browser opens at an API address, by path.
PAGES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"^/tables/{_ID}$"), "table.html"),
    (re.compile(rf"^/deals/{_ID}$"), "table.html"),
    (re.compile(rf"^/deals/{_ID}/replay$"), "replay.html"),
    (re.compile(rf"^/audit/deals/{_ID}$"), "audit.html"),
)
_NO_CACHE = {"Cache-Control": "no-cache", "Vary": "Accept"}


def page_for(path: str) -> str | None:
    """The page's file for a path a browser may open, or None."""
    for pattern, page in PAGES:
        if pattern.match(path):
            return page
    return None


def wants_html(scope: Scope) -> bool:
    """Whether the request asks for HTML: a browser opening a link does; ``fetch`` (``*/*``),
    curl and the API clients do not."""
    for name, value in scope.get("headers", ()):
        if name == b"accept":
            return b"text/html" in value
    return False


class Pages:
    """Answers a browser's GET of a page address with the page; everything else goes on to the
    API, whose answers at these addresses then say ``Vary: Accept``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        page = page_for(scope["path"])
        if page is None:
            await self.app(scope, receive, send)
            return
        if wants_html(scope):
            response = FileResponse(WEB_DIR / page, headers=_NO_CACHE)
            await response(scope, receive, send)
            return

        async def vary(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"vary", b"Accept")]
            await send(message)

        await self.app(scope, receive, vary)


def install(api: FastAPI) -> None:
    """Serve the lobby at ``/``, the pages at their addresses, and the files under ``/web/``."""
    api.mount(WEB_URL, StaticFiles(directory=WEB_DIR), name="web")
    api.add_middleware(Pages)

    @api.get("/", include_in_schema=False)
    async def lobby_page() -> FileResponse:
        return FileResponse(WEB_DIR / "index.html", headers={"Cache-Control": "no-cache"})
