"""The typed deal events and the stored event classes stay twins: the same kinds, the same
fields, the same stored data (issue 14: stored events keep their topics and fields)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from domain import deal_events as ev
from domain.events import EVENT_CLASSES
from domain.melds import LaidMeld
from domain.state import DealState

ENVELOPE = {"originator_id", "originator_version", "timestamp", "chain"}


def test_every_stored_kind_has_a_typed_twin_and_back() -> None:
    assert set(EVENT_CLASSES) == set(ev.BY_KIND)
    for kind, stored in EVENT_CLASSES.items():
        assert stored.__module__ == "domain.events" and stored.__name__ == kind  # the topic


@pytest.mark.parametrize("kind", sorted(ev.BY_KIND))
def test_fields_match_the_stored_class(kind: str) -> None:
    stored = [f.name for f in dataclasses.fields(EVENT_CLASSES[kind]) if f.name not in ENVELOPE]
    assert list(ev.BY_KIND[kind].FIELDS) == stored


@pytest.mark.parametrize(
    ("event", "data"),
    [
        (ev.CardsDealt(cards=[(0, "AS/1"), (1, "KH/2")]), {"cards": [[0, "AS/1"], [1, "KH/2"]]}),
        (
            ev.MeldExtended(seat=1, side="B", rank="7", index=0, cards=["7S/1"]),
            {"seat": 1, "side": "B", "rank": "7", "index": 0, "cards": ["7S/1"]},
        ),
        (ev.DealAbandoned(reason="stopped"), {"reason": "stopped"}),
    ],
)
def test_stored_data_round_trips(event: ev.DealEvent, data: dict[str, object]) -> None:
    assert json.loads(json.dumps(event.data())) == data
    assert ev.from_data(event.kind, data).data() == json.loads(json.dumps(event.data()))


def test_melds_keep_their_json_form_in_snapshots() -> None:
    st = DealState(
        table_id="t",
        number=1,
        variant="ponytail",
        meld_cap=7,
        decks=6,
        options={},
        players=4,
        player_ids=["a", "b", "c", "d"],
        order=[0, 1, 2, 3],
        side_of=["A", "B", "A", "B"],
        dealer=0,
        cutter=3,
        scores_before={"A": 0, "B": 0},
        commitment="c",
    )
    st.melds["A"] = [LaidMeld.of("7", ["7S/1"] * 7, 7), LaidMeld.of("K", ["KS/1"] * 3, 7)]
    snapshot = json.loads(json.dumps(st.to_dict()))
    assert snapshot["melds"]["A"] == [
        {"rank": "7", "cards": ["7S/1"] * 7, "closed": True},
        {"rank": "K", "cards": ["KS/1"] * 3},
    ]
    assert snapshot["meld_cap"] == 7
    assert DealState.from_dict(snapshot) == st
