"""Browser sessions through a real uvicorn server (R-CMD-2, docs/browsers.md).

A web page signs its player in once with the bearer token (``POST /sessions``) and then acts
with the HttpOnly cookie alone, as a browser does: its command, his private view and his
private live stream, with no ``Authorization`` header. A cross-site form cannot act with the
cookie (no ``X-Canasta-CSRF`` header: 403 ``csrf_header_required``, nothing changes), bearer
requests are unaffected, and signing out ends the session for every server process. The
cookie's attributes, HTTPS behind a proxy, and CORS (off by default, on for a configured
origin) are checked on the wire.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode
from uuid import UUID

import httpx
import pytest

from app.sessions import COOKIE, CSRF_CODE, CSRF_HEADER
from projections.visibility import Viewer, event_view
from tests.api.test_stream import StreamReader, jsonable
from tests.e2e.client import Game
from tests.e2e.conftest import Backend, started_backend
from tests.e2e.server import Server

#: A site whose pages may call the API (CANASTA_CORS_ORIGINS), and one that may not.
TABLE_SITE = "https://table.example"
OTHER_SITE = "https://evil.example"
CSRF = {CSRF_HEADER: "1"}


class Browser:
    """A browser's view of the API: a cookie jar and no ``Authorization`` header. Every
    request opens its own connection, so that with several workers they are spread."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(
            base_url=url,
            timeout=30,
            headers={"Connection": "close"},
            limits=httpx.Limits(max_keepalive_connections=0),
        )

    def close(self) -> None:
        self.http.close()

    def sign_in(self, token: str) -> httpx.Response:
        response = self.http.post("/sessions", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 201, response.text
        return response

    @property
    def session(self) -> str | None:
        return self.http.cookies.get(COOKIE)


@pytest.fixture
def browser(backend: Backend) -> Iterator[Browser]:
    browser = Browser(backend.server.url)
    yield browser
    browser.close()


def set_cookie(response: httpx.Response) -> dict[str, str | None]:
    """The ``Set-Cookie`` header's attributes (lower-cased names; None for a flag)."""
    (header,) = response.headers.get_list("set-cookie")
    first, *attributes = (part.strip() for part in header.split(";"))
    name, _, value = first.partition("=")
    parsed: dict[str, str | None] = {"name": name, "value": value}
    for attribute in attributes:
        key, sep, val = attribute.partition("=")
        parsed[key.lower()] = val if sep else None
    return parsed


def stored_steps(backend: Backend, deal: str) -> int:
    return len(list(backend.shadow().events.get(UUID(deal))))


def test_a_browser_plays_and_reads_as_its_player_with_the_cookie_alone_r_cmd_2(
    backend: Backend, browser: Browser
) -> None:
    game = Game(backend.api(), backend.shadow(), prefix="web")
    game.set_up()
    deal = game.start()
    chosen = game.next_request(deal)
    assert chosen is not None
    player, request = chosen
    seat = game.seats.index(player)

    answer = browser.sign_in(player.token)
    assert answer.json()["name"] == player.name
    key = browser.session
    assert key and key != player.token, "the cookie holds a session key, not the token"

    # Reads as the player, no Authorization header: who he is, his own hand.
    assert browser.http.get("/me").json()["name"] == player.name
    view = browser.http.get(f"/deals/{deal}").json()
    assert view["hand"] == [], "his hand (nothing dealt before the cut)"
    assert game.api.deal(deal)["hand"] is None, "an anonymous spectator has none"

    # A cross-site form posting the command with the cookie: refused, nothing changes.
    url = f"/deals/{deal}/commands"
    before = stored_steps(backend, deal)
    forms = [
        ("application/x-www-form-urlencoded", urlencode({"command": json.dumps(request)})),
        ("text/plain", json.dumps(request)),  # a form's text/plain body that is JSON
    ]
    for content_type, body in forms:
        forged = browser.http.post(
            url, content=body, headers={"Origin": OTHER_SITE, "Content-Type": content_type}
        )
        assert forged.status_code == 403, forged.text
        assert forged.json()["error"]["code"] == CSRF_CODE
    forged = browser.http.post(url, json=request, headers={"Origin": OTHER_SITE})
    assert forged.status_code == 403 and forged.json()["error"]["code"] == CSRF_CODE
    assert stored_steps(backend, deal) == before, "a refused request records nothing"

    # The page's own request, with the header: accepted, under the same seq (none was used).
    sent = browser.http.post(url, json=request, headers=CSRF)
    assert sent.status_code == 200, sent.text
    assert sent.json()["replayed"] is False and sent.json()["step"] > request["expect"]["step"]

    # His private stream with the cookie alone: the cards dealt to him, as he may see them.
    stored = list(backend.shadow().events.get(UUID(deal)))
    state = backend.shadow().get_deal(UUID(deal)).state
    mine = [v for e in stored if (v := event_view(e, Viewer.player(seat), state)) is not None]
    stream = StreamReader(
        f"{backend.server.url}/deals/{deal}/stream",
        headers={"Cookie": f"{COOKIE}={key}"},
        stop_after=len(mine),
    )
    stream.start().wait()
    assert stream.status == 200
    assert stream.data == jsonable(mine)
    dealt = [card for m in stream.data if m["kind"] == "CardsDealt" for card in m["cards"]]
    assert dealt, "his own cards, streamed to him"
    hand = browser.http.get(f"/deals/{deal}").json()["hand"]
    assert hand and hand == sorted(state.hands[seat]), "his hand, read with the cookie"

    # A bearer request is unaffected: no CSRF header needed, even with a cookie present.
    chosen = game.next_request(deal)
    assert chosen is not None
    other, request = chosen
    bearer = browser.http.post(
        url, json=request, headers={"Authorization": f"Bearer {other.token}"}
    )
    assert bearer.status_code == 200, bearer.text

    # Signing out: refused without the header (a cross-site form cannot sign him out) ...
    refused = browser.http.delete("/sessions", headers={"Origin": OTHER_SITE})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == CSRF_CODE
    assert browser.http.get("/me").status_code == 200
    # ... then done: the cookie is cleared and the session is over in every process.
    out = browser.http.delete("/sessions", headers=CSRF)
    assert out.status_code == 204
    cleared = set_cookie(out)
    assert cleared["value"] == "" and cleared["max-age"] == "0"
    assert browser.session is None
    assert browser.http.get("/me").status_code == 401
    for _ in range(4):  # the old cookie, replayed, on any worker
        gone = browser.http.get("/me", headers={"Cookie": f"{COOKIE}={key}"})
        assert gone.status_code == 401 and gone.json()["error"]["code"] == "R-CMD-2"
    stream_after = httpx.get(
        f"{backend.server.url}/deals/{deal}/stream", headers={"Cookie": f"{COOKIE}={key}"}
    )
    assert stream_after.status_code == 401


def test_the_session_cookie_is_httponly_samesite_strict_and_secure_under_https(
    backend: Backend, browser: Browser
) -> None:
    token = backend.api().register("cookie").token
    plain = set_cookie(browser.sign_in(token))
    assert plain["name"] == COOKIE and plain["value"] and plain["value"] != token
    assert "httponly" in plain and plain["samesite"] == "Strict" and plain["path"] == "/"
    assert plain["max-age"] == str(7 * 24 * 3600)
    assert "secure" not in plain, "not Secure over plain HTTP (the browser would drop it)"
    # Behind a TLS proxy on this machine (uvicorn trusts X-Forwarded-Proto from 127.0.0.1).
    proxied = httpx.post(
        f"{backend.server.url}/sessions",
        headers={"Authorization": f"Bearer {token}", "X-Forwarded-Proto": "https"},
    )
    assert proxied.status_code == 201
    secure = set_cookie(proxied)
    assert "secure" in secure and "httponly" in secure and secure["samesite"] == "Strict"


def test_a_forwarded_scheme_from_an_untrusted_address_is_not_believed(tmp_path: Path) -> None:
    with Server(tmp_path, extra_env={"FORWARDED_ALLOW_IPS": "192.0.2.1"}) as server:
        token = httpx.post(f"{server.url}/players", json={"name": "ann"}).json()["token"]
        answer = httpx.post(
            f"{server.url}/sessions",
            headers={"Authorization": f"Bearer {token}", "X-Forwarded-Proto": "https"},
        )
        assert answer.status_code == 201
        assert "secure" not in set_cookie(answer)


def preflight(url: str, origin: str) -> httpx.Response:
    return httpx.options(
        f"{url}/tables",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": f"content-type, {CSRF_HEADER.lower()}",
        },
    )


def test_cors_is_off_by_default(backend: Backend) -> None:
    answer = preflight(backend.server.url, TABLE_SITE)
    assert "access-control-allow-origin" not in answer.headers
    plain = httpx.get(f"{backend.server.url}/tables", headers={"Origin": TABLE_SITE})
    assert plain.status_code == 200 and "access-control-allow-origin" not in plain.headers


@pytest.fixture(params=["sqlite"])
def cors_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    yield from started_backend(request, tmp_path, {"CANASTA_CORS_ORIGINS": TABLE_SITE})


def test_cors_lets_a_configured_origin_call_with_credentials_and_no_other(
    cors_backend: Backend,
) -> None:
    url = cors_backend.server.url
    answer = preflight(url, TABLE_SITE)
    assert answer.status_code == 200, answer.text
    assert answer.headers["access-control-allow-origin"] == TABLE_SITE
    assert answer.headers["access-control-allow-credentials"] == "true"
    allowed = answer.headers["access-control-allow-headers"].lower()
    assert CSRF_HEADER.lower() in allowed and "content-type" in allowed
    assert "POST" in answer.headers["access-control-allow-methods"]

    other = preflight(url, OTHER_SITE)
    assert other.status_code == 400
    assert "access-control-allow-origin" not in other.headers

    # The answers themselves, the command lane's included, carry the header for that origin.
    game = Game(cors_backend.api(), cors_backend.shadow(), prefix="cors")
    game.set_up()
    deal = game.start()
    chosen = game.next_request(deal)
    assert chosen is not None
    player, request = chosen
    sent = httpx.post(
        f"{url}/deals/{deal}/commands",
        json=request,
        headers={"Origin": TABLE_SITE, "Authorization": f"Bearer {player.token}"},
    )
    assert sent.status_code == 200, sent.text
    assert sent.headers["access-control-allow-origin"] == TABLE_SITE
    assert sent.headers["access-control-allow-credentials"] == "true"
    elsewhere = httpx.get(f"{url}/deals/{deal}", headers={"Origin": OTHER_SITE})
    assert elsewhere.status_code == 200
    assert "access-control-allow-origin" not in elsewhere.headers
