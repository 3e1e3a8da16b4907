"""The server killed (SIGKILL) in the middle of a deal played by a person through HTTP, two
bots and a stalling person at a table with a turn clock, while a spectator follows the deal's
stream; then started again on the same store (docs/operations.md, "Restarts and crashes").
SQLite with one process, as ``make run``, and PostgreSQL with two workers.

Afterwards the game goes on: the bots play their seats again, the clock times the stalled
player's turns out again (never before his deadline, never twice for one turn), the
spectator's stream, resumed with ``Last-Event-ID``, got every event once and in order, every
step is stored once with its chain whole, and the audit finds the deal clean."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest

from app.routes.audit import deal_report
from tests.e2e.checks import check_stream
from tests.e2e.client import play_from_menu
from tests.e2e.conftest import BACKENDS, Backend, started_backend

#: The table's turn clock (the server lets hosts choose down to 1 s: CANASTA_TURN_SECONDS_MIN).
TURN_SECONDS = 2
#: Steps played before the kill, and after the restart before the test stops looking.
BEFORE, AFTER = 25, 25
#: The stalled player's turns timed out after the restart before the test stops looking.
TIMEOUTS_AFTER = 2
PLAY_SECONDS = 120.0
BOT_SEATS = (1, 3)


@pytest.fixture(params=BACKENDS)
def clock_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    yield from started_backend(request, tmp_path, {"CANASTA_TURN_SECONDS_MIN": "1"})


class Follower:
    """A spectator's client of ``GET /deals/{id}/stream``: reconnects by itself whenever the
    stream breaks or ends early, resuming after the last event it got (``Last-Event-ID``)."""

    def __init__(self, base_url: str, deal: str) -> None:
        self.url = f"{base_url}/deals/{deal}/stream"
        self.events: list[dict[str, Any]] = []
        self.opened = 0
        self.ended = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set() and not self.ended.is_set():
            headers = {"Last-Event-ID": str(self.events[-1]["step"])} if self.events else {}
            try:
                timeout = httpx.Timeout(5.0, read=30.0)
                with httpx.stream("GET", self.url, headers=headers, timeout=timeout) as answer:
                    assert answer.status_code == 200, answer.status_code
                    self.opened += 1
                    for line in answer.iter_lines():
                        if line.startswith("event: end"):
                            self.ended.set()
                        elif line.startswith("data:") and not self.ended.is_set():
                            self.events.append(json.loads(line[5:]))
                        if self._stop.is_set():
                            return
            except httpx.HTTPError:
                time.sleep(0.2)  # the server is away: try again

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=40)


def test_a_crash_mid_deal_and_a_restart_the_bots_and_the_clock_play_on(
    clock_backend: Backend,
) -> None:
    backend = clock_backend
    api = backend.api()
    ann, bob = api.register("ann"), api.register("bob")
    body = {"entry": "classic", "players": 4, "turn_seconds": TURN_SECONDS}
    table = api.call("POST", "/tables", player=ann, json=body, expect=201).json()["id"]
    api.call("PUT", f"/tables/{table}/missed-turns", player=ann, json={"limit": 0}, expect=200)
    api.join(ann, table, 0)
    api.join(bob, table, 2)  # bob never plays: his turns time out
    for seat in BOT_SEATS:
        bot = {"seat": seat, "bot": "basic"}
        api.call("POST", f"/tables/{table}/seats", player=ann, json=bot, expect=200)
    deal = api.start(ann, table)
    follower = Follower(api.base_url, deal)
    rng = random.Random(2)

    def play_until(done: Any) -> None:
        stop_at = time.monotonic() + PLAY_SECONDS
        while not done() and api.deal(deal, spectator=True)["phase"] != "over":
            assert time.monotonic() < stop_at, "the game did not go on"
            if not play_from_menu(api, ann, deal, rng):
                time.sleep(0.05)

    def timeouts() -> list[dict[str, Any]]:
        return [e for e in api.events(deal) if e["kind"] == "TurnTimedOut"]

    play_until(lambda: api.deal(deal, spectator=True)["step"] >= BEFORE and timeouts())
    backend.server.kill()  # requests and the stream in flight, the bots and the clock mid-turn
    killed_at = len(list(backend.shadow().events.get(UUID(deal))))
    backend.server.start()
    before = len(timeouts())
    play_until(
        lambda: (
            api.deal(deal, spectator=True)["step"] >= killed_at + AFTER
            and len(timeouts()) >= before + TIMEOUTS_AFTER
        )
    )
    # The game goes on (the clock times ann out too now): the stream catches up with a step
    # stored, and is closed there.
    seen = api.deal(deal, spectator=True)["step"]
    stop_at = time.monotonic() + 30
    while not follower.events or follower.events[-1]["step"] < seen:
        assert time.monotonic() < stop_at, "the spectator's stream did not catch up"
        time.sleep(0.05)
    follower.close()

    reader = backend.shadow()
    stored = check_stream(reader, deal)  # every step once, the chain whole
    after_restart = stored[killed_at:]
    bots_moved = [e for e in after_restart if getattr(e, "seat", None) in BOT_SEATS]
    assert bots_moved, "no bot played again"
    assert any(type(e).__name__ == "TurnTimedOut" for e in after_restart), "the clock stopped"
    on_steps = []
    for event in stored:
        if type(event).__name__ == "TurnTimedOut":
            on_steps.append(event.on_step)
            # From the clock's recorded start (the event that made it the seat's turn), not
            # from the event stored just before: a command's events are microseconds apart under
            # no load but may be tens of milliseconds apart on a busy machine (a cut deals
            # and turns a card up after the event that starts the first turn).
            began = reader.get_deal(UUID(deal), version=event.originator_version - 1).turn_since
            assert began is not None
            waited = (event.timestamp - datetime.fromisoformat(began)).total_seconds()
            assert waited >= TURN_SECONDS, f"timed out {waited:.2f} s after the turn began"
    assert len(on_steps) == len(set(on_steps)), "a turn timed out twice"
    report = deal_report(reader, UUID(deal))
    assert report.ok, report.to_dict()

    # The spectator's stream, broken by the kill and resumed: every event once, in order,
    # as the deal's history shows them to a spectator.
    shown = api.events(deal)
    got = [e["step"] for e in follower.events]
    assert follower.opened >= 2, "the stream was never resumed"
    assert got == [e["step"] for e in shown][: len(got)], "missed or repeated events"
    assert [e["kind"] for e in follower.events] == [e["kind"] for e in shown][: len(got)]
