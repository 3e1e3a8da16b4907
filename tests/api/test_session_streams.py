"""A live stream signed in by a session cookie ends with its session (docs/browsers.md,
"Signing in and out"), through real uvicorn processes on SQLite and on PostgreSQL.

A browser that signs out (``DELETE /sessions``) had its open deal stream go on: the player's
cards dealt after the sign-out still reached whoever sat at that browser, and a session
signed out elsewhere (or expired) kept its streams on every other process until the deal's
end. Now a stream signed in by a session closes before it sends anything more once the
session is closed by its own process, and within ``SESSION_CHECK_SECONDS`` once it is closed
by another one; a stream opened with the bearer token is not concerned.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from app.routes.stream_loop import SESSION_CHECK_SECONDS
from app.sessions import COOKIE, CSRF_HEADER
from domain import commands as c
from tests.support.http import Game, open_table

STORES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
#: How long a stream that should have ended may stay silent before it is taken as still open.
STILL_OPEN_SECONDS = 8.0


@pytest.mark.parametrize("store", STORES)
def test_signing_out_ends_the_sessions_open_streams_before_its_next_card(
    store: str, request: pytest.FixtureRequest, uvicorn_server: Callable[..., Any]
) -> None:
    url = request.getfixturevalue("migrated_postgres_url") if store == "postgres" else None
    first = uvicorn_server(database_url=url)
    second = uvicorn_server(database_url=url, data_dir=first.settings.data_dir)
    with httpx.Client(base_url=first.url, timeout=30) as http:
        game = open_table(http, ("ann", "bob"))
        asyncio.run(_signed_out_streams(game, first.url, second.url))


async def _signed_out_streams(game: Game, here: str, elsewhere: str) -> None:
    ann = game.headers["ann"]
    stream = f"/deals/{game.deal_id}/stream"
    async with (
        httpx.AsyncClient(base_url=here, timeout=30) as on_first,
        httpx.AsyncClient(base_url=elsewhere, timeout=30) as on_second,
    ):

        async def session() -> dict[str, str]:
            answer = await on_first.post("/sessions", headers=ann)
            assert answer.status_code == 201, answer.text
            return {"Cookie": f"{COOKIE}={answer.cookies[COOKIE]}"}

        async def sign_out(cookie: dict[str, str]) -> None:
            answer = await on_first.delete("/sessions", headers={**cookie, CSRF_HEADER: "1"})
            assert answer.status_code == 204

        readers = {}

        async def open_stream(name: str, http: httpx.AsyncClient, headers: dict[str, str]) -> None:
            opening = http.stream("GET", stream, headers=headers)
            response = await opening.__aenter__()
            assert response.status_code == 200, name
            readers[name] = (opening, response.aiter_text())
            assert (await anext(readers[name][1])).startswith("retry:")

        # ann's streams: signed in by a session signed out on another process (read from the
        # store in time), by her bearer token (which signing out leaves be), and by a session
        # signed out on the same process (known at once: the cut follows right away)
        other = await session()
        await open_stream("other process", on_second, other)
        await open_stream("bearer token", on_second, ann)
        await sign_out(other)
        await asyncio.sleep(SESSION_CHECK_SECONDS + 1)
        same = await session()
        await open_stream("same process", on_first, same)
        await sign_out(same)
        cut = next(
            answer
            for name in game.names
            if (answer := game.send(name, c.Cut(20))).status_code == 200
        )
        assert cut.status_code == 200

        received = {
            name: await _read(reader, until='"cards":[' if name == "bearer token" else None)
            for name, (_, reader) in readers.items()
        }
        for name in ("same process", "other process"):
            text, ended = received[name]
            assert ended, f"the stream of the signed-out session ({name}) is still open"
            assert '"cards"' not in text, f"{name}: a card after the sign-out: {text}"
        text, ended = received["bearer token"]
        assert '"kind":"CardsDealt"' in text and '"cards":[' in text  # her hand, by token
        for opening, _reader in readers.values():
            await opening.__aexit__(None, None, None)


async def _read(reader: Any, until: str | None = None) -> tuple[str, bool]:
    """What a stream sends until it closes (True), stays silent ``STILL_OPEN_SECONDS`` or
    has sent ``until`` (False)."""
    text = ""
    while until is None or until not in text:
        try:
            chunk = await asyncio.wait_for(anext(reader), STILL_OPEN_SECONDS)
        except StopAsyncIteration:
            return text, True
        except TimeoutError:
            return text, False
        text += chunk
    return text, False
