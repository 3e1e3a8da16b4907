"""Per-client limits (``app/rate_limits.py``, docs/operations.md "Limits"), through a real
uvicorn: each test floods one limit from one client and shows the flooder gets 429 with a stable
code and ``Retry-After``, that what it was refused changed nothing, and that other clients (another
player's token, another address) are served normally during the flood.

Other addresses are made the way a reverse proxy on the same machine makes them: uvicorn believes
``X-Forwarded-For`` from 127.0.0.1 (its ``--forwarded-allow-ips`` default), and the limits count
the address uvicorn reports.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import httpx
from fastapi.testclient import TestClient

from app.main import create_app
from app.rate_limits import ProcessCounters, address_key
from app.settings import Settings
from domain import commands as c
from domain.refusals import render
from tests.support.http import Headers, open_table, register_player

LIMITS_ON = {"CANASTA_RATE_LIMITS": "true"}
#: Another client, as a proxy on this machine would name it.
ELSEWHERE = {"X-Forwarded-For": "198.51.100.7"}
#: How long one request of a client that is not flooding may take while another floods.
SERVED_WITHIN_SECONDS = 5.0


class Flood(threading.Thread):
    """One client sending ``request(http)`` over and over until stopped; counts the statuses."""

    def __init__(self, base_url: str, request: Callable[[httpx.Client], httpx.Response]) -> None:
        super().__init__(daemon=True)
        self.base_url = base_url
        self.request = request
        self.statuses: Counter[int] = Counter()
        self.refusals: list[httpx.Response] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        with httpx.Client(base_url=self.base_url, timeout=30) as http:
            while not self.stopped.is_set():
                response = self.request(http)
                self.statuses[response.status_code] += 1
                if response.status_code == 429 and len(self.refusals) < 5:
                    self.refusals.append(response)

    def __enter__(self) -> Flood:
        self.start()
        deadline = time.monotonic() + 30
        while not self.statuses[429]:  # the flood has reached the limit
            assert time.monotonic() < deadline, f"no 429 in 30 s: {self.statuses}"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.join(30)


def assert_limited(response: httpx.Response, code: str = "rate_limited") -> int:
    """429, the error body with ``code``, and ``Retry-After`` in whole seconds; returns it."""
    assert response.status_code == 429, response.text
    assert response.json()["error"]["code"] == code, response.text
    error = response.json()["error"]
    # Worded by key (docs/api.md, "Errors"): the pages say it in their language from these.
    assert error["key"] == ("limits.rate" if code == "rate_limited" else "limits.streams")
    assert error["message"] == render(error["key"], error["params"])
    retry_after = int(response.headers["Retry-After"])
    if code == "rate_limited":
        assert error["params"]["retry"] == retry_after
    assert 1 <= retry_after <= 3600
    return retry_after


def served(response: httpx.Response, status: int = 200) -> httpx.Response:
    assert response.status_code == status, response.text
    assert response.elapsed.total_seconds() < SERVED_WITHIN_SECONDS
    return response


def test_a_registration_flood_is_refused_per_address_and_others_still_register(
    uvicorn_server: Any,
) -> None:
    server = uvicorn_server(env={**LIMITS_ON, "CANASTA_RATE_LIMIT_REGISTRATION": "5/minute"})
    names = iter(range(10**6))
    with (
        Flood(
            server.url, lambda http: http.post("/players", json={"name": f"f{next(names)}"})
        ) as flood,
        httpx.Client(base_url=server.url, timeout=30) as http,
    ):
        refused = flood.refusals[0]
        assert assert_limited(refused) <= 60
        # another address registers and signs in during the flood; the flooder still reads
        token = served(http.post("/players", json={"name": "ann"}, headers=ELSEWHERE), 201)
        bearer = {"Authorization": f"Bearer {token.json()['token']}", **ELSEWHERE}
        served(http.post("/sessions", headers=bearer), 201)
        served(http.get("/me", headers=bearer))
        served(http.get("/tables"))
        assert_limited(http.post("/players", json={"name": "bob"}))
    assert flood.statuses[201] == 5, flood.statuses  # the first five, then none
    with httpx.Client(base_url=server.url, timeout=30) as http:
        # the refused names were not taken: nothing was recorded for a refusal
        served(http.post("/players", json={"name": "bob"}, headers=ELSEWHERE), 201)


def test_a_command_flood_is_refused_per_player_through_the_command_lane_and_others_play_on(
    uvicorn_server: Any,
) -> None:
    server = uvicorn_server(env={**LIMITS_ON, "CANASTA_RATE_LIMIT_COMMANDS": "20/minute"})
    with httpx.Client(base_url=server.url, timeout=30) as http:
        game = open_table(http)
        deal = game.deal_id
        cutter = game.names[http.get(f"/deals/{deal}").json()["cutter"]]
        others = [name for name in game.names if name != cutter]
        cut = game.request(cutter, c.Cut(n=10), 1)
        served(http.post(f"/deals/{deal}/commands", json=cut, headers=game.headers[cutter]))
        cut_step = http.get(f"/deals/{deal}").json()["step"]
        # The flooder resends one accepted command: each is a retry the command lane answers.
        with Flood(
            server.url,
            lambda flooder: flooder.post(
                f"/deals/{deal}/commands", json=cut, headers=game.headers[cutter]
            ),
        ) as flood:
            assert_limited(flood.refusals[0])
            # other players, same address, are served: their dry runs, their reads
            for name in others:
                served(game.check(name, c.Cut(n=10)))
                served(http.get(f"/deals/{deal}", headers=game.headers[name]))
            # the flooder's own reads are another class
            served(http.get(f"/deals/{deal}", headers=game.headers[cutter]))
            # another address with no token at all is answered by the route (401), not 429
            served(http.post(f"/deals/{deal}/commands", json=cut, headers=ELSEWHERE), 401)
        assert flood.statuses[200] <= 19, flood.statuses  # the first cut counted too
        assert set(flood.statuses) == {200, 429}, flood.statuses
        # the flood recorded nothing more
        assert http.get(f"/deals/{deal}").json()["step"] == cut_step


def test_a_read_flood_is_refused_per_address_and_players_and_other_addresses_still_read(
    uvicorn_server: Any,
) -> None:
    server = uvicorn_server(env={**LIMITS_ON, "CANASTA_RATE_LIMIT_READS": "40/minute"})
    with httpx.Client(base_url=server.url, timeout=30) as http:
        game = open_table(http)
        deal = game.deal_id
        with Flood(server.url, lambda flooder: flooder.get(f"/deals/{deal}")) as flood:
            assert_limited(flood.refusals[0])
            assert_limited(http.get(f"/tables/{game.table}"))  # this address: every read
            served(http.get(f"/deals/{deal}", headers=ELSEWHERE))  # another address
            served(http.get(f"/tables/{game.table}", headers=ELSEWHERE))
            for name in game.names:  # players behind the same address: their own counts
                served(http.get(f"/deals/{deal}", headers=game.headers[name]))
            served(http.get("/health"))  # probes are never counted
            # the flooding address may still play: commands are another class
            view = http.get(f"/deals/{deal}", headers=game.headers[game.names[0]]).json()
            cutter = game.names[view["cutter"]]
            served(game.send(cutter, c.Cut(n=10)))
        assert flood.statuses[200] <= 40, flood.statuses


def test_streams_over_the_cap_are_refused_per_client_and_others_still_stream(
    uvicorn_server: Any,
) -> None:
    server = uvicorn_server(
        env={
            **LIMITS_ON,
            "CANASTA_MAX_STREAMS_PER_ADDRESS": "3",
            "CANASTA_MAX_STREAMS_PER_TOKEN": "2",
        }
    )
    with httpx.Client(base_url=server.url, timeout=30) as http:
        game = open_table(http)
        player = game.headers[game.names[1]]
    asyncio.run(_streams(server.url, f"/tables/{game.table}/stream", player))


async def stream_opened(
    http: httpx.AsyncClient, stack: AsyncExitStack, url: str, headers: Any, readers: list[Any]
) -> httpx.Response:
    """``GET url`` as a stream held open in ``stack``: once open, its first bytes read and
    its reader kept in ``readers`` (a reader dropped would close it); a refusal read whole."""
    response = await stack.enter_async_context(http.stream("GET", url, headers=headers))
    if response.status_code == 200:  # open: its first bytes arrive
        readers.append(response.aiter_bytes())
        await anext(readers[-1])
    else:
        await response.aread()
    return response


async def _streams(base_url: str, url: str, player: Headers) -> None:
    async with (
        httpx.AsyncClient(base_url=base_url, timeout=30) as http,
        AsyncExitStack() as anonymous,
        AsyncExitStack() as signed_in,
    ):
        readers: list[Any] = []  # kept: a reader dropped would close its stream

        async def open_stream(stack: AsyncExitStack, headers: Headers) -> httpx.Response:
            return await stream_opened(http, stack, url, headers, readers)

        for _ in range(3):
            assert (await open_stream(anonymous, {})).status_code == 200
        # a fourth from this address is refused, and so on as long as three are open
        for _ in range(3):
            refused = await open_stream(anonymous, {})
            assert assert_limited(refused, "too_many_streams") == 5
        # another address streams; a player behind this one has his own cap
        assert (await open_stream(anonymous, ELSEWHERE)).status_code == 200
        assert (await open_stream(signed_in, player)).status_code == 200
        assert (await open_stream(signed_in, player)).status_code == 200
        assert_limited(await open_stream(signed_in, player), "too_many_streams")
        # reads and commands of the same clients are served all along
        assert (await http.get(url.removesuffix("/stream"))).status_code == 200
        assert (await http.get("/me", headers=player)).status_code == 200
        # closing a stream frees its place
        await signed_in.aclose()
        deadline = time.monotonic() + 10
        async with AsyncExitStack() as again:
            while (await open_stream(again, player)).status_code != 200:
                assert time.monotonic() < deadline, "a closed stream still counted"
                await asyncio.sleep(0.1)


def test_a_made_up_session_cookie_the_route_ignores_buys_no_streams_beyond_the_cap(
    uvicorn_server: Any,
) -> None:
    """The cap counts a stream as the route serves it: a cookie header that names a made-up
    session and then an empty one (``canasta_session=x1; canasta_session=``), or a made-up
    session in a ``Cookie`` header the route reads over with another, is an anonymous
    spectator's stream, counted per address. Counted per made-up session instead, an
    anonymous client opened as many streams as it liked."""
    server = uvicorn_server(env={**LIMITS_ON, "CANASTA_MAX_STREAMS_PER_ADDRESS": "2"})
    with httpx.Client(base_url=server.url, timeout=30) as http:
        game = open_table(http, start=False)
    asyncio.run(_made_up_sessions(server.url, f"/tables/{game.table}/stream"))


async def _made_up_sessions(base_url: str, url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as http, AsyncExitStack() as open_:
        readers: list[Any] = []  # kept: a reader dropped would close its stream

        async def open_stream(headers: list[tuple[str, str]]) -> httpx.Response:
            return await stream_opened(http, open_, url, headers, readers)

        for n in range(2):
            opened = await open_stream(
                [("Cookie", f"canasta_session=made-up-{n}; canasta_session=")]
            )
            assert opened.status_code == 200, opened.text  # served as a spectator
        for n in range(2, 6):
            one_header = [("Cookie", f"canasta_session=made-up-{n}; canasta_session=")]
            assert_limited(await open_stream(one_header), "too_many_streams")
            two_headers = [
                ("Cookie", f"canasta_session=made-up-{n}"),
                ("Cookie", "canasta_session="),
            ]
            assert_limited(await open_stream(two_headers), "too_many_streams")


def test_with_the_limits_off_nothing_is_refused(make_client: Callable[..., TestClient]) -> None:
    client = make_client(rate_limits=False, rate_limit_reads="1/minute")
    for _ in range(5):
        assert client.get("/tables").status_code == 200
    settings = Settings(database_url="memory", rate_limits=True, rate_limit_reads="2/minute")
    with TestClient(create_app(settings)) as on:
        assert [on.get("/tables").status_code for _ in range(3)] == [200, 200, 429]
        register_player(on, "ann")  # registration: its own class


def test_after_retry_after_the_client_is_served_again(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(rate_limits=True, rate_limit_reads="3 per 2 second")
    # Fixed windows: on a busy machine the first requests may straddle two windows, so the
    # client reads until refused (within two windows' worth at most).
    answers = [client.get("/tables") for _ in range(7)]
    statuses = [answer.status_code for answer in answers]
    assert 429 in statuses and statuses.index(429) >= 3, statuses
    wait = assert_limited(answers[statuses.index(429)])
    assert 1 <= wait <= 2
    time.sleep(wait)
    assert client.get("/tables").status_code == 200


def test_the_counters_of_ended_windows_are_dropped() -> None:
    counters = ProcessCounters()
    assert [counters.incr("a", 0.05), counters.incr("a", 0.05), counters.incr("b", 60)] == [1, 2, 1]
    time.sleep(0.06)
    assert counters.get("a") == 0 and counters.incr("a", 0.05) == 1  # a new window
    time.sleep(0.06)
    counters.next_sweep = time.time()  # the sweep is due
    counters.incr("b", 60)
    assert set(counters.counts) == {"b"} and counters.get("b") == 2


def test_an_ipv6_client_counts_for_its_64_network() -> None:
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::9")
    assert address_key("2001:db8:1:2::1") != address_key("2001:db8:1:3::1")
    assert address_key("::ffff:198.51.100.7") == "198.51.100.7"
    assert address_key("198.51.100.7") != address_key("198.51.100.8")


def test_the_bots_play_in_process_and_are_never_limited(uvicorn_server: Any) -> None:
    """The host of a table of bots uses up his commands; the bots still play the whole deal
    (the bot runner submits in the server's process, not through HTTP)."""
    server = uvicorn_server(env={**LIMITS_ON, "CANASTA_RATE_LIMIT_COMMANDS": "4/minute"})
    with httpx.Client(base_url=server.url, timeout=30) as http:
        host = register_player(http, "ann")
        served(http.get("/me", headers=host))  # his token is known: counted as his
        table = served(
            http.post("/tables", json={"entry": "classic", "players": 2}, headers=host), 201
        ).json()["id"]
        for seat in (0, 1):
            body = {"seat": seat, "bot": "basic"}
            served(http.post(f"/tables/{table}/seats", json=body, headers=host))
        deal = served(http.post(f"/tables/{table}/start", headers=host), 201).json()["deal"]
        assert_limited(http.post("/tables", json={"entry": "classic", "players": 2}, headers=host))
        deadline = time.monotonic() + 120
        while (view := http.get(f"/deals/{deal}").json())["phase"] != "over":
            assert time.monotonic() < deadline, f"the bots stopped at step {view['step']}"
            time.sleep(0.2)
        assert view["step"] > 50, view  # far more moves than any client may send in a minute
