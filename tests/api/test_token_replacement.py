"""Replacing a bearer token that leaked (docs/api.md, "Replacing a token"), through real
uvicorn processes sharing one store, on SQLite and on PostgreSQL.

A player who pasted a ``curl`` line with his ``Authorization: Bearer ...`` header into a forum
had no way back: a token never changed, and every server process remembered the tokens it had
seen. Now ``POST /me/token`` answers a new token and revokes the old one: refused (the same
401 as an unknown token) at once by the process that answered and within ``TOKEN_BOUND``
seconds by every other one, which learns of it through its follower of the store; live
streams opened with it end. The operator does the same with ``canasta revoke-token NAME``,
which prints the new token to hand over.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from app.sessions import COOKIE, CSRF_HEADER
from app.token_freshness import TOKEN_BOUND
from domain import commands as c
from tests.support.cli import run_cli
from tests.support.http import Game, open_table

STORES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
#: How long a stream that should have ended may stay silent before it is taken as still open.
STILL_OPEN_SECONDS = 8.0


@dataclass
class Servers:
    """Two server processes over one store, a client of each, and the environment of a CLI
    on that store."""

    here: httpx.Client
    elsewhere: httpx.Client
    urls: tuple[str, str]
    env: dict[str, str]


@pytest.fixture(params=STORES)
def servers(
    request: pytest.FixtureRequest, uvicorn_server: Callable[..., Any]
) -> Iterator[Servers]:
    postgres = request.param == "postgres"
    url = request.getfixturevalue("migrated_postgres_url") if postgres else None
    first = uvicorn_server(database_url=url)
    second = uvicorn_server(database_url=url, data_dir=first.settings.data_dir)
    env = {"DATABASE_URL": url} if url else {"CANASTA_DATA_DIR": str(first.settings.data_dir)}
    with (
        httpx.Client(base_url=first.url, timeout=30) as here,
        httpx.Client(base_url=second.url, timeout=30) as elsewhere,
    ):
        yield Servers(here, elsewhere, (first.url, second.url), env)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _session(http: httpx.Client, token: dict[str, str]) -> dict[str, str]:
    """The ``Cookie`` header of a new browser session opened with the token (the client
    does not keep the cookie)."""
    opened = http.post("/sessions", headers=token)
    assert opened.status_code == 201, opened.text
    http.cookies.clear()  # sent only where a test says so
    return {"Cookie": f"{COOKIE}={opened.cookies[COOKIE]}"}


def _me(http: httpx.Client, headers: dict[str, str]) -> httpx.Response:
    return http.get("/me", headers=headers)


def _refused_as_unknown(answer: httpx.Response, unknown: httpx.Response) -> None:
    """The old token's answer says no more than a made-up token's."""
    assert answer.status_code == 401, answer.text
    assert answer.json() == unknown.json()
    assert answer.headers.get("www-authenticate") == unknown.headers.get("www-authenticate")


def test_a_replaced_token_is_refused_by_every_process_and_its_streams_end(
    servers: Servers,
) -> None:
    here, elsewhere = servers.here, servers.elsewhere
    game = open_table(here, ("ann", "bob"))
    old = dict(game.headers["ann"])
    unknown = _me(here, _bearer("made-up-token"))
    # both processes have seen (and remember) the token
    assert _me(here, old).json()["name"] == "ann"
    assert _me(elsewhere, old).json()["name"] == "ann"
    answers = asyncio.run(_replace_with_streams_open(game, *servers.urls, old))
    replaced = answers["replaced"]
    assert replaced.status_code == 201, replaced.text
    assert replaced.headers["cache-control"] == "no-store"
    new = _bearer(replaced.json()["token"])
    assert replaced.json()["name"] == "ann" and new != old

    _refused_as_unknown(answers["at once, same process"], unknown)
    _refused_as_unknown(_me(elsewhere, old), unknown)  # within the bound
    _refused_as_unknown(_me(here, old), unknown)
    assert here.post("/me/token", headers=old).status_code == 401  # no second new token
    for http in (here, elsewhere):
        assert _me(http, new).json()["name"] == "ann"
    assert _me(here, game.headers["bob"]).json()["name"] == "bob"  # others unconcerned
    # the new token sees her hand on the other process, as the old one did
    view = elsewhere.get(f"/deals/{game.deal_id}", headers=new)
    assert view.status_code == 200 and view.json()["hand"], view.text


async def _replace_with_streams_open(
    game: Game, here: str, elsewhere: str, old: dict[str, str]
) -> dict[str, Any]:
    """Open ann's deal streams with her token on both processes, replace the token on the
    first, then deal her cards: neither stream may show them, both must end."""
    stream = f"/deals/{game.deal_id}/stream"
    answers: dict[str, Any] = {}
    async with (
        httpx.AsyncClient(base_url=here, timeout=30) as on_first,
        httpx.AsyncClient(base_url=elsewhere, timeout=30) as on_second,
    ):
        readers = {}
        for name, http in (("same process", on_first), ("other process", on_second)):
            opening = http.stream("GET", stream, headers=old)
            response = await opening.__aenter__()
            assert response.status_code == 200, name
            readers[name] = (opening, response.aiter_text())
            assert (await anext(readers[name][1])).startswith("retry:")
        answers["replaced"] = await on_first.post("/me/token", headers=old)
        answers["at once, same process"] = await on_first.get("/me", headers=old)
        game.headers["ann"] = _bearer(answers["replaced"].json()["token"])
        await asyncio.sleep(TOKEN_BOUND + 1)
        cut = next(
            answer
            for name in game.names
            if (answer := game.send(name, c.Cut(20))).status_code == 200
        )
        assert cut.status_code == 200
        for name, (opening, reader) in readers.items():
            text, ended = await _read(reader)
            assert ended, f"the stream of the replaced token ({name}) is still open"
            assert '"cards"' not in text, f"{name}: a card after the replacement: {text}"
            await opening.__aexit__(None, None, None)
    return answers


async def _read(reader: Any) -> tuple[str, bool]:
    """What a stream sends until it closes (True) or stays silent ``STILL_OPEN_SECONDS``."""
    text = ""
    while True:
        try:
            text += await asyncio.wait_for(anext(reader), STILL_OPEN_SECONDS)
        except StopAsyncIteration:
            return text, True
        except TimeoutError:
            return text, False


def test_the_operator_revokes_a_players_tokens_and_hands_over_the_new_one(
    servers: Servers,
) -> None:
    here, elsewhere, env = servers.here, servers.elsewhere, servers.env
    ann = _bearer(here.post("/players", json={"name": "ann"}).json()["token"])
    bob = _bearer(here.post("/players", json={"name": "bob"}).json()["token"])
    unknown = _me(here, _bearer("made-up-token"))
    # browsers signed in with the token (the player's, and the leak's holder's), on both
    sessions = [_session(http, ann) for http in (here, elsewhere)]
    for http in (here, elsewhere):
        assert _me(http, ann).status_code == 200
        for cookie in sessions:
            assert _me(http, cookie).status_code == 200

    nobody = run_cli("revoke-token", "nobody", env=env)
    assert nobody.returncode == 1 and "no account 'nobody'" in nobody.stderr
    assert nobody.stdout == ""

    done = run_cli("revoke-token", "ANN", env=env)  # the name in any case
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("revoked 1 token of ann "), done.stdout
    assert lines[1].startswith("closed 2 browser sessions of ann: "), done.stdout
    printed = _bearer(lines[-1])
    for http in (here, elsewhere):  # every session signed out at once, on every process
        for cookie in sessions:
            assert _me(http, cookie).status_code == 401
    time.sleep(TOKEN_BOUND + 1)
    for http in (here, elsewhere):
        _refused_as_unknown(_me(http, ann), unknown)
        assert _me(http, printed).json()["name"] == "ann"
        assert _me(http, bob).json()["name"] == "bob"

    # the player signs in again with the token handed over, and replaces it from there
    cookie = _session(elsewhere, printed)
    assert here.post("/me/token", headers=cookie).status_code == 403  # no CSRF header
    assert _me(elsewhere, printed).status_code == 200  # the refusal changed nothing
    mine = elsewhere.post("/me/token", headers={**cookie, CSRF_HEADER: "1"})
    assert mine.status_code == 201, mine.text
    assert _me(elsewhere, _bearer(mine.json()["token"])).json()["name"] == "ann"
    _refused_as_unknown(_me(elsewhere, printed), unknown)  # the process that answered
    assert _me(here, cookie).json()["name"] == "ann"  # the session that asked stays

    again = run_cli("revoke-token", "ann", env=env)
    assert again.returncode == 0 and again.stdout.startswith("revoked 1 token of ann ")
    assert "closed 1 browser session of ann: " in again.stdout
    assert _me(here, cookie).status_code == 401


def test_bad_requests_replace_nothing(uvicorn_server: Callable[..., Any]) -> None:
    server = uvicorn_server()
    with httpx.Client(base_url=server.url, timeout=30) as http:
        ann = _bearer(http.post("/players", json={"name": "ann"}).json()["token"])
        unknown = _me(http, _bearer("made-up-token"))
        for headers in ({}, _bearer("made-up-token"), {"Authorization": "Bearer " + "x" * 300}):
            answer = http.post("/me/token", headers=headers)
            assert answer.status_code == 401, (headers, answer.text)
            assert answer.json()["error"]["code"] == unknown.json()["error"]["code"]
        assert http.get("/me/token", headers=ann).status_code == 405
        assert _me(http, ann).json()["name"] == "ann"  # still her token


def test_an_idempotency_key_stays_the_accounts_across_a_replacement(
    uvicorn_server: Callable[..., Any],
) -> None:
    server = uvicorn_server()
    with httpx.Client(base_url=server.url, timeout=30) as http:
        ann = _bearer(http.post("/players", json={"name": "ann"}).json()["token"])
        key = {"Idempotency-Key": "ann-first-table-0001"}
        body = {"entry": "classic", "players": 2}
        made = http.post("/tables", json=body, headers={**ann, **key})
        assert made.status_code == 201, made.text
        new = _bearer(http.post("/me/token", headers=ann).json()["token"])
        # the old token cannot replay the answer; the new one, the same account, does
        assert http.post("/tables", json=body, headers={**ann, **key}).status_code == 401
        replay = http.post("/tables", json=body, headers={**new, **key})
        assert replay.status_code == 201 and replay.json() == made.json()
