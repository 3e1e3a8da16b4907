"""The turn clock through real uvicorn (docs/tables.md, "Turn clock"): at a table with a short
clock, one player plays his turns from his move menu and the other stalls; the server's bot
runner times the stalled turns out, the ``basic`` bot plays them, and the game goes on. The
views and the deal's stream show the deadline; the audit re-decides the timeouts. And a bots
process that died between the timeout that reached the limit of missed turns and the seat's
takeover: the next one takes the seat over at once."""

from __future__ import annotations

import json
import os
import random
import signal
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest

from app.application import Expected
from app.command_io import expect_body, submission
from app.routes.audit import deal_report
from app.schemas import CommandIn, command_body
from domain.clock import deadline, stand_in
from domain.commands import TimeOut
from domain.legal import seat_to_act
from tests.e2e.checks import check_stream
from tests.e2e.client import Api, Player, play_from_menu
from tests.e2e.conftest import BACKENDS, Backend, started_backend
from tests.e2e.server import bots_process
from tests.support.http import QUICK_MOVES

#: The clock of the table: short, so that a stalled turn times out quickly (the server lets
#: hosts choose down to 1 second: ``CANASTA_TURN_SECONDS_MIN``).
TURN_SECONDS = 2
#: How late after its deadline a timeout may be recorded (the runner looks every ~0.1 s; the
#: machine may be busy).
SLACK_SECONDS = 3.0
#: Timed-out turns of the staller to watch before the test stops looking.
TIMED_OUT_TURNS = 3


@pytest.fixture(params=BACKENDS)
def clock_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    yield from started_backend(request, tmp_path, {"CANASTA_TURN_SECONDS_MIN": "1"})


@pytest.fixture(params=BACKENDS)
def clock_without_bots(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """As ``clock_backend``, with a server that plays no bots (``canasta bots`` does)."""
    extra = {"CANASTA_TURN_SECONDS_MIN": "1", "CANASTA_RUN_BOTS": "false"}
    yield from started_backend(request, tmp_path, extra)


def _stream_messages(url: str, deal: str, count: int) -> list[dict[str, Any]]:
    """The first ``count`` messages of the deal's stream (as a spectator)."""
    out: list[dict[str, Any]] = []
    with httpx.stream("GET", f"{url}/deals/{deal}/stream", timeout=30.0) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data:"):
                out.append(json.loads(line[5:]))
                if len(out) == count:
                    break
    return out


def clocked_table_of_two(api: Api) -> tuple[Player, Player, str]:
    """ann's classic table of two with a clock of TURN_SECONDS, ann and bob seated."""
    ann, bob = api.register("ann"), api.register("bob")
    body = {"entry": "classic", "players": 2, "turn_seconds": TURN_SECONDS}
    table = api.call("POST", "/tables", player=ann, json=body, expect=201).json()["id"]
    api.join(ann, table, 0)
    api.join(bob, table, 1)
    return ann, bob, table


def test_a_stalled_player_times_out_and_the_game_goes_on(clock_backend: Backend) -> None:
    backend = clock_backend
    api = backend.api()
    ann, _, table = clocked_table_of_two(api)
    # Every timed-out turn is watched here: the bot never takes bob's seat over for them
    # (that is the next test).
    api.call("PUT", f"/tables/{table}/missed-turns", player=ann, json={"limit": 0}, expect=200)
    assert api.table(table)["turn_seconds"] == TURN_SECONDS
    reader = backend.shadow()  # before the start: ann's clock runs from there
    deal = api.start(ann, table)
    view = api.deal(deal, spectator=True)
    assert view["deadline"] is not None and view["timed_out"] == []
    assert api.table(table)["deadline"] == view["deadline"]

    rng = random.Random(5)
    ann_moves_after_a_timeout = 0
    timeouts: list[dict[str, Any]] = []
    stop_at = time.monotonic() + 120
    while True:
        assert time.monotonic() < stop_at, "the stalled turns did not time out in time"
        # ann's moves one right after the other, a draw and a discard: she is on the same clock
        # (on a busy box, the whole history and the view read before each of her moves, and a
        # turn of random melds, timed her first turn out: a TurnTimedOut of seat 0 at step 2).
        if play_from_menu(api, ann, deal, rng, QUICK_MOVES):
            ann_moves_after_a_timeout += bool(timeouts)
            continue
        events = api.events(deal)
        timeouts = [e for e in events if e["kind"] == "TurnTimedOut"]
        if api.deal(deal, spectator=True)["phase"] == "over":
            break
        if len([t for t in timeouts if t["seat"] == 1]) >= TIMED_OUT_TURNS:
            break
        time.sleep(0.05)
    assert ann_moves_after_a_timeout > 0, "the game did not go on after bob's timeout"
    # The bot plays a timed-out turn right after the timeout is recorded, and the loop above
    # may have stopped in between: wait for the last one to be played.
    while type(list(reader.events.get(UUID(deal)))[-1]).__name__ == "TurnTimedOut":
        assert time.monotonic() < stop_at, "the bot did not play the last timed-out turn"
        time.sleep(0.05)

    # Only bob's turns timed out; each was recorded after its deadline, and not much later.
    stored = check_stream(reader, deal)
    for i, event in enumerate(stored):
        if type(event).__name__ != "TurnTimedOut":
            continue
        assert event.seat == 1
        assert event.on_step == event.originator_version - 1  # decided on the step before it
        # From the clock's recorded start (the deal's turn_since before it, as the server
        # checks it), not from the event stored just before: a command's events may be tens of
        # milliseconds apart on a busy machine (a cut deals and turns a card up after the event
        # that starts the first turn), as tests/e2e/test_restart.py found in CI.
        began = reader.get_deal(UUID(deal), version=event.originator_version - 1).turn_since
        assert began is not None
        waited = (event.timestamp - datetime.fromisoformat(began)).total_seconds()
        assert TURN_SECONDS <= waited < TURN_SECONDS + SLACK_SECONDS, waited
        # Then the basic bot played bob's turn: bob's events up to his discard (or the end).
        following = [type(e).__name__ for e in stored[i + 1 :]]
        assert following, "nothing was played after the timeout"
    # The stand-in's commands went through the command path: its own sequence numbers.
    assert reader.last_seq(table, stand_in(1)) >= TIMED_OUT_TURNS
    assert reader.last_seq(table, "bob") == 0  # bob never sent anything
    assert deal_report(reader, UUID(deal)).ok  # the audit re-decides the timeouts too

    # The deal's stream carries the deadline after each event: none while the deal is being
    # dealt, or while a timed-out turn is played; one as soon as somebody is to act.
    shown = api.events(deal)
    messages = _stream_messages(api.base_url, deal, len(shown))
    assert [m["step"] for m in messages] == [e["step"] for e in shown]
    assert all("deadline" in m for m in messages)
    started = next(m for m in messages if m["kind"] == "PlayStarted")
    assert started["deadline"] is not None
    for m in messages:
        if m["kind"] == "TurnTimedOut":
            assert m["deadline"] is None


def test_after_the_missed_turns_limit_the_bot_takes_the_seat_until_he_takes_it_back(
    clock_backend: Backend,
) -> None:
    """docs/tables.md, "Absent players": two turns missed in a row (the default limit), and
    the basic bot plays bob's seat until he takes it back with the call that seats him; his
    clock then starts afresh."""
    backend = clock_backend
    api = backend.api()
    ann, bob, table = clocked_table_of_two(api)
    assert api.table(table)["missed_turns_limit"] == 2
    deal = api.start(ann, table)
    rng = random.Random(7)
    stop_at = time.monotonic() + 120
    while True:  # ann's moves one right after the other (as above), bob stalls
        assert time.monotonic() < stop_at, "bob's seat was not taken over"
        if play_from_menu(api, ann, deal, rng, QUICK_MOVES):
            continue
        if api.table(table)["playing"][1]["away"]:
            break
        time.sleep(0.05)
    playing = api.table(table)["playing"][1]
    assert playing["reason"] == "missed_turns" and playing["player"].startswith("bot:basic:1")
    timeouts = [e for e in api.events(deal) if e["kind"] == "TurnTimedOut"]
    assert [e["seat"] for e in timeouts] == [1, 1]
    changes = [e for e in api.events(deal) if e["kind"] == "SeatPlayerChanged"]
    assert [(e["seat"], e["reason"]) for e in changes] == [(1, "missed_turns")]
    # bob's own move is refused while the bot plays his seat.
    menu = api.call("GET", f"/deals/{deal}/moves", player=bob)
    assert menu.status_code == 403 and menu.json()["error"]["code"] == "seat_not_yours"

    # He takes it back, and plays his next turn himself.
    api.call("POST", f"/tables/{table}/seats", player=bob, json={}, expect=200)
    assert not api.table(table)["playing"][1]["away"]
    stop_at = time.monotonic() + 60
    while not play_from_menu(api, bob, deal, rng):
        assert time.monotonic() < stop_at, "bob could not play after taking his seat back"
        play_from_menu(api, ann, deal, rng)
    kinds = [e["kind"] for e in api.events(deal)]
    assert kinds.count("SeatPlayerChanged") == 2


def test_a_timeout_that_reached_the_limit_left_without_its_takeover_is_taken_over_at_once(
    clock_without_bots: Backend, tmp_path: Path
) -> None:
    """The bots process records a timeout, then the takeover of the seat whose player has now
    missed the table's limit of turns: two writes. A process killed between them (SIGKILL, a
    crash, a machine gone) left the seat to its absent player: the next bots process played
    the rest of that turn, then waited for his clock to run out once more before taking the
    seat over. Now whichever process leads takes it over as soon as it looks at the table."""
    backend = clock_without_bots
    api = backend.api()
    ann, _, table = clocked_table_of_two(api)
    api.call("PUT", f"/tables/{table}/missed-turns", player=ann, json={"limit": 1}, expect=200)
    deal = api.start(ann, table)
    store = backend.shadow()  # the crashed bots process's writes, made by the test itself
    rng = random.Random(11)
    stop_at = time.monotonic() + 60
    while seat_to_act(store.get_deal(UUID(deal)).state) != 1:  # ann plays up to bob's turn
        assert time.monotonic() < stop_at, "bob's turn did not come"
        if not play_from_menu(api, ann, deal, rng):
            time.sleep(0.05)
    current = store.get_deal(UUID(deal))
    due = deadline(current.turn_since, TURN_SECONDS, current.state)
    assert due is not None
    time.sleep(max(0.0, (due - datetime.now(UTC)).total_seconds()) + 0.2)
    # What the bots process recorded just before it died: bob's turn timed out (his first:
    # the limit), as its stand-in, through the command path; the takeover not yet.
    timeout = CommandIn.model_validate(
        {
            "seq": store.last_seq(UUID(table), stand_in(1)) + 1,
            "expect": expect_body(Expected.now(current)),
            "command": command_body(TimeOut(current.version)),
        }
    )
    answer = store.submit(*submission(UUID(deal), stand_in(1), timeout))
    assert answer.status == 200, answer.body
    assert not api.table(table)["playing"][1]["away"]

    log = tmp_path / "bots.log"
    bots = bots_process(backend.server, log)
    try:
        stop_at = time.monotonic() + 30
        while not api.table(table)["playing"][1]["away"]:
            assert bots.poll() is None, log.read_text()
            assert time.monotonic() < stop_at, "bob's seat was not taken over:\n" + log.read_text()
            time.sleep(0.1)
    finally:
        os.killpg(bots.pid, signal.SIGTERM)
        assert bots.wait(15) == 0, log.read_text()
    playing = api.table(table)["playing"][1]
    assert playing["reason"] == "missed_turns" and playing["player"].startswith("bot:basic:1")
    kinds = [e["kind"] for e in api.events(deal)]
    timed_out = kinds.index("TurnTimedOut")
    # Taken over right after the recorded timeout: not after bob's clock ran out once more.
    assert kinds[timed_out + 1] == "SeatPlayerChanged", kinds[timed_out:]
    timeouts = [e for e in api.events(deal) if e["kind"] == "TurnTimedOut"]
    assert [e["seat"] for e in timeouts] == [1], timeouts
    assert deal_report(store, UUID(deal)).ok
