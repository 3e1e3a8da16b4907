"""The events of a deal as the rules emit them and the fold reads them: one typed class each.

``domain.rules.decide`` returns these; ``DealState.apply`` folds them (a ``match`` on the
class, checked exhaustive by mypy). They are plain slotted dataclasses, cheap to build on the
hot path. What the event store keeps are the library's event classes of the same names in
``domain.events``, whose topics and fields never change: ``Deal.record`` turns each of these
into its stored twin (``data()`` gives exactly the stored fields), and a stored event folds
by turning back into one of these (``from_data``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

#: A card dealt: [room seat, card].
Dealt = tuple[int, str]
#: A side's score breakdown (``domain.scoring.PARTS`` and the canasta counts, ``total``).
Breakdown = dict[str, int]


@dataclass(frozen=True, slots=True)
class _Base:
    FIELDS: ClassVar[tuple[str, ...]] = ()

    @property
    def kind(self) -> str:
        return type(self).__name__

    def data(self) -> dict[str, Any]:
        """The event's fields as stored (and hashed into the chain)."""
        return {name: getattr(self, name) for name in self.FIELDS}


@dataclass(frozen=True, slots=True)
class DeckShuffled(_Base):
    seed: str  # 256-bit secret seed, hex (R-DEAL-3); never shown (R-VIEW-4)


@dataclass(frozen=True, slots=True)
class DeckStacked(_Base):
    order: list[str]  # a prepared deck, top first: tests and scenarios only


@dataclass(frozen=True, slots=True)
class DeckCut(_Base):
    seat: int
    n: int


@dataclass(frozen=True, slots=True)
class CardsDealt(_Base):
    cards: list[Dealt]  # in the order dealt, one card at a time


@dataclass(frozen=True, slots=True)
class PonytailsDealt(_Base):
    cards: list[Dealt]  # face-down ponytails (ponytail), nobody sees them


@dataclass(frozen=True, slots=True)
class PonytailPickedUp(_Base):
    seat: int
    cards: list[str]


@dataclass(frozen=True, slots=True)
class CardsDrawn(_Base):
    seat: int
    cards: list[str]
    replacement: bool  # replacing a red three (R-DEAL-6, R-DRAW-2)


@dataclass(frozen=True, slots=True)
class RedThreeLaid(_Base):
    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class CardTurnedUp(_Base):
    card: str
    crosswise: bool


@dataclass(frozen=True, slots=True)
class PlayStarted(_Base):
    seat: int


@dataclass(frozen=True, slots=True)
class PartnerAsked(_Base):
    seat: int
    partner: int


@dataclass(frozen=True, slots=True)
class PartnerAnswered(_Base):
    seat: int
    asker: int
    yes: bool


@dataclass(frozen=True, slots=True)
class PileTaken(_Base):
    seat: int
    top: str
    size: int
    cards: list[str]


@dataclass(frozen=True, slots=True)
class MeldLaid(_Base):
    seat: int
    side: str
    rank: str
    cards: list[str]


@dataclass(frozen=True, slots=True)
class MeldExtended(_Base):
    seat: int
    side: str
    rank: str
    index: int
    cards: list[str]


@dataclass(frozen=True, slots=True)
class CardDiscarded(_Base):
    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class WentOut(_Base):
    seat: int
    concealed: bool


@dataclass(frozen=True, slots=True)
class PileDeclined(_Base):
    seat: int


@dataclass(frozen=True, slots=True)
class DealScored(_Base):
    reason: str
    scores: dict[str, Breakdown]


@dataclass(frozen=True, slots=True)
class DealAbandoned(_Base):
    reason: str


@dataclass(frozen=True, slots=True)
class SeatPlayerChanged(_Base):
    """Who plays a room seat from now on (docs/tables.md, absent players): the basic bot
    standing in for a player who left or missed turns, the player back, or the person the
    host gave the seat to. Not a command: the table records why."""

    seat: int
    player: str
    reason: str  # "left", "missed_turns", "taken_back" or "given"


@dataclass(frozen=True, slots=True)
class TurnTimedOut(_Base):
    """The turn clock ran out for ``seat``, the seat to act at deal step ``on_step`` (the
    step the timeout was decided on): the ``basic`` bot plays the rest of that seat's turn
    (docs/tables.md, "Turn clock")."""

    seat: int
    on_step: int


@dataclass(frozen=True, slots=True)
class TurnClockRestarted(_Base):
    """The server was out of service (no process answered players) while ``seat``'s turn
    ran: that seat's clock starts again, in full, from the end of the outage (docs/tables.md,
    "Turn clock"). ``down``: the last sign of life before the outage (ISO 8601, UTC; null
    when not known), ``up``: when the service came back. Not a command: the process that
    keeps the clocks records it; it changes nothing but where the turn's clock starts."""

    seat: int
    down: str | None
    up: str


DealEvent = (
    DeckShuffled
    | DeckStacked
    | DeckCut
    | CardsDealt
    | PonytailsDealt
    | PonytailPickedUp
    | CardsDrawn
    | RedThreeLaid
    | CardTurnedUp
    | PlayStarted
    | PartnerAsked
    | PartnerAnswered
    | PileTaken
    | MeldLaid
    | MeldExtended
    | CardDiscarded
    | WentOut
    | PileDeclined
    | DealScored
    | DealAbandoned
    | SeatPlayerChanged
    | TurnTimedOut
    | TurnClockRestarted
)

#: Every deal event class by its kind (its class name, which the stored event shares).
BY_KIND: dict[str, type[DealEvent]] = {
    cls.__name__: cls
    for cls in (
        DeckShuffled,
        DeckStacked,
        DeckCut,
        CardsDealt,
        PonytailsDealt,
        PonytailPickedUp,
        CardsDrawn,
        RedThreeLaid,
        CardTurnedUp,
        PlayStarted,
        PartnerAsked,
        PartnerAnswered,
        PileTaken,
        MeldLaid,
        MeldExtended,
        CardDiscarded,
        WentOut,
        PileDeclined,
        DealScored,
        DealAbandoned,
        SeatPlayerChanged,
        TurnTimedOut,
        TurnClockRestarted,
    )
}
for _cls in BY_KIND.values():
    _cls.FIELDS = tuple(f.name for f in fields(_cls))


def from_data(kind: str, data: Mapping[str, Any]) -> DealEvent:
    """The typed event of a stored one (its kind and fields); KeyError for an unknown kind,
    TypeError for missing or unexpected fields."""
    cls = BY_KIND[kind]
    return cls(**{name: data[name] for name in cls.FIELDS if name in data})
