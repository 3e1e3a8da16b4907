"""A throwaway aggregate and application used to exercise the persistence setup."""

from __future__ import annotations

from uuid import UUID

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event


class Counter(Aggregate):
    @event("Created")
    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0

    @event("Incremented")
    def increment(self, by: int) -> None:
        self.count += by


class CanastaProbe(Application[UUID]):
    """Stores its events where the real application (``name = "canasta"``) does."""

    name = "canasta"
    is_snapshotting_enabled = True

    def create_counter(self, name: str, increments: int = 0) -> UUID:
        counter = Counter(name)
        for _ in range(increments):
            counter.increment(1)
        self.save(counter)
        return counter.id

    def get_counter(self, counter_id: UUID) -> Counter:
        counter: object = self.repository.get(counter_id)
        assert isinstance(counter, Counter)
        return counter
