"""The process's follower of the store (``app.fanout.EventHub``): every open stream of a deal
gets each new event once, in order, and the store is read once per batch of new events,
however many streams are open (issue: spectators must not cost database queries each)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest

from app.application import CanastaApp
from app.autoplay import HOST, new_table
from app.fanout import Delivered, EventHub
from app.settings import Settings, eventsourcing_env
from tests.support.games import play_commands

STREAMS = 300
COMMANDS = 40


@pytest.fixture(params=["memory", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[CanastaApp, EventHub]]:
    if request.param == "memory":
        settings = Settings(database_url="memory", data_dir=tmp_path, stream_poll_seconds=0.05)
    else:
        url = request.getfixturevalue("migrated_postgres_url")
        settings = Settings(database_url=url, postgres_pool_size=4, stream_poll_seconds=5)
    app = CanastaApp(env=eventsourcing_env(settings))
    hub = EventHub.for_settings(app, settings)
    try:
        yield app, hub
    finally:
        hub.close()
        app.close()


async def _follow(
    app: CanastaApp, hub: EventHub, deal_id: UUID, other_id: UUID
) -> tuple[list[list[int]], list[list[int]], int]:
    loop = asyncio.get_running_loop()
    subs = [await asyncio.to_thread(hub.subscribe, deal_id, loop) for _ in range(STREAMS)]
    others = [await asyncio.to_thread(hub.subscribe, other_id, loop) for _ in range(3)]
    before = len(list(app.events.get(deal_id)))
    reads_before = hub.reads
    await asyncio.to_thread(play_commands, app, deal_id, random.Random(5), COMMANDS)
    head = len(list(app.events.get(deal_id)))
    seen: list[list[int]] = []
    shared: set[int] = set()
    for sub in subs:
        steps: list[int] = []
        while len(steps) < head - before:
            item = await asyncio.wait_for(sub.queue.get(), 10)
            assert isinstance(item, Delivered)
            steps.append(item.step)
            shared.add(id(item))
        seen.append(steps)
    other_seen = [
        [item.step for item in (sub.queue.get_nowait() for _ in range(sub.queue.qsize()))
         if isinstance(item, Delivered)]
        for sub in others
    ]  # fmt: skip
    reads = hub.reads - reads_before
    for sub in [*subs, *others]:
        sub.close()
    assert hub.streams == 0
    # One decoded event shared by all streams: a redaction and encoding can be shared too.
    assert len(shared) == head - before
    return seen, other_seen, reads


def test_every_stream_gets_each_new_event_once_in_order_from_one_read_per_batch(
    store: tuple[CanastaApp, EventHub],
) -> None:
    app, hub = store
    table_id = new_table(app, "classic", 4)
    other_table = new_table(app, "classic", 2)
    deal_id = app.start_game(table_id, HOST)
    other_id = app.start_game(other_table, HOST)
    before = len(list(app.events.get(deal_id)))

    seen, other_seen, reads = asyncio.run(_follow(app, hub, deal_id, other_id))

    head = len(list(app.events.get(deal_id)))
    assert head - before >= COMMANDS  # each command records one event or more
    expected = list(range(before + 1, head + 1))
    assert all(steps == expected for steps in seen)
    assert other_seen == [[], [], []]  # nothing of another deal
    # Reads of the store: at most one per command written (each commit may wake the hub
    # once), never one per stream: 300 streams polling would have made thousands.
    assert 1 <= reads <= COMMANDS + 2
