"""``/docs`` (Swagger UI) and ``/redoc`` without a CDN: their JavaScript and CSS are served
from the installed package ``fastapi-offline`` (pinned in pyproject.toml: the Swagger UI
distribution's bundle and stylesheet, ReDoc's standalone bundle and a favicon), under
``/docs-assets/``, so the pages work on a machine without internet access.

The pages are FastAPI's own (``get_swagger_ui_html``, ``get_redoc_html``) with local URLs:
no Google Fonts for ReDoc, and Swagger UI's online validator off (``validatorUrl: null``;
it would send the schema's URL to another site).

Each page sends its own ``Content-Security-Policy`` (``app.security_headers`` keeps it): Swagger
UI starts from a script written in the page, allowed by a nonce of this answer only; ReDoc and
Swagger UI write their styles into the page (``style-src 'unsafe-inline'``), draw icons from
``data:`` images and ReDoc searches in a worker made from a ``blob:``. Nothing from another
origin, no framing, as for the web pages.

ReDoc's bundle draws Redocly's logo from ``https://cdn.redoc.ly`` at the foot of its menu (a
request to another host from every visitor, with no option to turn it off); the bundle is
served with that address emptied (``REDOC_URL``), and ReDoc then leaves the logo out, as it
does when the image fails to load.
"""

from __future__ import annotations

import secrets
from functools import cache
from hashlib import sha256
from pathlib import Path

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

ASSETS_URL = "/docs-assets"
ASSETS_DIR = Path(fastapi_offline.__file__).parent / "static"
#: ReDoc's bundle without the other host's logo (see above).
REDOC_URL = f"{ASSETS_URL}/redoc.standalone.js"
REDOC_LOGO = b'"https://cdn.redoc.ly/redoc/logo-mini.svg"'
#: The pages' policy; {nonce} is the answer's own.
DOCS_POLICY = (
    "default-src 'none'; script-src 'self' 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src 'self' blob:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def with_policy(page: HTMLResponse) -> HTMLResponse:
    """``page`` with its policy: its inline scripts (``<script>`` without ``src``) carry a
    new nonce that the policy allows."""
    nonce = secrets.token_urlsafe(16)
    body = bytes(page.body).replace(b"<script>", f'<script nonce="{nonce}">'.encode())
    return HTMLResponse(
        body,
        status_code=page.status_code,
        headers={"Content-Security-Policy": DOCS_POLICY.format(nonce=nonce)},
    )


@cache
def redoc_bundle() -> tuple[bytes, str]:
    """ReDoc's bundle without Redocly's logo, and its ETag."""
    bundle = (ASSETS_DIR / "redoc.standalone.js").read_bytes().replace(REDOC_LOGO, b'""')
    return bundle, f'"{sha256(bundle).hexdigest()[:32]}"'


def install(api: FastAPI) -> None:
    """Serve ``/docs``, ``/redoc`` and their assets; ``api`` is made with ``docs_url=None``
    and ``redoc_url=None`` (FastAPI's own pages load everything from a CDN)."""

    @api.get(REDOC_URL, include_in_schema=False)  # before the mount, which would answer it
    async def redoc_js(request: Request) -> Response:
        bundle, etag = redoc_bundle()
        headers = {"ETag": etag}
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers=headers)
        return Response(bundle, media_type="text/javascript; charset=utf-8", headers=headers)

    api.mount(ASSETS_URL, StaticFiles(directory=ASSETS_DIR), name="docs-assets")
    openapi_url = api.openapi_url or "/openapi.json"
    parameters = {**(api.swagger_ui_parameters or {}), "validatorUrl": None}

    @api.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=api.title + " - Swagger UI",
            swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            swagger_ui_parameters=parameters,
        )
        return with_policy(page)

    @api.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        page = get_redoc_html(
            openapi_url=root + openapi_url,
            title=api.title + " - ReDoc",
            redoc_js_url=root + REDOC_URL,
            redoc_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )
        return with_policy(page)
