"""Events of a deal's stream, named in the past tense (R-HIST-1).

Each records results (the seed, the cut, the cards drawn), never a request, so that
replaying a stream folds it through ``DealState.apply`` without calling any random
source or clock. The class name is the event's kind; the fields are its data.

These are the classes the event store keeps (their topics, ``domain.events:<kind>``, and
their fields never change, so that every store ever written still loads). The rules emit
and the fold reads their typed twins of the same names in ``domain.deal_events``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from domain import deal_events


class DealEvent(Aggregate.Event):
    """Base class: folding a stored event folds its typed twin into the deal's state.

    ``chain`` links the event to its predecessor (``domain.chain``), for audits.
    """

    chain: str

    def typed(self) -> deal_events.DealEvent:
        """The typed event this stored one records."""
        twin = deal_events.BY_KIND[type(self).__name__]
        data = self.__dict__
        return twin(*[data[name] for name in twin.FIELDS])

    def apply(self, aggregate: Any) -> None:
        state = aggregate.state
        before = state.to_act
        state.apply(self.typed())
        aggregate.chain = self.chain
        # The turn clock's start (docs/tables.md, "Turn clock"): a new seat to act, or a new
        # player in the seat to act (absent players: the bot standing in, or the player back).
        changed = isinstance(self, SeatPlayerChanged) and self.seat == state.to_act
        if state.to_act != before or changed:
            aggregate.turn_since = self.timestamp.isoformat()
        elif isinstance(self, TurnClockRestarted):
            # The clock starts again from the outage's end: the event's time, or the end
            # it names if that is later (machines' clocks a little apart), so that a turn
            # restarted once for an outage is never restarted again for it.
            at = self.timestamp.isoformat()
            aggregate.turn_since = max(at, self.up, key=datetime.fromisoformat)


class DeckShuffled(DealEvent):
    seed: str  # 256-bit secret seed, hex (R-DEAL-3); never shown (R-VIEW-4)


class DeckStacked(DealEvent):
    order: list[str]  # a prepared deck, top first: tests and scenarios only


class DeckCut(DealEvent):
    seat: int
    n: int


class CardsDealt(DealEvent):
    cards: list[list[Any]]  # [seat, card] in the order dealt, one card at a time


class PonytailsDealt(DealEvent):
    cards: list[list[Any]]  # [seat, card]: face-down ponytails (ponytail), nobody sees them


class PonytailPickedUp(DealEvent):
    seat: int
    cards: list[str]


class CardsDrawn(DealEvent):
    seat: int
    cards: list[str]
    replacement: bool  # replacing a red three (R-DEAL-6, R-DRAW-2)


class RedThreeLaid(DealEvent):
    seat: int
    card: str


class CardTurnedUp(DealEvent):
    card: str
    crosswise: bool


class PlayStarted(DealEvent):
    seat: int


class PartnerAsked(DealEvent):
    seat: int
    partner: int


class PartnerAnswered(DealEvent):
    seat: int
    asker: int
    yes: bool


class PileTaken(DealEvent):
    seat: int
    top: str
    size: int
    cards: list[str]


class MeldLaid(DealEvent):
    seat: int
    side: str
    rank: str
    cards: list[str]


class MeldExtended(DealEvent):
    seat: int
    side: str
    rank: str
    index: int
    cards: list[str]


class CardDiscarded(DealEvent):
    seat: int
    card: str


class WentOut(DealEvent):
    seat: int
    concealed: bool


class PileDeclined(DealEvent):
    seat: int


class DealScored(DealEvent):
    reason: str
    scores: dict[str, dict[str, int]]


class DealAbandoned(DealEvent):
    reason: str


class SeatPlayerChanged(DealEvent):
    seat: int
    player: str
    reason: str


class TurnTimedOut(DealEvent):
    seat: int
    on_step: int  # the deal step the timeout was decided on


class TurnClockRestarted(DealEvent):
    seat: int  # the seat to act, whose clock starts again
    down: str | None  # the last sign of life before the outage (ISO 8601; null: not known)
    up: str  # when the service came back (ISO 8601)


#: Every stored deal event class by its kind: one for each typed twin in ``deal_events.BY_KIND``
#: (the list lives there only; a twin without its stored class fails here, at import).
EVENT_CLASSES: dict[str, type[DealEvent]] = {kind: globals()[kind] for kind in deal_events.BY_KIND}
