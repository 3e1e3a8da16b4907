"""Nobody pays for the server's outage with his turn clock (docs/tables.md, "Turn clock";
docs/operations.md, "Restarts and crashes"), through real uvicorn processes.

- The server killed during a person's turn and kept down for longer than his whole time, on
  SQLite (one process, as ``make run``) and PostgreSQL (two workers): once it is back, his
  turn is not timed out at once; the deal records ``TurnClockRestarted``, the deadline is
  the restart plus his whole time, and if he does not move the timeout comes no earlier;
  after a second such outage another person moves past his old deadline, and it counts.
- Two servers on one PostgreSQL, the one that plays the bots and keeps the clocks frozen
  (SIGSTOP) for longer than an outage takes and then killed: the other one went on serving,
  so its taking over the clocks restarts none; the overdue turn times out at once.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from app.routes.audit import deal_report
from app.settings import Settings
from tests.e2e.checks import check_stream
from tests.e2e.client import Api, Player, open_shadow, play_from_menu
from tests.e2e.conftest import BACKENDS, Backend, started_backend
from tests.e2e.server import Server

#: The table's clock: long enough for the test to move within it after a restart.
TURN_SECONDS = 4
#: How long no server may say it is alive before that is an outage (10 s by default).
OUTAGE_SECONDS = 2
#: How late after its due time the clock's leader may act (a busy machine).
SLACK_SECONDS = 4.0
ENV = {
    "CANASTA_TURN_SECONDS_MIN": "1",
    "CANASTA_OUTAGE_SECONDS": str(OUTAGE_SECONDS),
    "CANASTA_LOG_LEVEL": "info",  # the bots' leader says when it leads
}
RESTARTED, TIMED_OUT = "TurnClockRestarted", "TurnTimedOut"


@pytest.fixture(params=BACKENDS)
def outage_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    yield from started_backend(request, tmp_path, ENV)


def _clocked_table(api: Api) -> tuple[list[Player], str]:
    """ann's classic table of two with a clock of TURN_SECONDS, ann and bob seated, no seat
    ever taken over for missed turns."""
    ann, bob = api.register("ann"), api.register("bob")
    body = {"entry": "classic", "players": 2, "turn_seconds": TURN_SECONDS}
    table = api.call("POST", "/tables", player=ann, json=body, expect=201).json()["id"]
    api.call("PUT", f"/tables/{table}/missed-turns", player=ann, json={"limit": 0}, expect=200)
    api.join(ann, table, 0)
    api.join(bob, table, 1)
    return [ann, bob], table


def _wait(what: str, seconds: float, found: Callable[[], Any]) -> Any:
    stop_at = time.monotonic() + seconds
    while not (value := found()):
        assert time.monotonic() < stop_at, f"{what} did not happen within {seconds} s"
        time.sleep(0.1)
    return value


def _kinds(api: Api, deal: str, kind: str, after: int = 0) -> list[dict[str, Any]]:
    return [e for e in api.events(deal, after=after) if e["kind"] == kind]


def _a_person_to_act(api: Api, deal: str) -> dict[str, Any]:
    """The deal's view once a person is to act in his own time (not the bot's rest of a
    timed-out turn)."""

    def view() -> dict[str, Any] | None:
        shown = api.deal(deal, spectator=True)
        assert shown["phase"] != "over", "the deal ended before the test was done"
        return shown if shown["turn"] is not None and shown["deadline"] else None

    found: dict[str, Any] = _wait("a person's turn", 30, view)
    return found


def _outage(server: Server) -> datetime:
    """The server killed (a crash) and kept down for longer than a whole turn and an outage;
    returns the moment just before it is started again."""
    server.kill()
    time.sleep(TURN_SECONDS + OUTAGE_SECONDS + 1)
    back = datetime.now(UTC)
    server.start()
    return back


def test_an_outage_longer_than_a_turn_costs_the_player_nothing(outage_backend: Backend) -> None:
    backend = outage_backend
    api = backend.api()
    reader = backend.shadow()
    players, table = _clocked_table(api)
    deal = api.start(players[0], table)
    seconds = timedelta(seconds=TURN_SECONDS)

    # 1. The person to act stalls; the server crashes in his turn and stays down past his
    #    deadline.
    view = _a_person_to_act(api, deal)
    staller, old_deadline = view["turn"], datetime.fromisoformat(view["deadline"])
    crash = view["step"]  # (an earlier turn of the deal may have timed out before it)
    back = _outage(backend.server)
    assert back > old_deadline, "the old deadline passed during the outage"
    restarted = _wait("the clock's restart", 10, lambda: _kinds(api, deal, RESTARTED))
    assert _kinds(api, deal, TIMED_OUT, crash) == [], "timed out at once after the restart"
    assert [(e["seat"], e["kind"]) for e in restarted] == [(staller, RESTARTED)]
    assert datetime.fromisoformat(restarted[0]["up"]) >= back
    assert datetime.fromisoformat(restarted[0]["down"]) < back
    deadline = datetime.fromisoformat(api.deal(deal, spectator=True)["deadline"])
    assert deadline >= back + seconds, "less than his whole time again"
    assert datetime.fromisoformat(api.table(table)["deadline"]) == deadline
    # He does not move: his turn times out, no earlier than the restart plus his whole time.
    waited = TURN_SECONDS + SLACK_SECONDS + 5
    _wait("the timeout", waited, lambda: _kinds(api, deal, TIMED_OUT, crash))
    stored = check_stream(reader, deal)
    (restart,) = [e for e in stored if type(e).__name__ == RESTARTED]
    (timeout,) = [e for e in stored[crash:] if type(e).__name__ == TIMED_OUT]
    assert timeout.seat == staller
    assert timeout.timestamp >= restart.timestamp + seconds
    assert timeout.timestamp >= back + seconds
    assert timeout.timestamp < restart.timestamp + seconds + timedelta(seconds=SLACK_SECONDS)

    # 2. Another outage during a person's turn: back, he moves past his old deadline, within
    #    his new one, and his move counts.
    view = _a_person_to_act(api, deal)
    mover, old_deadline = view["turn"], datetime.fromisoformat(view["deadline"])
    timeouts = _kinds(api, deal, TIMED_OUT)
    back = _outage(backend.server)
    _wait("the second restart", 10, lambda: len(_kinds(api, deal, RESTARTED)) == 2)
    assert datetime.now(UTC) > old_deadline
    before = api.deal(deal, spectator=True)["step"]
    assert play_from_menu(api, players[mover], deal, random.Random(3)), "his move was refused"
    assert api.deal(deal, spectator=True)["step"] > before
    assert _kinds(api, deal, TIMED_OUT) == timeouts, "his turn timed out"
    assert datetime.fromisoformat(_kinds(api, deal, RESTARTED)[1]["up"]) >= back

    # The history is whole, and the audit accepts both restarts.
    stored = check_stream(reader, deal)
    assert [e.seat for e in stored if type(e).__name__ == RESTARTED] == [staller, mover]
    report = deal_report(reader, UUID(deal))
    assert report.ok, report.to_dict()


@pytest.mark.postgres
def test_a_hand_over_between_live_servers_restarts_no_clock(
    migrated_postgres_url: str, tmp_path: Path
) -> None:
    env = {**ENV, "CANASTA_POSTGRES_POOL_SIZE": "4"}
    leader = Server(tmp_path / "a", database_url=migrated_postgres_url, extra_env=env)
    other = Server(tmp_path / "b", database_url=migrated_postgres_url, extra_env=env)
    leader.start()
    try:
        _wait("the first server's lead", 10, lambda: "plays the bots" in leader.log())
        other.start()
        _hand_over(leader, other, migrated_postgres_url)
    finally:
        other.stop()
        leader.stop()
    other.assert_clean_log()


def _hand_over(leader: Server, other: Server, url: str) -> None:
    api = Api(other.url)  # the server that stays
    try:
        players, table = _clocked_table(api)
        deal = api.start(players[0], table)
        view = _a_person_to_act(api, deal)
        staller, deadline = view["turn"], datetime.fromisoformat(view["deadline"])
        step = view["step"]  # (an earlier turn of the deal may have timed out before it)
        assert "plays the bots" not in other.log()
        # The leader freezes for longer than an outage takes (its lease still held), then
        # dies; the other server served all along.
        assert leader.proc is not None
        os.killpg(leader.proc.pid, signal.SIGSTOP)
        time.sleep(TURN_SECONDS + OUTAGE_SECONDS + 1)
        assert _kinds(api, deal, TIMED_OUT, step) == []  # nobody kept the clocks meanwhile
        leader.kill()
        killed = datetime.now(UTC)
        timeouts = _wait("the timeout", 15, lambda: _kinds(api, deal, TIMED_OUT, step))
        assert "plays the bots" in other.log(), "the other server did not take the lead"
        assert _kinds(api, deal, RESTARTED) == [], "a hand-over restarted a clock"
        assert timeouts[0]["seat"] == staller
        reader = open_shadow(Settings(database_url=url, postgres_pool_size=2))
        try:
            stored = check_stream(reader, deal)
            (timeout,) = [e for e in stored[step:] if type(e).__name__ == TIMED_OUT]
            assert deadline <= timeout.timestamp < killed + timedelta(seconds=SLACK_SECONDS + 2)
            report = deal_report(reader, UUID(deal))
            assert report.ok, report.to_dict()
        finally:
            reader.close()
    finally:
        api.close()
