"""Reading what the application stored, past its repository and snapshots."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from app.application import CanastaApp
from domain.deal import Deal


def stored_versions(app: CanastaApp, deal_id: UUID) -> list[int]:
    """The versions of the deal's stored events, in the order the store returns them."""
    return [e.originator_version for e in app.events.get(deal_id)]


def fold_stored_events(app: CanastaApp, deal_id: UUID) -> Deal:
    """Rebuild the deal by folding every stored event, without the repository or snapshots."""
    aggregate: Any = None
    event: Any
    for event in app.events.get(deal_id):
        aggregate = event.mutate(aggregate)
    assert isinstance(aggregate, Deal)
    return aggregate
