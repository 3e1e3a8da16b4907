"""``/docs`` (Swagger UI) and ``/redoc`` without a CDN: their JavaScript and CSS are served
from the installed package ``fastapi-offline`` (pinned in pyproject.toml: the Swagger UI
distribution's bundle and stylesheet, ReDoc's standalone bundle and a favicon), under
``/docs-assets/``, so the pages work on a machine without internet access.

The pages are FastAPI's own (``get_swagger_ui_html``, ``get_redoc_html``) with local URLs:
no Google Fonts for ReDoc, and Swagger UI's online validator off (``validatorUrl: null``;
it would send the schema's URL to another site).
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/docs-assets"
ASSETS_DIR = Path(fastapi_offline.__file__).parent / "static"


def install(api: FastAPI) -> None:
    """Serve ``/docs``, ``/redoc`` and their assets; ``api`` is made with ``docs_url=None``
    and ``redoc_url=None`` (FastAPI's own pages load everything from a CDN)."""
    api.mount(ASSETS_URL, StaticFiles(directory=ASSETS_DIR), name="docs-assets")
    openapi_url = api.openapi_url or "/openapi.json"
    parameters = {**(api.swagger_ui_parameters or {}), "validatorUrl": None}

    @api.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=api.title + " - Swagger UI",
            swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            swagger_ui_parameters=parameters,
        )

    @api.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(
            openapi_url=root + openapi_url,
            title=api.title + " - ReDoc",
            redoc_js_url=f"{root}{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )
