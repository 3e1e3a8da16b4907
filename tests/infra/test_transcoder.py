"""The store's JSON codec (``app.infra.transcoder``): orjson writes the library's format, the
same bytes as the library's own ``JSONTranscoder``, so a database written before it and one
written with it read the same with either.

The records: every event and snapshot of ``tests/fixtures/store_v1`` (the code of 1 December
2026) and of a game played now to the end of two deals (snapshots of finished deals
included); then values of every registered type, nested, and what orjson would write
otherwise than the library (a UUID, a UUID's text, an enumeration, a large integer, NaN).
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from enum import Enum
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import pytest
from eventsourcing.persistence import (
    DatetimeAsISO,
    DecimalAsStr,
    JSONTranscoder,
    TranscodingNotRegisteredError,
    UUIDAsHex,
)

from app.application import CanastaApp
from app.autoplay import HOST, new_table
from app.infra.transcoder import OrjsonTranscoder
from app.services.core import DealStateAsDict
from tests.support.games import play_to_end

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "store_v1" / "canasta.sqlite"


def _registered(transcoder: JSONTranscoder) -> JSONTranscoder:
    for transcoding in (UUIDAsHex(), DecimalAsStr(), DatetimeAsISO(), DealStateAsDict()):
        transcoder.register(transcoding)
    return transcoder


LIBRARY = _registered(JSONTranscoder())
ORJSON = _registered(OrjsonTranscoder())


def _same(stored: bytes) -> None:
    """``stored`` reads the same with both codecs, and orjson writes what the library writes
    (the same bytes; an old snapshot's state is written with today's fields by both)."""
    value = LIBRARY.decode(stored)
    assert _plain(ORJSON.decode(stored)) == _plain(value)
    assert ORJSON.encode(value) == LIBRARY.encode(value)


def _plain(value: Any) -> Any:
    """Objects compared by what they hold (a deal's state has no ``==`` of its own)."""
    if hasattr(value, "to_dict"):
        return (type(value), value.to_dict())
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return (type(value), value)


def test_the_old_store_reads_and_writes_the_same() -> None:
    with sqlite3.connect(FIXTURE) as db:
        rows = [*db.execute("SELECT state FROM stored_events")]
        rows += [*db.execute("SELECT state FROM stored_snapshots")]
    assert len(rows) > 1000
    for (state,) in rows:
        _same(bytes(state))


@pytest.fixture
def played() -> Iterator[CanastaApp]:
    app = CanastaApp(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    try:
        yield app
    finally:
        app.close()


def test_a_game_of_today_is_stored_as_the_library_stores_it(played: CanastaApp) -> None:
    assert isinstance(played.mapper.transcoder, OrjsonTranscoder)
    table_id = new_table(played, "classic", 4)
    rng = random.Random(7)
    deal_id = played.start_game(table_id, HOST)
    play_to_end(played, deal_id, rng)
    play_to_end(played, played.start_next_deal(table_id, HOST), rng)
    records = played.recorder.select_notifications(start=1, limit=100_000)
    assert played.snapshots is not None
    snapshots = [
        snapshot
        for deal in played.get_table(table_id).deals
        for snapshot in played.snapshots.recorder.select_events(UUID(str(deal)))
    ]
    assert len(records) > 100 and len(snapshots) == 2
    for record in [*records, *snapshots]:
        _same(record.state)


class Colour(Enum):
    RED = "red"


@pytest.mark.parametrize(
    "value",
    [
        {"at": datetime(2026, 12, 4, 21, 0, 1, 5, tzinfo=UTC), "n": 1},
        {"ids": [uuid4(), {"deep": uuid4()}], "price": Decimal("1.10")},
        {"when": {"day": datetime(2026, 1, 1)}, "list": [[datetime(2026, 1, 2, tzinfo=UTC)]]},
        {"id": str(uuid4()), "hex": uuid4().hex, "text": 'naïve \u2028 "q" \\ \n'},
        {"big": 2**70, "neg": -(2**64)},
        {"keys": {1: "one"}},
        {"nan": float("nan"), "inf": [float("inf")], "none": None},
        {"tagged": {"_type_": "x", "_data_": 1, "more": 2}},
        {"_type_": "datetime_iso", "_data_": "2026-12-04T21:00:00+00:00"},
        {"t": {"_type_": "datetime_iso", "_data_": "2026-12-04T21:00:00"}, "note": '"_type_"'},
    ],
)
def test_values_of_every_kind_are_written_as_the_library_writes_them(value: Any) -> None:
    stored = LIBRARY.encode(value)
    assert ORJSON.encode(value) == stored
    assert repr(_plain(ORJSON.decode(stored))) == repr(_plain(LIBRARY.decode(stored)))


def test_a_type_without_a_transcoding_is_refused_as_before() -> None:
    for value in ({"day": date(2026, 12, 4)}, {"x": object()}, {"colour": Colour.RED}):
        with pytest.raises(TranscodingNotRegisteredError):
            LIBRARY.encode(value)
        with pytest.raises(TranscodingNotRegisteredError):
            ORJSON.encode(value)


def test_a_uuid_is_stored_tagged_not_as_its_text() -> None:
    value = {"id": UUID("12345678-1234-5678-1234-567812345678")}
    assert ORJSON.encode(value) == (
        b'{"id":{"_type_":"uuid_hex","_data_":"12345678123456781234567812345678"}}'
    )
    assert ORJSON.decode(ORJSON.encode(value)) == value
