"""The turn clock in a real browser (docs/tables.md, "Turn clock"; docs/web.md): the host
chooses it in the lobby's form, and the table page counts the seconds of the seat to act down;
when a player stalls, the server's bot runner times his turn out and the page's log says so."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from playwright.sync_api import BrowserContext, Page, Route, expect

from tests.e2e.client import Api, Player, play_from_menu
from tests.e2e.conftest import Backend, make_backend, running
from tests.support.http import QUICK_MOVES
from tests.web.conftest import PHONES, TOUCH, NewContext, screenshot
from tests.web.pages import open_lobby, sign_up

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`, not `make test-fast`


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """A server whose hosts may choose a clock of 1 second (tests only)."""
    backend = make_backend(
        "sqlite", tmp_path_factory.mktemp("clock"), extra_env={"CANASTA_TURN_SECONDS_MIN": "1"}
    )
    yield from running(backend)


Headers = dict[str, str]


def clocked_table(url: str, names: tuple[str, str], seconds: int) -> tuple[str, Headers, Headers]:
    """A table of two with a clock of ``seconds`` a turn, the first of ``names`` its host in
    seat 0, the other in seat 1, not started yet: its id and the two players' headers."""
    tokens = [httpx.post(f"{url}/players", json={"name": n}).json()["token"] for n in names]
    host, other = ({"Authorization": f"Bearer {token}"} for token in tokens)
    body = {"entry": "classic", "players": 2, "turn_seconds": seconds}
    table = httpx.post(f"{url}/tables", json=body, headers=host).json()["id"]
    for seat, who in enumerate((host, other)):
        httpx.post(f"{url}/tables/{table}/seats", json={"seat": seat}, headers=who)
    return table, host, other


class Turns:
    """A player who plays each of his turns as it comes (a cut, a draw, a discard: short
    turns, well within a clock of 2 s), from his move menu, in a thread of his own."""

    def __init__(self, url: str, headers: Headers, deal: str) -> None:
        token = headers["Authorization"].split()[1]
        self._api, self._player, self._deal = Api(url), Player("cy", token), deal
        self._rng = random.Random(3)
        self._go, self._stop = threading.Event(), threading.Event()
        self._moving = threading.Lock()  # held while a move is on its way
        self.failure: BaseException | None = None
        self._go.set()
        self._thread = threading.Thread(target=self._play, daemon=True)
        self._thread.start()

    def _play(self) -> None:
        try:
            while not self._stop.wait(0.05):
                with self._moving:
                    if self._go.is_set():
                        play_from_menu(self._api, self._player, self._deal, self._rng, QUICK_MOVES)
        except BaseException as failure:  # told in the test's thread
            self.failure = failure

    @contextmanager
    def paused(self) -> Iterator[None]:
        """He makes no move meanwhile (once the one on its way is answered)."""
        self._go.clear()
        with self._moving:
            pass
        try:
            yield
        finally:
            self._go.set()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        self._api.close()
        if self.failure is not None:
            raise AssertionError("his moves failed") from self.failure


@contextmanager
def playing_his_turns(url: str, headers: Headers, deal: str) -> Iterator[Turns]:
    turns = Turns(url, headers, deal)
    try:
        yield turns
    finally:
        turns.stop()


def table_page(context: BrowserContext, table: str, headers: Headers | None = None) -> Page:
    """The table page in ``context``, signed in with ``headers`` (None: a spectator's), read."""
    if headers is not None:
        assert context.request.post("/sessions", headers=headers).ok
    page = context.new_page()
    page.goto(f"/tables/{table}")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    return page


def test_the_host_chooses_the_clock_and_the_table_page_counts_down(
    new_context: NewContext, web_server: Backend
) -> None:
    url = web_server.server.url
    ann, _ = open_lobby(new_context())
    ann_token = sign_up(ann, "ann")
    ann.get_by_label("Players").select_option("2")
    ann.get_by_label("Turn clock").select_option(label="60 seconds a turn")
    ann.get_by_role("button", name="Create the table").click()
    expect(ann.get_by_role("status")).to_contain_text("Table created")
    listed = httpx.get(f"{url}/tables", params={"status": "open"}, timeout=15).json()
    assert [httpx.get(f"{url}/tables/{t['id']}").json()["turn_seconds"] for t in listed] == [60]

    # A table with a 3-second clock: bob never plays, so his turns time out.
    bob_token = httpx.post(f"{url}/players", json={"name": "bob"}).json()["token"]
    auth = {"Authorization": f"Bearer {ann_token}"}
    body = {"entry": "classic", "players": 2, "turn_seconds": 3}
    table = httpx.post(f"{url}/tables", json=body, headers=auth).json()["id"]
    httpx.post(f"{url}/tables/{table}/seats", json={"seat": 0}, headers=auth)
    bob_auth = {"Authorization": f"Bearer {bob_token}"}
    httpx.post(f"{url}/tables/{table}/seats", json={"seat": 1}, headers=bob_auth)
    assert httpx.post(f"{url}/tables/{table}/start", headers=auth).status_code == 201

    watcher = new_context().new_page()
    watcher.goto(f"/tables/{table}")
    expect(watcher.locator("body[data-ready=true]")).to_be_attached()
    clock = watcher.get_by_role("timer")
    expect(clock).to_be_visible()
    expect(clock).to_contain_text("s left to play")
    left = int(clock.get_attribute("data-left") or "99")
    assert 0 <= left <= 3
    # The seat to act stalls (ann does not play either): the clock runs out and the log says so.
    expect(watcher.locator("#log")).to_contain_text("time ran out", timeout=15_000)


def test_a_player_whose_missed_turns_make_him_away_is_not_asked_his_move_menu(
    new_context: NewContext, web_server: Backend
) -> None:
    """di stalls with his page open: two of his turns time out (2 s a turn, the default
    limit of two missed turns), the basic bot takes his seat over, and his page,
    following the deal, never asks the menu it is then refused (403 seat_not_yours, an error
    in the browser's console); he takes the seat back and plays. cy plays his own turns."""
    url = web_server.server.url
    table, cy, di = clocked_table(url, ("cy", "di"), 2)
    context = new_context()
    assert context.request.post("/sessions", headers=di).ok
    page = context.new_page()
    refused: list[str] = []
    page.on("response", lambda r: refused.append(r.url) if r.status >= 400 else None)
    page.goto(f"/tables/{table}")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    started = httpx.post(f"{url}/tables/{table}/start", headers=cy)
    assert started.is_success, started.text
    # cy plays his turns, so the game goes on while di is away. (Had cy stalled too, his seat
    # went to the bot as well, and two bots played the whole game out in a few seconds, at
    # times before di's click: his Take my seat back was gone, a click timed out.)
    with playing_his_turns(url, cy, started.json()["deal"]) as cy_plays:
        # He did not leave: his page says why he is away (it said only "You are away"),
        # together with his Take my seat back.
        page.wait_for_function(
            """text => document.getElementById("take-back")?.checkVisibility()
                && document.getElementById("status").textContent === text""",
            arg="Your time ran out on your turns, so you are away: the bot plays your seat "
            "until you take it back (Who plays).",
            timeout=30_000,
        )
        expect(page.locator("#take-back")).to_be_visible()
        # cy waits (one turn of his may time out, not two in a row) while di's page settles:
        # its reads after the takeover answered, none refused.
        with cy_plays.paused():
            page.wait_for_load_state("networkidle")
            assert refused == [], refused
            page.locator("#take-back").click()
            expect(page.locator("#leave-seat")).to_be_visible()
        expect(page.locator("#hand [data-card]").first).to_be_visible()
        assert refused == [], refused


def test_a_move_that_loses_the_race_with_the_clock_says_the_time_ran_out(
    new_context: NewContext, web_server: Backend
) -> None:
    """fay clicks Draw in the last moment: the timeout is recorded first, so her move is
    refused as decided on an older step. Her page says that her time ran out and the bot plays
    her turn, not that it "was behind (a move was made from another tab or device)", and does
    not ask her to choose her move again: it is not hers any more."""
    url = web_server.server.url
    table, eo, fay = clocked_table(url, ("eo", "fay"), 3)
    never = httpx.put(f"{url}/tables/{table}/missed-turns", json={"limit": 0}, headers=eo)
    assert never.is_success, never.text
    page = table_page(new_context(), table, fay)
    deal = httpx.post(f"{url}/tables/{table}/start", headers=eo).json()["deal"]
    # Nobody plays: the clock moves the deal on to fay's turn (her cut, if she cuts, too).
    draw = page.locator("#moves [data-move=draw]")
    expect(draw).to_be_visible(timeout=60_000)
    # Her Draw is held on its way until the clock has timed her turn out.
    held: list[Route] = []
    page.route(f"**/deals/{deal}/commands", lambda route: held.append(route))
    step = httpx.get(f"{url}/deals/{deal}").json()["step"]
    draw.click()

    def timed_out() -> bool:
        events = httpx.get(f"{url}/deals/{deal}/events", params={"after": step}).json()
        return any(e["kind"] == "TurnTimedOut" and e["seat"] == 1 for e in events)

    for _ in range(100):
        if held and timed_out():
            break
        page.wait_for_timeout(200)
    assert held and timed_out()
    held[0].continue_()
    error = page.locator("#error")
    expect(error).to_contain_text("Your time ran out: the basic bot plays the rest of your turn.")
    expect(error).not_to_contain_text("another tab")
    screenshot(page, "table-clock-race-lost")


def test_a_device_whose_clock_is_behind_counts_the_turn_down_from_the_server_s_time(
    new_context: NewContext, web_server: Backend
) -> None:
    """A spectator's phone whose clock is five minutes slow: the page counts the 60-second
    turn down from the server's time (its answers' Date), not from the phone's (it showed
    some 360 s left of a 60-second turn)."""
    url = web_server.server.url
    table, gus, _ = clocked_table(url, ("gus", "hy"), 60)
    assert httpx.post(f"{url}/tables/{table}/start", headers=gus).status_code == 201
    context = new_context(viewport=PHONES["upright"], locale="ru-RU", **TOUCH)
    context.clock.install(time=datetime.now(UTC) - timedelta(minutes=5))
    page = context.new_page()
    page.goto(f"/tables/{table}")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    clock = page.get_by_role("timer")
    expect(clock).to_contain_text("на ход осталось")
    left = int(clock.get_attribute("data-left") or "-1")
    assert 45 <= left <= 60, left
    screenshot(page, "phone-clock-slow-device")


def test_a_player_one_timeout_away_from_the_takeover_is_warned(
    new_context: NewContext, web_server: Backend
) -> None:
    """The default limit is two missed turns: once one of gil's turns has timed out, his page
    says during his next turn, under the clock in his move panel (in sight on his phone), that
    one more timeout hands his seat to the bot (it said only "Your move."); a spectator is not
    told."""
    url = web_server.server.url
    table, hal, gil = clocked_table(url, ("hal", "gil"), 4)
    page = table_page(new_context(viewport=PHONES["upright"], **TOUCH), table, gil)
    watcher = table_page(new_context(), table)
    assert httpx.post(f"{url}/tables/{table}/start", headers=hal).is_success
    warning = (
        "You have missed 1 turn: if your time runs out again, the bot takes your seat until you "
        "come back."
    )
    # Nobody plays: looked at each frame (his next turn lasts 4 s).
    page.wait_for_function(
        """text => {
            const node = document.getElementById("last-chance");
            return node.textContent === text && node.checkVisibility()
                && node.getAttribute("role") === "status"
                && node.previousElementSibling.id === "clock"
                && node.closest("#moves") !== null;
        }""",
        arg=warning,
        timeout=60_000,
    )
    screenshot(page, "phone-clock-last-chance", full_page=False)
    assert not watcher.locator("#last-chance").is_visible()
    assert "takes your seat" not in (watcher.locator("body").text_content() or "")


def test_the_rest_of_a_timed_out_turn_is_said_as_the_bots(
    new_context: NewContext, web_server: Backend
) -> None:
    """After "ivy's time ran out", the basic bot plays the rest of her turn: the log of her
    page, a spectator's and the replay say "The basic bot (for ivy) ..." for those moves (they
    read "ivy took the pile", as if she made them). The limit is 0: the bot never takes her
    seat over, and she is never warned that it will."""
    url = web_server.server.url
    table, jo, ivy = clocked_table(url, ("jo", "ivy"), 2)
    never = httpx.put(f"{url}/tables/{table}/missed-turns", json={"limit": 0}, headers=jo)
    assert never.is_success, never.text
    page = table_page(new_context(), table, ivy)
    watcher = table_page(new_context(), table)
    deal = httpx.post(f"{url}/tables/{table}/start", headers=jo).json()["deal"]
    expect(page.locator("#log")).to_contain_text("The basic bot (for ivy) ", timeout=60_000)
    expect(watcher.locator("#log")).to_contain_text("The basic bot (for ivy) ")
    # Her own moves are never the bot's: a timed-out line names her, and the bot's after it.
    lines = page.locator("#log li").all_text_contents()
    out = next(i for i, line in enumerate(lines) if line.startswith("ivy's time ran out"))
    # A sentence that begins with the stand-in begins with a capital (it is no person's name).
    assert lines[out + 1].startswith("The basic bot (for ivy) "), lines[out : out + 3]
    expect(page.locator("#moves [data-move]").first).to_be_visible(timeout=60_000)
    assert not page.locator("#last-chance").is_visible()
    screenshot(page, "table-clock-stand-in-log")
    replay = page.context.new_page()
    replay.goto(f"/deals/{deal}/replay?step=1")
    replay.locator("#steps summary").click()  # "Every step"
    expect(replay.locator("#step-list")).to_contain_text("The basic bot (for ivy) ")
    screenshot(replay, "replay-clock-stand-in")
    replay.locator("#lang").select_option("ru")
    expect(replay.locator("#step-list")).to_contain_text("Бот «basic» (вместо ivy) ")
