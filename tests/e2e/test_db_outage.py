"""PostgreSQL goes away for a while and comes back (docs/operations.md, "When PostgreSQL goes
away"), with every part real: a server of two workers, ``canasta project`` and ``canasta
bots`` in processes of their own, all reaching the database through a TCP relay
(tests/support/relay.py) which the test cuts, as a network cut or a stopped primary cuts
every connection and refuses new ones, then resumes. Nothing of canasta is restarted.

During the outage ``/health`` answers, ``/ready`` says not ready, and a request that needs
the database is answered promptly 503 ``database_unavailable`` with ``Retry-After``: not a
request held for minutes (the library's ten tries of each query, each waiting 30 s for a
connection) nor a 500 with a traceback in the log. After it, everything goes on by itself:
``/ready`` is ready again, the person's command sent into the outage is recorded once when
he sends it again, the bots play on, the read models' process catches up (the lobby shows a
table opened afterwards), the player's and the spectator's live streams, never closed,
deliver every event once, the turn that ran through the outage gets its whole time again
(no timeout for it), and each process said what happened in a few lines, not a line every
0.2 s."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.routes.views import BEHIND_HEADER
from app.settings import Settings
from tests.e2e.checks import check_stream
from tests.e2e.client import Api, open_shadow
from tests.e2e.server import Server, bots_process, cli_process, stopped_within
from tests.support.relay import Relay
from tests.support.waiting import timed, wait_for

pytestmark = pytest.mark.postgres

#: How long the database stays away: longer than the turn clock (so the deadline of the turn
#: to act falls within the outage) and than the outage bound. The clock leaves a busy box time
#: to wait for the streams and for /ready: on a CI box four seconds timed out ann's turn before
#: the cut and her restarted one after it, two missed turns, and the basic bot took her seat.
CUT_SECONDS = 11.0
TURN_SECONDS = 10
OUTAGE_SECONDS = "3"
#: CANASTA_DATABASE_WAIT_SECONDS: a request waits this long for the database, then 503.
WAIT_SECONDS = 1
#: At most this long for a 503 (the wait, one more try of a broken connection, a slow box).
ANSWER_SECONDS = 2 * WAIT_SECONDS + 2.0
BOT_SEATS = (1, 2, 3)


class Stream:
    """A client of a deal's live stream that counts how often it had to open it."""

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        self.url, self.headers = url, headers or {}
        self.steps: list[int] = []
        self.opened = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            resume = {"Last-Event-ID": str(self.steps[-1])} if self.steps else {}
            try:
                timeout = httpx.Timeout(5.0, read=60.0)
                headers = {**self.headers, **resume}
                with httpx.stream("GET", self.url, headers=headers, timeout=timeout) as answer:
                    self.opened += 1
                    for line in answer.iter_lines():
                        if line.startswith("event: end") or self._stop.is_set():
                            return
                        if line.startswith("data:"):
                            self.steps.append(json.loads(line[5:])["step"])
            except httpx.HTTPError:
                time.sleep(0.2)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


@pytest.fixture
def relayed(migrated_postgres_url: str) -> Iterator[tuple[Relay, str]]:
    relay, url = Relay.to_url(migrated_postgres_url)
    yield relay, url
    relay.cut()


def test_the_service_rides_out_a_database_outage_and_recovers_by_itself(
    relayed: tuple[Relay, str], migrated_postgres_url: str, tmp_path: Path
) -> None:
    relay, url = relayed
    env = {
        "CANASTA_POSTGRES_POOL_SIZE": "4",
        "CANASTA_TURN_SECONDS_MIN": "1",
        "CANASTA_OUTAGE_SECONDS": OUTAGE_SECONDS,
        "CANASTA_DATABASE_WAIT_SECONDS": str(WAIT_SECONDS),
        "CANASTA_READ_MODELS": "off",
        "CANASTA_RUN_BOTS": "false",
        "CANASTA_READY_TIMEOUT_SECONDS": "0.5",
    }
    server = Server(tmp_path, database_url=url, workers=2, extra_env=env)
    server.start()
    side = tmp_path / "processes.log"
    bots = project = None
    api = Api(server.url)
    streams: list[Stream] = []
    try:
        bots = bots_process(server, side)
        project = cli_process(server, side, "project", "--retry-seconds", "0.2")
        ann = api.register("ann")
        body = {"entry": "classic", "players": 4, "turn_seconds": TURN_SECONDS}
        table = api.call("POST", "/tables", player=ann, json=body, expect=201).json()["id"]
        api.join(ann, table, 0)
        for seat in BOT_SEATS:
            bot = {"seat": seat, "bot": "basic"}
            api.call("POST", f"/tables/{table}/seats", player=ann, json=bot, expect=200)
        deal = api.start(ann, table)
        stream_url = f"{server.url}/deals/{deal}/stream"
        streams = [Stream(stream_url, ann.auth), Stream(stream_url + "?as=spectator")]

        def menu() -> Any:
            answer = api.call("GET", f"/deals/{deal}/moves", player=ann, expect=200).json()
            return answer if answer["moves"] else None

        step = wait_for(menu, 20, "the bots played up to ann's turn")["expect"]["step"]
        wait_for(lambda: all(s.steps[-1:] >= [step] for s in streams), 20, "the streams caught up")
        first = wait_for(menu, 20, "ann's turn")  # read again just before the cut: her turn runs
        command = {
            "seq": first["next_seq"],
            "expect": first["expect"],
            "command": first["moves"][0],
        }
        cut_at_step = first["expect"]["step"]
        http = httpx.Client(base_url=server.url, timeout=3 * ANSWER_SECONDS)

        # `canasta project` up and leading before the cut (a slow start-up met the outage
        # at its first look at the store, refused to start, and exited 2: nothing rode it out).
        wait_for(
            lambda: "this process runs the read models" in side.read_text(),
            30,
            "canasta project leads",
        )
        relay.cut()  # the database goes away
        cut = time.monotonic()
        health, took = timed(lambda: http.get("/health"))
        assert health.status_code == 200 and took < 1.0
        ready, took = timed(lambda: http.get("/ready"))
        assert ready.status_code == 503 and ready.json()["error"]["code"] == "database_unreachable"
        for _ in range(4):  # a load balancer probes on
            assert http.get("/ready").status_code == 503
        for name, call in [
            (
                "a command",
                lambda: http.post(f"/deals/{deal}/commands", json=command, headers=ann.auth),
            ),
            ("a view", lambda: http.get(f"/deals/{deal}", headers=ann.auth)),
            ("the lobby", lambda: http.get("/tables")),
            ("a new account", lambda: http.post("/players", json={"name": "zed"})),
        ]:
            answer, took = timed(call)
            assert answer.status_code == 503, f"{name}: {answer.status_code} {answer.text}"
            assert answer.json()["error"]["code"] == "database_unavailable", answer.text
            assert int(answer.headers["Retry-After"]) >= 1
            assert took < ANSWER_SECONDS, f"{name} was answered after {took:.1f}s"
        time.sleep(max(0.0, CUT_SECONDS - (time.monotonic() - cut)))

        relay.resume()  # the database is back: nothing of canasta is restarted
        wait_for(lambda: http.get("/ready").status_code == 200, 15, "ready again")
        again = http.post(f"/deals/{deal}/commands", json=command, headers=ann.auth)
        # Recorded now, once; or refused as stale when the clock's restart (a new step,
        # below) came first: then ann reloads her menu, as after any stale command.
        assert again.status_code in (200, 409), again.text
        if again.status_code == 409:
            assert again.json()["error"]["code"] == "R-CMD-1", again.text
            fresh = wait_for(menu, 20, "ann's menu")
            retry = {
                "seq": fresh["next_seq"],
                "expect": fresh["expect"],
                "command": fresh["moves"][0],
            }
            api.call("POST", f"/deals/{deal}/commands", player=ann, json=retry, expect=200)

        # The bots play on: ann plays two more moves between theirs (409: a bot or the
        # clock moved between her reads, as at any time).
        played = 0
        while played < 2:
            nxt = wait_for(menu, 20, "the bots played up to ann's turn again")
            body = {"seq": nxt["next_seq"], "expect": nxt["expect"], "command": nxt["moves"][0]}
            sent = api.call("POST", f"/deals/{deal}/commands", player=ann, json=body)
            assert sent.status_code in (200, 409), sent.text
            played += sent.status_code == 200
        now = api.deal(deal, spectator=True)["step"]

        # The streams, never closed, delivered every step once.
        wait_for(
            lambda: all(s.steps and s.steps[-1] >= now for s in streams),
            20,
            "the streams delivered",
        )
        for stream, viewer in zip(streams, (ann, None), strict=True):
            assert stream.opened == 1, "a stream had to be opened again"
            # What the stream had before the events are read (the bots play on meanwhile, and
            # the stream keeps taking their steps): a prefix of the history read after it.
            steps = list(stream.steps)
            shown = [event["step"] for event in api.events(deal, viewer)]
            assert steps == shown[: len(steps)], "a step missed, or sent twice"

        # The read models' process caught up: a table opened now is in the lobby, read
        # without the header that says the read models had not caught up with the whole event
        # log within the lobby's wait (the bots and the turn clock play on meanwhile: how far
        # behind /ready finds them at one moment measures a busy box's speed, not recovery).
        bea = api.register("bea")
        fresh_table = api.create_table(bea, "classic", 2)
        lobby = wait_for(
            lambda: (
                (answer := api.call("GET", "/tables", expect=200)).headers.get(BEHIND_HEADER)
                is None
                and answer
            ),
            60,
            "the read models' process caught up",
        )
        assert fresh_table in [t["id"] for t in lobby.json()]
        # Ready, as each of the two workers finds it: the one that did not answer the probes
        # above may still be replacing its broken connections, and a probe may outlast the
        # 0.5 s it is given on a busy box (one probe here, after all the above, failed 503 so).
        wait_for(lambda: http.get("/ready").status_code == 200, 15, "ready at the end")
        http.close()
    finally:
        for stream in streams:
            stream.close()
        api.close()
        stopped = []
        for process in (bots, project):
            if process is not None:
                process.terminate()
                stopped.append(stopped_within(process, 15))
        server.stop()
    assert stopped == [0, 0], "canasta bots or project did not stop:\n" + side.read_text()

    reader = open_shadow(Settings(database_url=migrated_postgres_url, postgres_pool_size=2))
    try:
        stored = check_stream(reader, deal)  # every step once, the chain whole
    finally:
        reader.close()
    kinds = [(type(e).__name__, getattr(e, "seat", None)) for e in stored]
    after = [(k, s) for k, s in kinds[cut_at_step:]]
    # The turn that ran through the outage was not timed out: ann's first event after it is
    # the restart of her clock (her whole time again), or her move sent again if that came
    # first (a later TurnTimedOut is a later turn's, or the same turn's after her partner
    # answered her, which starts her time again).
    first = next(kind for kind, seat in after if seat == 0)
    assert first != "TurnTimedOut", f"ann was timed out for the outage: {after[:8]}"
    assert any(s in BOT_SEATS for k, s in after), "no bot played after the outage"
    moved = [e for e in stored[cut_at_step:] if getattr(e, "seat", None) == 0]
    assert moved, "ann's command was lost"

    server.assert_clean_log()  # no traceback, no "unexpected", no 500
    text = server.log() + side.read_text()
    assert "Traceback" not in text, text[-5000:]
    lines = [line for line in text.splitlines() if " WARNING " in line or " ERROR " in line]
    assert len(lines) < 60, f"{len(lines)} warnings for one outage:\n" + "\n".join(lines)
    assert "the database does not answer" in text
    # Once per worker, however often probed; and when it is back.
    assert text.count("not ready:") <= 2, text
    assert "the event store answers again" in text
    assert "liveness: the service was out of service" in text
