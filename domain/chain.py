"""Tamper evidence: every event of a deal commits to its predecessor (a hash chain).

``link`` hashes the previous link together with the event's deal, step, kind, time and
data, in a canonical JSON form. An auditor recomputes the chain from the stored events;
the first event whose stored link differs is where the history was altered.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

GENESIS = "0" * 64
# Library fields of an event that are not its data (the step and time are hashed apart).
_ENVELOPE = frozenset(
    {"originator_id", "originator_version", "timestamp", "originator_topic", "chain"}
)


def link(
    prev: str, deal_id: str, step: int, kind: str, timestamp: str, data: Mapping[str, Any]
) -> str:
    body = json.dumps(
        {"deal": deal_id, "step": step, "kind": kind, "at": timestamp, "data": data},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
    )
    return hashlib.sha256((prev + body).encode()).hexdigest()


def event_data(event: Any) -> dict[str, Any]:
    return {k: v for k, v in event.__dict__.items() if k not in _ENVELOPE}


def first_broken_link(events: Iterable[Any]) -> int | None:
    """The step of the first stored event whose link does not verify, or None."""
    prev = GENESIS
    expected_step = 1
    for event in events:
        step = event.originator_version
        if step != expected_step:
            return expected_step  # a missing or reordered event breaks the chain too
        kind = type(event).__name__
        good = link(
            prev,
            str(event.originator_id),
            step,
            kind,
            event.timestamp.isoformat(),
            event_data(event),
        )
        if getattr(event, "chain", None) != good:
            return int(step)
        prev = good
        expected_step += 1
    return None
