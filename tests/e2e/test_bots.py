"""Bots at tables through real uvicorn (docs/bots.md): a practice table played by one scripted
person from his move menu against three bots of the server's own bot runner, and a bot
process (``canasta bots``) killed mid-game and restarted: the game goes on, and every move
was applied once."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest

from app.routes.audit import deal_report
from domain.bot_names import bot_name
from domain.command_log import CommandLog, command_log_id
from tests.e2e.checks import check_stream
from tests.e2e.client import Api
from tests.e2e.conftest import BACKENDS, Backend, started_backend
from tests.e2e.server import bots_process, stopped_within

#: A bot must have moved within this many seconds of its turn (the issue's "within a second").
BOT_SECONDS = 1.0


@pytest.fixture(params=BACKENDS)
def no_bots_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """A started server that plays no bots itself (``CANASTA_RUN_BOTS=false``)."""
    yield from started_backend(request, tmp_path, {"CANASTA_RUN_BOTS": "false"})


def _step_and_turn(api: Api, deal_id: str) -> tuple[int, bool]:
    """The deal's step, and whether it is still going."""
    view = api.deal(deal_id, spectator=True)
    return int(view["step"]), view["phase"] != "over"


def test_a_practice_table_reaches_the_end_of_a_deal(backend: Backend) -> None:
    api = backend.api()
    ann = api.register("ann")
    answer = api.call(
        "POST",
        "/tables/practice",
        player=ann,
        json={"entry": "classic", "players": 4, "bot": "basic"},
        expect=201,
    ).json()
    table, deal = answer["table"], answer["deal"]
    view = api.table(table)
    assert view["status"] == "playing"
    assert view["seats"] == ["ann", "bot:basic:1", "bot:basic:2", "bot:basic:3"]
    assert view["bots"] == [None, "basic", "basic", "basic"]
    rng = random.Random(17)
    waits: list[float] = []
    mine = 0
    deadline = time.monotonic() + 300
    while True:
        assert time.monotonic() < deadline, "the deal did not end in time"
        step, going = _step_and_turn(api, deal)
        if not going:
            break
        menu = api.call("GET", f"/deals/{deal}/moves", player=ann, expect=200).json()
        if menu["moves"] and menu["step"] == step:
            request = {
                "seq": menu["next_seq"],
                "expect": menu["expect"],
                "command": rng.choice(menu["moves"]),
            }
            api.call("POST", f"/deals/{deal}/commands", player=ann, json=request, expect=200)
            mine += 1
            continue
        # A bot is to act (or ann, between the two reads): the step must move within a second.
        began = time.monotonic()
        while _step_and_turn(api, deal)[0] == step:
            assert time.monotonic() - began < BOT_SECONDS, f"no bot moved at step {step}"
            time.sleep(0.02)
        waits.append(time.monotonic() - began)
    assert mine > 0 and waits, (mine, waits)
    final = api.deal(deal, spectator=True)
    assert final["phase"] == "over"
    assert api.table(table)["deal_scores"], "the deal was scored on the table"
    reader = backend.shadow()
    assert deal_report(reader, UUID(deal)).ok


def test_the_bot_process_killed_and_restarted_plays_on_and_applies_nothing_twice(
    no_bots_backend: Backend, tmp_path: Path
) -> None:
    backend = no_bots_backend
    api = backend.api()
    host = api.register("hal")
    table = api.create_table(host, "classic", 4)
    for seat in range(4):
        answer = api.call(
            "POST",
            f"/tables/{table}/seats",
            player=host,
            json={"seat": seat, "bot": "basic"},
            expect=200,
        )
        assert answer.json() == {"seat": seat}
    deal = api.start(host, table)
    log = tmp_path / "bots.log"
    first = bots_process(backend.server, log)
    try:
        _wait_for_step(api, deal, 30, first, log)
        os.killpg(first.pid, signal.SIGKILL)  # mid-game: no clean-up, the lease dies with it
        first.wait()
        # A COMMIT the killed process had already sent lands on the server after its death:
        # the step it stopped at is the one that stays put for a moment.
        stopped = _settled_step_and_turn(api, deal)
        time.sleep(1.0)
        assert _step_and_turn(api, deal) == stopped, "a bot moved with no bot process"
        assert stopped[1], "the deal ended before the kill"
        second = bots_process(backend.server, log)
        try:
            deadline = time.monotonic() + 300
            while _step_and_turn(api, deal)[1]:
                assert second.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "the deal did not end after the restart"
                time.sleep(0.1)
        finally:
            second.send_signal(signal.SIGTERM)
            assert stopped_within(second, 15) == 0, log.read_text()
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    reader = backend.shadow()
    report = deal_report(reader, UUID(deal))
    assert report.ok and report.complete, report.to_dict()
    check_stream(reader, deal)  # every step stored once, the chain whole
    # Every accepted answer of every bot's log (one per sequence number) recorded steps of its
    # own: no step of the deal was answered twice, and the last one ended the deal.
    steps: list[int] = []
    for seat in range(4):
        stored: CommandLog = reader.repository.get(command_log_id(table, bot_name("basic", seat)))
        for seq in range(1, stored.last_seq + 1):
            kept = stored.answer_for(seq)
            assert kept is not None, f"seat {seat}: no answer under seq {seq}"
            if kept["status"] == 200:
                steps += [event["step"] for event in kept["body"]["events"]]
    assert len(steps) == len(set(steps)), "a step was answered twice"
    assert max(steps) == report.events
    assert "leading: this process plays the bots" in log.read_text()


def _settled_step_and_turn(api: Api, deal: str) -> tuple[int, bool]:
    """The deal's step and turn once two reads 0.5 s apart agree (at most 10 tries)."""
    last = _step_and_turn(api, deal)
    for _ in range(10):
        time.sleep(0.5)
        now = _step_and_turn(api, deal)
        if now == last:
            return now
        last = now
    raise AssertionError(f"the deal kept moving with no bot process: now at {last}")


def _wait_for_step(
    api: Api, deal: str, step: int, process: subprocess.Popen[bytes], log: Path
) -> None:
    deadline = time.monotonic() + 60
    while _step_and_turn(api, deal)[0] < step:
        assert process.poll() is None, log.read_text()
        assert time.monotonic() < deadline, (
            f"the bots did not reach step {step}:\n{log.read_text()}"
        )
        time.sleep(0.02)
