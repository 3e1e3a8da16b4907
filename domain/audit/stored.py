"""Stored deal events as the audit reads them: their kind, their typed twin, a plain-dict
description for reports, and folding them into a ``DealState`` (trusting nothing)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.domain import DomainEventProtocol

from domain.chain import event_data
from domain.deal import Deal
from domain.deal_events import DealEvent, from_data
from domain.refusals import Said, said
from domain.state import DealState
from domain.variants import get_variant

#: An event as the store returns it: a deal's (``Deal.Started``, then the classes of
#: ``domain.events``) or a table's. Its fields are read as stored and never trusted: a forged
#: record can hold any value in any field, so every read of one is checked or guarded.
StoredEvent = DomainEventProtocol[UUID]


def kind_of(event: object) -> str:
    return type(event).__name__


def typed(event: StoredEvent) -> DealEvent:
    """The typed deal event a stored one records (KeyError, TypeError if it records none)."""
    return from_data(kind_of(event), event_data(event))


def canonical(value: object) -> str:
    """Stored values come back from JSON (tuples as lists): compare canonical JSON forms."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def describe(event: StoredEvent) -> dict[str, Any]:
    """A stored event as a plain dict: its step, kind and data (the chain link included)."""
    out: dict[str, Any] = {"step": event.originator_version, "kind": kind_of(event)}
    out.update(event_data(event))
    if hasattr(event, "chain"):
        out["chain"] = event.chain
    return out


def as_decided(step: int, kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
    return {"step": step, "kind": kind, **data}


# --- folding ------------------------------------------------------------------------------


def initial_state(started: Deal.Started) -> DealState:
    """The state the ``Started`` event creates (before the shuffle)."""
    data = event_data(started)
    return DealState(
        table_id=data["table_id"],
        number=data["number"],
        variant=data["variant"],
        meld_cap=get_variant(data["variant"]).meld_cap,
        decks=data["decks"],
        options=data["options"],
        players=data["players"],
        player_ids=data["player_ids"],
        order=data["order"],
        side_of=data["side_of"],
        dealer=data["dealer"],
        cutter=data["cutter"],
        scores_before=data["scores_before"],
        commitment=data["commitment"],
    )


@dataclass
class Folded:
    """The state after folding stored events up to ``step`` (or as far as they fold)."""

    state: DealState | None
    step: int
    why: Said | None = None  # why folding stopped before the requested step

    @property
    def error(self) -> str | None:
        """Why, in English."""
        return self.why.message if self.why else None


def fold(events: Sequence[StoredEvent], upto: int | None = None) -> Folded:
    """Fold the stored events (through ``DealState.apply``) up to step ``upto``.

    Folding trusts nothing: an event that does not fold stops it, with the reason."""
    started = events[0] if events else None
    if not isinstance(started, Deal.Started):
        return Folded(None, 0, said("audit.no_started"))
    try:
        state = initial_state(started)
    except Exception as exc:  # a malformed Started event
        return Folded(None, 0, said("audit.started_no_fold", error=repr(exc)))
    step = 1
    for event in events[1:]:
        if upto is not None and step >= upto:
            break
        try:
            state.apply(typed(event))
        except Exception as exc:
            why = said("audit.step_no_fold", step=step + 1, kind=kind_of(event), error=repr(exc))
            return Folded(state, step, why)
        step += 1
    return Folded(state, step)
