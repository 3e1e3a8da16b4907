"""An outage of the service and the turn clock (docs/tables.md, "Turn clock"; docs/operations.md,
"Restarts and crashes"), through the application and its HTTP views, on every store. No bot
runner here: the test stops the server's sign of life (``app.infra.liveness``) as an outage
does, sends the timeouts as the runner does, and restarts the clock as the runner does
(``CanastaApp.restart_turn_clock``). The real servers killed and restarted are
``tests/e2e/test_clock_outage.py``."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import pytest
from fastapi.testclient import TestClient

from app.application import CanastaApp
from app.command_io import submission
from app.infra.liveness import Alive, Heartbeat
from app.routes.audit import deal_report
from app.schemas import CommandIn, command_body
from domain.clock import stand_in
from domain.commands import TimeOut
from domain.errors import Conflict
from domain.legal import legal_command, seat_to_act
from tests.support.http import Game, expectation, open_table

TURN_SECONDS = 1
#: Silence counted as an outage. The server's heartbeat beats every quarter of it; at 0.5 s a
#: busy box stalled a beat past it before the test's own outage (the store then rightly said
#: the service had come back after the deal began, and restarted its clock during the outage
#: the test makes), so the outages here are 2 s, as in the other clock tests.
OUTAGE_SECONDS = 2.0


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def http(request: pytest.FixtureRequest, make_client: Callable[..., TestClient]) -> TestClient:
    """A started client on the store of the test's parameter that plays no bots, lets hosts
    choose a clock of 1 second, and counts two seconds of silence as an outage."""
    settings: dict[str, Any] = {
        "run_bots": False,
        "turn_seconds_min": 1,
        "outage_seconds": OUTAGE_SECONDS,
    }
    if request.param == "postgres":
        url = request.getfixturevalue("migrated_postgres_url")
        return make_client(database_url=url, postgres_pool_size=4, **settings)
    return make_client(database_url="memory" if request.param == "memory" else None, **settings)


def _timeout(canasta: CanastaApp, table: str, deal_id: UUID) -> Any:
    """The stand-in's timeout of the seat to act, decided on the deal as it is now."""
    deal = canasta.get_deal(deal_id)
    seat = seat_to_act(deal.state)
    assert seat is not None
    name = stand_in(seat)
    body = CommandIn.model_validate(
        {
            "seq": canasta.last_seq(table, name) + 1,
            "expect": expectation(deal),
            "command": command_body(TimeOut(deal.version)),
        }
    )
    return canasta.submit(*submission(deal.id, name, body))


def _refused(canasta: CanastaApp, table: str, deal_id: UUID) -> str:
    with pytest.raises(Conflict) as refused:
        _timeout(canasta, table, deal_id)
    return refused.value.code


def test_a_turn_that_ran_through_an_outage_gets_its_whole_time_again(http: TestClient) -> None:
    canasta: CanastaApp = http.app.state.canasta  # type: ignore[attr-defined]
    heartbeat: Heartbeat = http.app.state.heartbeat  # type: ignore[attr-defined]
    game = open_table(http, ["ann", "bob"], table={"turn_seconds": TURN_SECONDS})
    deal_id = UUID(game.deal_id)
    seat = seat_to_act(canasta.get_deal(deal_id).state)
    assert seat is not None
    began = datetime.fromisoformat(http.get(f"/deals/{game.deal}").json()["deadline"])

    # The outage: nothing says the service is alive, for longer than the turn's time.
    heartbeat.close()
    time.sleep(TURN_SECONDS + OUTAGE_SECONDS + 0.3)
    assert datetime.now(UTC) > began  # the old deadline passed during the outage
    assert _refused(canasta, game.table, deal_id) == "clock_not_due"  # out of service
    assert canasta.restart_turn_clock(deal_id, canasta.get_deal(deal_id).version) is None

    # The service is back: the turn cannot time out until its clock has started again.
    back = canasta.liveness.beat()
    beating = Heartbeat(canasta.liveness)  # the service's own, from now on
    beating.start()
    try:
        _after_the_outage(http, canasta, game, back, seat, began)
    finally:
        beating.close()


def _after_the_outage(
    http: TestClient, canasta: CanastaApp, game: Game, back: Alive, seat: int, began: datetime
) -> None:
    deal_id = UUID(game.deal_id)
    assert back.up_since == back.alive_at and back.down_since is not None
    assert _refused(canasta, game.table, deal_id) == "clock_not_due"
    step = canasta.get_deal(deal_id).version
    assert canasta.restart_turn_clock(deal_id, step) == seat
    assert canasta.restart_turn_clock(deal_id, step + 1) is None  # once an outage
    with pytest.raises(Conflict):  # decided on a step the deal has left
        canasta.restart_turn_clock(deal_id, step)

    # Everybody sees it, in the events, the stream's deadline and the views.
    for headers in (game.headers["ann"], game.headers["bob"], {}):
        events = http.get(f"/deals/{game.deal}/events", headers=headers).json()
        assert events[-1] == {
            "step": step + 1,
            "kind": "TurnClockRestarted",
            "seat": seat,
            "down": back.down_since.isoformat(),
            "up": back.up_since.isoformat(),
        }
    stored = list(canasta.events.get(deal_id, gt=step))
    assert [type(e).__name__ for e in stored] == ["TurnClockRestarted"]
    restarted = stored[0].timestamp  # type: ignore[attr-defined]
    view = http.get(f"/deals/{game.deal}").json()
    deadline = datetime.fromisoformat(view["deadline"])
    assert deadline == max(restarted, back.up_since) + timedelta(seconds=TURN_SECONDS)
    assert deadline >= back.up_since + timedelta(seconds=TURN_SECONDS)
    assert http.get(f"/tables/{game.table}").json()["deadline"] == view["deadline"]
    replayed = http.get(f"/deals/{game.deal}/replay", params={"step": step + 1}).json()
    assert replayed["deadline"] == view["deadline"]
    before = http.get(f"/deals/{game.deal}/replay", params={"step": step}).json()
    assert datetime.fromisoformat(before["deadline"]) == began  # the history keeps both

    # Not before the new deadline; after it, as ever.
    if datetime.now(UTC) < deadline:
        assert _refused(canasta, game.table, deal_id) == "clock_not_due"
    time.sleep(max(0.0, (deadline - datetime.now(UTC)).total_seconds()) + 0.05)
    timed_out = _timeout(canasta, game.table, deal_id)
    assert timed_out.status == 200, timed_out.body
    assert [e["kind"] for e in timed_out.body["events"]] == ["TurnTimedOut"]
    report = deal_report(canasta, deal_id)
    assert report.ok, report.to_dict()
    assert canasta.get_deal(deal_id).state.missed[seat] == 1


def test_the_person_may_move_after_the_outage_past_his_old_deadline(http: TestClient) -> None:
    canasta: CanastaApp = http.app.state.canasta  # type: ignore[attr-defined]
    heartbeat: Heartbeat = http.app.state.heartbeat  # type: ignore[attr-defined]
    game = open_table(http, ["ann", "bob"], table={"turn_seconds": TURN_SECONDS})
    deal_id = UUID(game.deal_id)
    heartbeat.close()
    time.sleep(TURN_SECONDS + OUTAGE_SECONDS + 0.3)
    canasta.liveness.beat()
    deal = canasta.get_deal(deal_id)
    assert canasta.restart_turn_clock(deal_id, deal.version) is not None
    deal = canasta.get_deal(deal_id)
    seat = seat_to_act(deal.state)
    assert seat is not None
    answer = game.send(game.names[seat], legal_command(deal.state, seat, random.Random(1)))
    assert answer.status_code == 200, answer.text
    kinds = [e["kind"] for e in http.get(f"/deals/{game.deal}/events").json()]
    assert "TurnTimedOut" not in kinds and kinds.count("TurnClockRestarted") == 1
    report = deal_report(canasta, deal_id)
    assert report.ok, report.to_dict()
