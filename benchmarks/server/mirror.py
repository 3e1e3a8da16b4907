"""The load generator's mirror of each deal, moved on by the engine's own rules."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from app.application import CanastaApp
from app.settings import Settings, eventsourcing_env
from domain import commands as c
from domain import rules
from domain.deal import Deal


class Mirror:
    """The load generator's copy of one deal's whole state (every hand, the stock), moved on
    by the engine's own rules: per accepted command, ``rules.decide`` once and its events
    folded into the state with ``DealState.apply``, as the ``Deal`` aggregate folds them.
    The aggregate's bookkeeping (the hash chain, timestamps, a second ``decide`` in
    ``execute``) is left out: the load generator has no use for it, and it cost a third of
    the mirror's CPU, on the cores the server shares."""

    __slots__ = ("state", "version")

    def __init__(self, deal: Deal) -> None:
        self.state = deal.state
        self.version = deal.version

    def execute(self, seat: int, command: c.Command) -> list[Any]:
        """Apply an accepted command; its events, as ``event_view`` reads stored ones."""
        new = []
        for event in rules.decide(self.state, seat, command):
            self.state.apply(event)
            self.version += 1
            new.append(mirrored_event(event.kind, self.version, event.data()))
        return new


_EVENT_TYPES: dict[str, type] = {}


def mirrored_event(kind: str, version: int, data: dict[str, Any]) -> Any:
    """An object that ``event_view`` reads as the stored event: its class is named
    ``kind``, its attributes are the event's data and ``originator_version``."""
    cls = _EVENT_TYPES.get(kind)
    if cls is None:
        cls = _EVENT_TYPES[kind] = type(kind, (), {})
    event = cls()
    event.__dict__.update(data)
    event.originator_version = version
    return event


class Reader:
    """The load generator's only window into the store: a cold application, reads only,
    used once per deal to load the mirror."""

    def __init__(self, url: str, pool_size: int) -> None:
        settings = Settings(
            database_url=url, aggregate_cache_maxsize=0, postgres_pool_size=pool_size
        )
        self.app = CanastaApp(env=eventsourcing_env(settings))

    def deal(self, deal_id: UUID) -> Deal:
        deal = self.app.get_deal(deal_id)
        deal.collect_events()
        return deal

    def close(self) -> None:
        self.app.close()
