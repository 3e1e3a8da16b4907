"""The security headers of every answer (docs/operations.md, "Security headers";
``app.security_headers``): the pages' strict policy, the API's, the docs pages' own with a
nonce, ``nosniff`` and ``no-referrer`` everywhere, and ``Cache-Control: no-store`` on the
answers that hold a hand, a token or an invitation code, so that no cache keeps them."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.security_headers import API_POLICY, PAGE_POLICY
from domain import commands as c
from tests.support.http import Game

HTML = {"Accept": "text/html,application/xhtml+xml"}
JSON = {"Accept": "application/json"}


def common(answer: Any) -> None:
    """What every answer says."""
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert answer.headers["Referrer-Policy"] == "no-referrer"
    assert answer.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in answer.headers["Content-Security-Policy"]
    # once each: a header said twice would be two policies, both enforced
    for name in ("content-security-policy", "cache-control", "x-content-type-options"):
        assert len(answer.headers.get_list(name)) <= 1, (name, answer.headers)


@pytest.mark.parametrize("path", ["/", "/tables/nope", "/deals/nope/replay", "/audit/deals/x"])
def test_every_page_has_the_strict_policy(client: TestClient, path: str) -> None:
    page = client.get(path, headers=HTML)
    assert page.status_code == 200
    common(page)
    policy = page.headers["Content-Security-Policy"]
    assert policy == PAGE_POLICY
    for directive in (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
    ):
        assert directive in policy
    assert "unsafe" not in policy
    assert page.headers["Cross-Origin-Opener-Policy"] == "same-origin"
    assert "camera=()" in page.headers["Permissions-Policy"]
    assert page.headers["Cache-Control"] == "no-cache"  # nothing private: revalidated


def test_the_pages_have_no_inline_script_or_style(client: TestClient) -> None:
    """What the strict policy would block: a script or style written in a page, an event
    handler attribute, a style attribute."""
    for path in ("/", "/tables/x", "/deals/x/replay", "/audit/deals/x"):
        text = client.get(path, headers=HTML).text
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text), path
        assert "<style" not in text, path
        assert not re.search(r"\son[a-z]+=", text), path
        assert not re.search(r"\sstyle=", text), path


def test_api_answers_are_never_kept_by_a_cache(
    client: TestClient, open_game: Callable[..., Game]
) -> None:
    """A player's view shows his hand, his move menu too; the answer to POST /players holds
    his token and the one to POST /tables a private table's code. Each says no-store, as
    do the errors, and none can be run as a script or framed."""
    created = client.post("/players", json={"name": "zed"})
    assert created.headers["Cache-Control"] == "no-store"
    common(created)
    game = open_game(client, names=["ann", "bob"])
    ann = game.host
    private = client.post("/tables", json={"entry": "classic", "private": True}, headers=ann)
    assert "invite" in private.json()
    for answer in (
        private,
        client.get(f"/deals/{game.deal_id}", headers={**ann, **JSON}),
        client.get(f"/deals/{game.deal_id}/moves", headers=ann),
        client.get(f"/tables/{game.table}", headers={**ann, **JSON}),
        client.get("/me", headers=ann),
        client.get("/tables/not-an-id", headers=JSON),  # 422
        client.get("/no/such/thing"),  # 404
    ):
        common(answer)
        assert answer.headers["Cache-Control"] == "no-store", answer.request.url
        assert answer.headers["Content-Security-Policy"] == API_POLICY


def test_a_command_answer_has_the_headers(
    client: TestClient, open_game: Callable[..., Game]
) -> None:
    """The command lane answers below the routes, the route its refusals: both are secured,
    and after the cut the player's view holds his hand, with no-store."""
    game = open_game(client, names=["ann", "bob"])
    cutter = game.names[client.get(f"/deals/{game.deal_id}", headers=game.host).json()["cutter"]]
    accepted = game.send(cutter, c.Cut(20))
    assert accepted.status_code == 200, accepted.text
    refused = game.send(cutter, c.Cut(20))
    assert refused.status_code >= 400
    for answer in (accepted, refused):
        common(answer)
        assert answer.headers["Cache-Control"] == "no-store"
    view = client.get(f"/deals/{game.deal_id}", headers={**game.headers[cutter], **JSON})
    assert view.json()["hand"], "the view holds the hand"
    assert view.headers["Cache-Control"] == "no-store"


def test_static_files_keep_their_own_caching(client: TestClient) -> None:
    script = client.get("/web/common.js")
    assert script.status_code == 200
    common(script)
    assert "Cache-Control" not in script.headers  # validated by ETag / Last-Modified
    assert script.headers["ETag"]


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_the_docs_pages_have_their_own_policy(client: TestClient, path: str) -> None:
    """Swagger UI's page starts with a script written in it: the policy allows it by a nonce
    of this answer only (a new one each time), and nothing from another origin."""
    first, second = client.get(path), client.get(path)
    common(first)
    policy = first.headers["Content-Security-Policy"]
    assert policy != second.headers["Content-Security-Policy"] or path == "/redoc"
    nonce = re.search(r"'nonce-([^']+)'", policy)
    assert nonce is not None
    inline = re.findall(r"<script(?![^>]*\bsrc=)([^>]*)>", first.text)
    assert all(f'nonce="{nonce.group(1)}"' in attributes for attributes in inline)
    if path == "/docs":
        assert inline, "Swagger UI's start-up script"
    assert "object-src 'none'" in policy and "base-uri 'none'" in policy
    assert "http" not in policy  # no other origin
    assert first.headers["Cache-Control"] == "no-store"


def test_redoc_s_bundle_names_no_other_host(client: TestClient) -> None:
    """ReDoc's bundle drew Redocly's logo from its CDN: every reader of /redoc asked another
    host for it (blocked now by the policy, which the browser then reported as a violation).
    The bundle is served without that address, and revalidated by its ETag."""
    bundle = client.get("/docs-assets/redoc.standalone.js")
    assert bundle.status_code == 200
    assert bundle.headers["Content-Type"].startswith("text/javascript")
    assert "cdn.redoc.ly" not in bundle.text
    assert "Redoc" in bundle.text and len(bundle.content) > 500_000
    again = client.get(
        "/docs-assets/redoc.standalone.js", headers={"If-None-Match": bundle.headers["ETag"]}
    )
    assert again.status_code == 304 and again.content == b""
    assert "/docs-assets/redoc.standalone.js" in client.get("/redoc").text
