"""The web pages (docs/web.md): ``/`` is the lobby, a static page under ``app/web/`` (HTML,
one JavaScript module, one stylesheet, a string catalogue per language), served as it is: no
build step, no request to another host. The page uses the public API only, signed in by a
browser session (docs/browsers.md)."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

WEB_URL = "/web"
WEB_DIR = Path(__file__).parent / "web"


def install(api: FastAPI) -> None:
    """Serve the lobby at ``/`` and its files under ``/web/``."""
    api.mount(WEB_URL, StaticFiles(directory=WEB_DIR), name="web")

    @api.get("/", include_in_schema=False)
    async def lobby_page() -> FileResponse:
        return FileResponse(WEB_DIR / "index.html", headers={"Cache-Control": "no-cache"})
