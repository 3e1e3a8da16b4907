"""The next deal while the host is away, through real uvicorn on PostgreSQL (docs/tables.md,
"The next deal while the host is away"): the host of a table of two, his opponent a bot,
leaves his seat mid-deal; the basic bot plays it, the deal ends, the server's bots process
opens the next deal in the host's stead (recorded as ``DealOpened`` by the bot playing his
seat), and so on: the game goes on to its end, every deal whole and audited."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest

from app.routes.audit import deal_report
from domain.bot_names import stand_in_name
from tests.e2e.checks import check_stream
from tests.e2e.client import Api
from tests.e2e.conftest import Backend, started_backend
from tests.support.openapi import sse_messages

#: How long the bots may take to play a deal of two, and a game, to its end on a busy machine.
DEAL_SECONDS = 120.0
GAME_SECONDS = 400.0


@pytest.fixture(params=[pytest.param("postgres", marks=pytest.mark.postgres)])
def pg_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    yield from started_backend(request, tmp_path)


def _wait(what: str, check: object, seconds: float = DEAL_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"{what}: not within {seconds} s"
        time.sleep(0.2)


def _table_events(api: Api, table: str) -> list[dict[str, object]]:
    stream = api.call("GET", f"/tables/{table}/stream", expect=200)
    return [m.data for m in sse_messages(stream.text) if m.event not in (None, "end")]


def test_the_host_leaves_and_the_bots_process_opens_the_next_deal(pg_backend: Backend) -> None:
    api = pg_backend.api()
    ann = api.register("ann")
    table = api.call(
        "POST", "/tables", player=ann, json={"entry": "classic", "players": 2}, expect=201
    ).json()["id"]
    api.join(ann, table, 0)
    api.call("POST", f"/tables/{table}/seats", player=ann, json={"bot": "basic"}, expect=200)
    first = api.start(ann, table)
    left = api.call("POST", f"/tables/{table}/leave", player=ann, expect=200).json()
    assert left == {"seat": 0, "played_by": stand_in_name(0, "ann")}
    (row,) = [t for t in api.call("GET", "/tables?status=playing").json() if t["id"] == table]
    assert row["away"] == [0] and row["turn_seconds"] is None

    _wait("the first deal's end", lambda: api.deal(first, spectator=True)["phase"] == "over")
    _wait("the second deal", lambda: len(api.table(table)["deals"]) >= 2, 30.0)
    # Nobody is there: the bots play the game to its end, deal after deal.
    _wait("the game's end", lambda: api.table(table)["status"] == "finished", GAME_SECONDS)
    view = api.table(table)
    assert view["winners"] and len(view["deal_scores"]) == len(view["deals"]) >= 2
    opened = [e for e in _table_events(api, table) if e["kind"] == "DealOpened"]
    assert [e["deal_id"] for e in opened] == view["deals"]
    assert [e["by"] for e in opened] == ["ann"] + [stand_in_name(0, "ann")] * (len(opened) - 1)
    reader = pg_backend.shadow()
    for deal in view["deals"]:
        report = deal_report(reader, UUID(deal))
        assert report.ok and report.complete, report.to_dict()
    check_stream(reader, view["deals"][-1])
