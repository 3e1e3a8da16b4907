"""The PostgreSQL recorder (``app/infra/persistence.py``): one round trip per transaction, same
guarantees as the library's, on both of its paths (one simple query with the values in its
text, or parameters in a pipeline for an event whose topic is not a plain name). Notification ids come back in order; a transaction with one
conflicting event stores none of its events; and a reader tailing the notification log while
many writers insert never passes over an id that is filled in later (the table lock keeps
commit order = id order)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from eventsourcing.persistence import IntegrityError, StoredEvent

from app.application import CanastaApp
from app.infra.persistence import PostgresRecorder
from app.settings import Settings, eventsourcing_env

pytestmark = pytest.mark.postgres


@pytest.fixture
def app(migrated_postgres_url: str) -> Iterator[CanastaApp]:
    canasta = CanastaApp(env=eventsourcing_env(Settings(database_url=migrated_postgres_url)))
    try:
        yield canasta
    finally:
        canasta.close()


#: A plain topic (the simple query's path) and one that is not (the parameterised path).
PLAIN, QUOTED = "test:Event", "test:Event'); DROP TABLE canasta_events; --"


def events(originator: uuid.UUID, versions: range, topic: str = PLAIN) -> list[StoredEvent]:
    return [StoredEvent(originator, v, topic, b'{"n": %d}' % v) for v in versions]


@pytest.mark.parametrize("topic", [PLAIN, QUOTED])
def test_every_byte_and_topic_is_stored_as_it_was_given(app: CanastaApp, topic: str) -> None:
    """Whatever path a transaction takes, the stored state and topic are the given bytes and
    string: every byte value, quotes, backslashes, a NUL, non-ASCII text."""
    recorder = app.recorder
    assert isinstance(recorder, PostgresRecorder)
    a = uuid.uuid4()
    states = [bytes(range(256)), "é'\\x00\"\\';--".encode(), b"", b"\\x41"]
    given = [StoredEvent(a, v, topic, state) for v, state in enumerate(states, 1)]
    assert recorder.insert_events(given)
    stored = recorder.select_events(a)
    assert [(e.originator_version, e.topic, e.state) for e in stored] == [
        (e.originator_version, e.topic, e.state) for e in given
    ]
    assert recorder.select_events(uuid.uuid4()) == []  # and the table is still there


def test_each_transaction_notifies_the_channel(app: CanastaApp, migrated_postgres_url: str) -> None:
    """The NOTIFY that wakes the streams' follower (app/fanout.py) goes with the commit, on
    both paths."""
    recorder = app.recorder
    assert isinstance(recorder, PostgresRecorder)
    with psycopg.connect(migrated_postgres_url, autocommit=True) as listener:
        listener.execute(f'LISTEN "{recorder.channel_name}"')
        for topic in (PLAIN, QUOTED):
            recorder.insert_events(events(uuid.uuid4(), range(1, 3), topic))
            got = list(listener.notifies(timeout=5, stop_after=1))
            assert [n.channel for n in got] == [recorder.channel_name]


def test_ids_come_back_in_order_and_match_the_log(app: CanastaApp) -> None:
    recorder = app.recorder
    assert isinstance(recorder, PostgresRecorder)
    a, b = uuid.uuid4(), uuid.uuid4()
    first = recorder.insert_events(events(a, range(1, 4)) + events(b, range(1, 3)))
    second = recorder.insert_events(events(a, range(4, 5)))
    assert first is not None and second is not None
    ids = [*first, *second]
    assert ids == sorted(ids) and len(set(ids)) == 6
    log = recorder.select_notifications(start=None, limit=100)
    assert [n.id for n in log] == ids
    assert [(n.originator_id, n.originator_version) for n in log] == [
        (a, 1), (a, 2), (a, 3), (b, 1), (b, 2), (a, 4)
    ]  # fmt: skip
    assert log[0].state == b'{"n": 1}'


@pytest.mark.parametrize("size", [1, 12, 13, 130])
def test_transactions_of_any_size_store_every_row_with_its_own_values(
    app: CanastaApp, size: int
) -> None:
    """Each size of transaction has its own INSERT, rendered once and reused: the second
    transaction of the same size stores its own rows, not the first one's (13 events are
    52 parameters, past the 50 up to which psycopg caches a parsed query)."""
    recorder = app.recorder
    for _ in range(2):
        a = uuid.uuid4()
        ids = recorder.insert_events(events(a, range(1, size + 1)))
        assert ids is not None and len(ids) == size and ids == sorted(ids)
        stored = recorder.select_events(a)
        assert [(e.originator_version, e.state) for e in stored] == [
            (v, b'{"n": %d}' % v) for v in range(1, size + 1)
        ]
        log = recorder.select_notifications(start=ids[0], limit=size)
        assert [(n.id, n.originator_id) for n in log] == [(i, a) for i in ids]


@pytest.mark.parametrize("topic", [PLAIN, QUOTED])
def test_a_conflict_stores_nothing_of_its_transaction(app: CanastaApp, topic: str) -> None:
    recorder = app.recorder
    a, b = uuid.uuid4(), uuid.uuid4()
    recorder.insert_events(events(a, range(1, 3)))
    head = recorder.max_notification_id()
    with pytest.raises(IntegrityError):
        # a@2 exists
        recorder.insert_events(events(b, range(1, 4), topic) + events(a, range(2, 3), topic))
    assert recorder.max_notification_id() == head
    assert recorder.select_events(b) == []
    # the connection is usable again
    assert recorder.insert_events(events(b, range(1, 2)))


def test_a_tailing_reader_never_skips_an_id_under_concurrent_writers(app: CanastaApp) -> None:
    recorder = app.recorder
    writers, per_writer = 6, 150
    done = threading.Event()
    seen: list[int] = []

    def tail() -> None:
        last = 0
        while True:
            finished = done.is_set()
            batch = recorder.select_notifications(start=last, limit=1000, inclusive_of_start=False)
            seen.extend(n.id for n in batch)
            if batch:
                last = batch[-1].id
            elif finished:
                return

    def write() -> None:
        originator = uuid.uuid4()
        for v in range(1, per_writer + 1):
            recorder.insert_events(events(originator, range(v, v + 1)))

    reader = threading.Thread(target=tail)
    reader.start()
    threads = [threading.Thread(target=write) for _ in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    reader.join()
    every = [n.id for n in recorder.select_notifications(start=None, limit=10_000)]
    assert len(every) == writers * per_writer
    assert seen == every  # nothing passed over, nothing twice, in order
