"""A deal's events with everything the store keeps, as the audit routes show them (auditors
only, R-VIEW-4): one model per event kind, every field of the stored event class
(``domain.events``, ``domain.deal.Deal.Started``), the hash-chain link ``chain`` and the time
``at`` it was recorded; ``DealEventRecord`` is their union by ``kind``. The views players and
spectators get are in ``app.schemas_events``."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, RootModel

from app.schemas_events import (
    Breakdown,
    Card,
    Count,
    Entry,
    MeldRank,
    SeatNo,
    Side,
    Stepped,
)


class _Record(Stepped):
    chain: str = Field(description="the hash-chain link of this event to its predecessor")
    at: datetime = Field(description="when the event was recorded (covered by the chain)")


class StartedRecord(_Record):
    kind: Literal["Started"]
    table_id: str
    number: Annotated[int, Field(ge=1)]
    variant: Entry
    decks: Annotated[int, Field(ge=1)]
    options: dict[str, bool]
    players: Annotated[int, Field(ge=2, le=6)]
    player_ids: list[str] = Field(description="the account in each room seat")
    order: list[SeatNo]
    side_of: list[Side]
    dealer: SeatNo
    cutter: SeatNo
    scores_before: dict[Side, int]
    commitment: str


class DeckShuffledRecord(_Record):
    kind: Literal["DeckShuffled"]
    seed: str = Field(description="the secret seed, hex (R-DEAL-3)")


class DeckStackedRecord(_Record):
    kind: Literal["DeckStacked"]
    order: list[Card] = Field(description="a prepared deck, top first (tests only)")


class DeckCutRecord(_Record):
    kind: Literal["DeckCut"]
    seat: SeatNo
    n: Annotated[int, Field(ge=1)]


#: A card dealt: [room seat, card].
Dealt = tuple[SeatNo, Card]


class CardsDealtRecord(_Record):
    kind: Literal["CardsDealt"]
    cards: list[Dealt] = Field(description="[seat, card] in the order dealt")


class PonytailsDealtRecord(_Record):
    kind: Literal["PonytailsDealt"]
    cards: list[Dealt] = Field(description="[seat, card] of the face-down ponytails")


class PonytailPickedUpRecord(_Record):
    kind: Literal["PonytailPickedUp"]
    seat: SeatNo
    cards: list[Card]


class CardsDrawnRecord(_Record):
    kind: Literal["CardsDrawn"]
    seat: SeatNo
    cards: list[Card]
    replacement: bool


class RedThreeLaidRecord(_Record):
    kind: Literal["RedThreeLaid"]
    seat: SeatNo
    card: Card


class CardTurnedUpRecord(_Record):
    kind: Literal["CardTurnedUp"]
    card: Card
    crosswise: bool


class PlayStartedRecord(_Record):
    kind: Literal["PlayStarted"]
    seat: SeatNo


class PartnerAskedRecord(_Record):
    kind: Literal["PartnerAsked"]
    seat: SeatNo
    partner: SeatNo


class PartnerAnsweredRecord(_Record):
    kind: Literal["PartnerAnswered"]
    seat: SeatNo
    asker: SeatNo
    yes: bool


class PileTakenRecord(_Record):
    kind: Literal["PileTaken"]
    seat: SeatNo
    top: Card
    size: Annotated[int, Field(ge=1)]
    cards: list[Card] = Field(description="every card of the pile taken, bottom first")


class MeldLaidRecord(_Record):
    kind: Literal["MeldLaid"]
    seat: SeatNo
    side: Side
    rank: MeldRank
    cards: list[Card]


class MeldExtendedRecord(_Record):
    kind: Literal["MeldExtended"]
    seat: SeatNo
    side: Side
    rank: MeldRank
    index: Count
    cards: list[Card]


class CardDiscardedRecord(_Record):
    kind: Literal["CardDiscarded"]
    seat: SeatNo
    card: Card


class WentOutRecord(_Record):
    kind: Literal["WentOut"]
    seat: SeatNo
    concealed: bool


class PileDeclinedRecord(_Record):
    kind: Literal["PileDeclined"]
    seat: SeatNo


class DealScoredRecord(_Record):
    kind: Literal["DealScored"]
    reason: str
    scores: dict[Side, Breakdown]


class DealAbandonedRecord(_Record):
    kind: Literal["DealAbandoned"]
    reason: str


class SeatPlayerChangedRecord(_Record):
    kind: Literal["SeatPlayerChanged"]
    seat: SeatNo
    player: str
    reason: str


class TurnTimedOutRecord(_Record):
    kind: Literal["TurnTimedOut"]
    seat: SeatNo
    on_step: int = Field(description="the step the timeout was decided on (docs/tables.md)")


class TurnClockRestartedRecord(_Record):
    kind: Literal["TurnClockRestarted"]
    seat: SeatNo
    down: datetime | None = Field(description="the last sign of life before the outage")
    up: datetime = Field(description="when the server came back (docs/tables.md)")


_DealEventRecord = Annotated[
    StartedRecord
    | DeckShuffledRecord
    | DeckStackedRecord
    | DeckCutRecord
    | CardsDealtRecord
    | PonytailsDealtRecord
    | PonytailPickedUpRecord
    | CardsDrawnRecord
    | RedThreeLaidRecord
    | CardTurnedUpRecord
    | PlayStartedRecord
    | PartnerAskedRecord
    | PartnerAnsweredRecord
    | PileTakenRecord
    | MeldLaidRecord
    | MeldExtendedRecord
    | CardDiscardedRecord
    | WentOutRecord
    | PileDeclinedRecord
    | DealScoredRecord
    | DealAbandonedRecord
    | SeatPlayerChangedRecord
    | TurnTimedOutRecord
    | TurnClockRestartedRecord,
    Field(discriminator="kind"),
]


class DealEventRecord(RootModel[_DealEventRecord]):
    """One stored event of a deal with all its fields, by ``kind`` (auditors only)."""
