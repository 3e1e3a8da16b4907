"""The process's follower of the store (``app.fanout.EventHub``): every open stream of a deal
gets each new event once, in order, and the store is read once per batch of new events,
however many streams are open (issue: spectators must not cost database queries each)."""

from __future__ import annotations

import asyncio
import random
import threading
import time
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


def _await_position(hub: EventHub, app: CanastaApp) -> None:
    """Until the follower has read the store up to its head."""
    head = app.recorder.max_notification_id()
    for _ in range(400):
        if (hub._position or 0) >= (head or 0):
            return
        hub._wake.set()
        threading.Event().wait(0.025)
    raise AssertionError("the follower did not reach the store's head")


def test_a_stream_opening_on_a_deal_begun_while_streams_were_open_takes_its_history_from_memory(
    store: tuple[CanastaApp, EventHub],
) -> None:
    """The next deal's streams (every spectator of a game opens one at once) need no read of
    the store: the follower holds the deal's events from its first, in order, exactly as
    stored, and shares them (with their encodings) between the streams. A deal begun before
    any stream was open, or while none was, is read from the store as before."""
    app, hub = store
    loop = asyncio.new_event_loop()
    try:
        early_table = new_table(app, "classic", 2)
        early = app.start_game(early_table, HOST)  # before the follower ran: not held
        table_id = new_table(app, "classic", 4)
        watching = hub.subscribe(table_id, loop)  # a table stream keeps the follower reading
        deal_id = app.start_game(table_id, HOST)
        play_commands(app, deal_id, random.Random(3), 12)
        _await_position(hub, app)

        first = hub.subscribe(deal_id, loop)
        second = hub.subscribe(deal_id, loop)
        stored = list(app.events.get(deal_id))
        assert first.history is not None and second.history is not None
        assert [d.step for d in first.history] == [e.originator_version for e in stored]
        assert [d.event for d in first.history] == stored  # decoded, the same events
        assert all(a is b for a, b in zip(first.history, second.history, strict=True))
        assert hub.newest_held(deal_id) == stored[-1]
        late = hub.subscribe(early, loop)
        assert late.history is None
        assert hub.newest_held(early) is None

        # With no stream open the follower stops reading: what it held may have holes.
        for sub in (watching, first, second, late):
            sub.close()
        assert hub.streams == 0
        play_commands(app, deal_id, random.Random(4), 2)
        _await_position(hub, app)
        assert hub.subscribe(deal_id, loop).history is None
    finally:
        loop.close()


@pytest.mark.postgres
def test_on_postgres_the_commits_of_a_read_interval_are_read_in_one_query(
    migrated_postgres_url: str,
) -> None:
    """The follower is woken by every commit's NOTIFY but reads at most once per
    ``stream_read_interval_ms``: its queries follow the time, not the commits, and every
    event still reaches the stream, in order."""
    settings = Settings(
        database_url=migrated_postgres_url, postgres_pool_size=4, stream_read_interval_ms=400
    )
    app = CanastaApp(env=eventsourcing_env(settings))
    hub = EventHub.for_settings(app, settings)
    loop = asyncio.new_event_loop()
    try:
        deal_id = app.start_game(new_table(app, "classic", 4), HOST)
        sub = hub.subscribe(deal_id, loop)
        before = len(list(app.events.get(deal_id)))
        reads_before = hub.reads
        started = time.monotonic()
        play_commands(app, deal_id, random.Random(8), COMMANDS)
        head = len(list(app.events.get(deal_id)))

        async def steps() -> list[int]:
            got: list[int] = []
            while len(got) < head - before:
                item = await asyncio.wait_for(sub.queue.get(), 10)
                assert isinstance(item, Delivered)
                got.append(item.step)
            return got

        assert loop.run_until_complete(steps()) == list(range(before + 1, head + 1))
        elapsed = time.monotonic() - started
        reads = hub.reads - reads_before
        assert reads <= 2 + elapsed / 0.4 < COMMANDS, (reads, elapsed)
        sub.close()
    finally:
        loop.close()
        hub.close()
        app.close()
