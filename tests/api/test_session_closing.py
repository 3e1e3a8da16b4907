"""A leaked token must not leave its holder signed in for a week (docs/api.md, "Replacing a
token"; docs/browsers.md), through two real uvicorn processes sharing one store, on SQLite and
PostgreSQL.

The player's token leaked; whoever found it opened browser sessions with it (``POST
/sessions``: a cookie good for 7 days). Replacing the token (``POST /me/token``) revoked the
token but left those sessions signed in, playing his seats. Now the replacement closes every
session of the account but the one that asked: refused (401) at once on every process, and
their live streams end before they send anything recorded afterwards.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from app.sessions import COOKIE, CSRF_HEADER
from domain import commands as c
from tests.api.test_token_replacement import (
    STILL_OPEN_SECONDS,
    Servers,
    _bearer,
    _me,
    _read,
    _session,
    servers,
)
from tests.support.http import Game, open_table

__all__ = ["servers"]  # the fixture, shared with test_token_replacement

CSRF = {CSRF_HEADER: "1"}


def test_replacing_the_token_signs_out_every_other_browser_on_every_process(
    servers: Servers,
) -> None:
    here, elsewhere = servers.here, servers.elsewhere
    game = open_table(here, ("ann", "bob"))
    old = dict(game.headers["ann"])
    player = _session(here, old)  # the player's own browser
    leaks = {"here": _session(here, old), "elsewhere": _session(elsewhere, old)}
    bob = _session(elsewhere, game.headers["bob"])
    answers = asyncio.run(_replace_with_streams_open(game, servers, player, leaks))
    replaced = answers["replaced"]
    assert replaced.status_code == 201, replaced.text
    new = _bearer(replaced.json()["token"])
    for name, code in answers["at once"].items():  # no wait for any follower
        assert code == 401, name
    for http in (here, elsewhere):
        for leak in leaks.values():
            answer = http.post("/tables", json={"entry": "classic"}, headers={**leak, **CSRF})
            assert answer.status_code == 401, answer.text
            assert http.post("/sessions", headers=leak).status_code == 401
            assert http.post("/me/token", headers={**leak, **CSRF}).status_code == 401
        assert _me(http, player).json()["name"] == "ann"  # the browser that asked stays
        assert _me(http, new).json()["name"] == "ann"
        assert _me(http, bob).json()["name"] == "bob"  # other accounts unconcerned
    # the leaked cookie's page is told nobody is signed in, and its cookie cleared
    current = elsewhere.get("/sessions/current", headers=leaks["elsewhere"])
    assert current.json()["name"] is None
    assert f"{COOKIE}=;" in current.headers["set-cookie"]


async def _replace_with_streams_open(
    game: Game, servers: Servers, player: dict[str, str], leaks: dict[str, dict[str, str]]
) -> dict[str, Any]:
    """Ann's deal stream open with each leaked session (one on each process) and with her own
    browser's session; she replaces her token from her browser, then her cards are dealt at
    once: the leaked sessions' streams end without them, hers shows them."""
    stream = f"/deals/{game.deal_id}/stream"
    here, elsewhere = servers.urls
    answers: dict[str, Any] = {}
    async with (
        httpx.AsyncClient(base_url=here, timeout=30) as on_first,
        httpx.AsyncClient(base_url=elsewhere, timeout=30) as on_second,
    ):
        readers = {}
        opened = (
            ("leak here", on_first, leaks["here"]),
            ("leak elsewhere", on_second, leaks["elsewhere"]),
            ("player elsewhere", on_second, player),
        )
        for name, http, cookie in opened:
            opening = http.stream("GET", stream, headers=cookie)
            response = await opening.__aenter__()
            assert response.status_code == 200, name
            readers[name] = (opening, response.aiter_text())
            assert (await anext(readers[name][1])).startswith("retry:")
        answers["replaced"] = await on_first.post("/me/token", headers={**player, **CSRF})
        answers["at once"] = {
            f"{where} on {name}": (await http.get("/me", headers=leaks[where])).status_code
            for where in leaks
            for name, http in (("first", on_first), ("second", on_second))
        }
        game.headers["ann"] = _bearer(answers["replaced"].json()["token"])
        cut = next(
            answer
            for name in game.names
            if (answer := game.send(name, c.Cut(20))).status_code == 200
        )
        assert cut.status_code == 200
        for name in ("leak here", "leak elsewhere"):
            opening, reader = readers[name]
            text, ended = await _read(reader)
            assert ended, f"the stream of a closed session ({name}) is still open"
            assert '"cards"' not in text, f"{name}: a card after the replacement: {text}"
            await opening.__aexit__(None, None, None)
        opening, reader = readers["player elsewhere"]
        shown = ""
        while '"cards"' not in shown:
            shown += await asyncio.wait_for(anext(reader), STILL_OPEN_SECONDS)
        await opening.__aexit__(None, None, None)
    return answers


def test_refused_replacements_close_no_session(servers: Servers) -> None:
    here, elsewhere = servers.here, servers.elsewhere
    token = _bearer(here.post("/players", json={"name": "ann"}).json()["token"])
    sessions = [_session(here, token), _session(elsewhere, token)]
    gone = _session(here, token)
    assert elsewhere.delete("/sessions", headers={**gone, **CSRF}).status_code == 204
    made_up = {"Cookie": f"{COOKIE}=made-up-session-key-0123456789abcdef"}
    refused = [
        (sessions[0], 403),  # no CSRF header
        ({**made_up, **CSRF}, 401),  # an unknown session
        ({**_bearer("made-up-token"), **CSRF}, 401),  # an unknown token
        ({**gone, **CSRF}, 401),  # a session signed out
    ]
    for headers in refused:
        for http in (here, elsewhere):
            answer = http.post("/me/token", headers=headers[0])
            assert answer.status_code == headers[1], (headers, answer.text)
    for http in (here, elsewhere):
        for cookie in sessions:
            assert _me(http, cookie).json()["name"] == "ann"
        assert _me(http, token).json()["name"] == "ann"
    # signing out one browser closes that one only
    assert here.delete("/sessions", headers={**sessions[0], **CSRF}).status_code == 204
    assert _me(elsewhere, sessions[0]).status_code == 401
    assert _me(here, sessions[1]).json()["name"] == "ann"


def test_signing_out_everywhere_else_keeps_this_browser_and_the_token(servers: Servers) -> None:
    """``DELETE /sessions?others=true``: the player who thinks a cookie of his leaked (not his
    token) closes every other session, on every process at once, and stays signed in."""
    here, elsewhere = servers.here, servers.elsewhere
    token = _bearer(here.post("/players", json={"name": "ann"}).json()["token"])
    mine = _session(here, token)
    others = [_session(elsewhere, token), _session(here, token)]
    bob = _session(here, _bearer(here.post("/players", json={"name": "bob"}).json()["token"]))
    made_up = {"Cookie": f"{COOKIE}=made-up-session-key-0123456789abcdef"}
    refused = [
        (mine, 403),  # no CSRF header
        ({**made_up, **CSRF}, 401),  # an unknown session
        ({**token, **CSRF}, 401),  # no session cookie (a bearer token is not one)
    ]
    for headers, code in refused:
        answer = elsewhere.delete("/sessions?others=true", headers=headers)
        assert answer.status_code == code, (headers, answer.text)
    for cookie in (mine, *others):
        assert _me(here, cookie).json()["name"] == "ann"  # nothing was closed

    done = elsewhere.delete("/sessions?others=true", headers={**mine, **CSRF})
    assert done.status_code == 204, done.text
    assert "set-cookie" not in done.headers  # this browser's cookie stays
    for http in (here, elsewhere):
        for cookie in others:
            assert _me(http, cookie).status_code == 401
        assert _me(http, mine).json()["name"] == "ann"
        assert _me(http, token).json()["name"] == "ann"  # the token is not touched
        assert _me(http, bob).json()["name"] == "bob"
    # a closed session cannot do it in turn
    answer = here.delete("/sessions?others=true", headers={**others[0], **CSRF})
    assert answer.status_code == 401
    assert _me(here, mine).json()["name"] == "ann"
