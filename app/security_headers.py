"""The security headers of every answer (docs/operations.md, "Security headers"), in one place.

``SecurityHeaders`` is a pure ASGI middleware outside everything but the start-up refusals, so
it sees every answer: the web pages (``app.web_ui``), the API's, the refusals of the rate
limits, of the body limit and of CORS, the command lane's and the live streams'. At the status
line it adds, unless the answer already says them:

- on every answer: ``X-Content-Type-Options: nosniff`` (a JSON answer is never run as a
  script or shown as HTML), ``Referrer-Policy: no-referrer`` (no table id, deal id or
  invitation code in an address leaves in a ``Referer``: neither to another site nor into a
  proxy's access log), ``X-Frame-Options: DENY`` and a ``Content-Security-Policy`` with
  ``frame-ancestors 'none'`` (no site can frame a page and have a player click "Leave my
  seat" or a move through it);
- on an HTML answer, ``PAGE_POLICY``: scripts, styles and everything else from this origin
  only (and ``data:`` images: the pages' empty icon), no inline script or style, no plugin,
  no ``<base>``, forms posted to this origin;
  a ``Permissions-Policy`` that turns off the devices and sensors no page uses, and
  ``Cross-Origin-Opener-Policy: same-origin``. ``/docs`` and ``/redoc`` send their own policy
  (``app.docs_ui``), which this keeps;
- on any other answer, ``API_POLICY`` (``default-src 'none'``: an answer opened as a
  document runs and loads nothing);
- ``Cache-Control: no-store`` on every answer that does not set its own, except the static
  files (``/web/``, ``/docs-assets/``): a player's view holds his hand, an answer to
  ``POST /players`` a token, one to ``POST /tables`` an invitation code; no cache, shared or
  the browser's, may keep them.

``Strict-Transport-Security`` is the HTTPS proxy's (deploy/nginx/canasta.conf): the server
does not know whether its visitors reach it over HTTPS.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

Headers = list[tuple[bytes, bytes]]

#: The web pages: everything from this origin, nothing inline.
PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; manifest-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
#: Anything but a page: JSON, the live streams, text.
API_POLICY = "default-src 'none'; frame-ancestors 'none'"
#: Devices and sensors no page uses (each a feature Chromium and Firefox know: an unknown
#: one is an error in the browser's console).
PERMISSIONS = (
    "accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), "
    "microphone=(), payment=(), usb=()"
)
#: Where static files are served: their own caching (ETag, Last-Modified) stands.
STATIC = ("/web/", "/docs-assets/")

_COMMON: Headers = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
_PAGE: Headers = [
    *_COMMON,
    (b"content-security-policy", PAGE_POLICY.encode()),
    (b"permissions-policy", PERMISSIONS.encode()),
    (b"cross-origin-opener-policy", b"same-origin"),
]
_OTHER: Headers = [*_COMMON, (b"content-security-policy", API_POLICY.encode())]
_NO_STORE = (b"cache-control", b"no-store")


#: What an answer gets, by whether it is HTML and whether it may be stored.
_ADD: dict[tuple[bool, bool], Headers] = {
    (html, static): [*(_PAGE if html else _OTHER), *([] if static else [_NO_STORE])]
    for html in (False, True)
    for static in (False, True)
}
_ADDED = frozenset(name for name, _ in [*_PAGE, _NO_STORE])


def secured(headers: Headers, *, static: bool) -> Headers:
    """``headers`` with the security headers each answer lacks: one pass over the answer's few
    headers and one new list (with the layer's call, about 4 microseconds an answer on the
    slow shared test machine, where a command costs about 1 ms: docs/performance.md)."""
    html = False
    own: set[bytes] = set()
    for name, value in headers:
        lower = name.lower()
        if lower == b"content-type":
            html = value.startswith(b"text/html")
        elif lower in _ADDED:
            own.add(lower)
    extra = _ADD[html, static]
    if own:
        extra = [header for header in extra if header[0] not in own]
    return [*headers, *extra]


class SecurityHeaders:
    """Adds the headers above to every HTTP answer (see the module's description)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope["path"].startswith(STATIC)

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message.get("headers", [])
                if not isinstance(headers, list):  # any iterable, in ASGI
                    headers = list(headers)
                message["headers"] = secured(headers, static=static)
            await send(message)

        await self.app(scope, receive, send_secured)
