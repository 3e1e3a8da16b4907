"""The events of a deal and of a table as the API shows them: one model per event kind.

A deal's events reach clients in three ways, and each has its own union, discriminated by
``kind`` (the event's name):

- ``DealEventView``: an event as a player or a spectator may see it
  (``projections.visibility.event_view``), in ``GET /deals/{id}/events``, in the answer of a
  command and as the ``data`` of ``GET /deals/{id}/stream``. Secret kinds (the shuffle's seed,
  a stacked deck) are never shown; a few fields are there only for the player entitled to
  them (his own dealt, drawn and picked-up cards: ``cards``).
- ``DealEventRecord`` (``app.schemas_records``): an event with everything the store keeps
  (the auditor's view: every field, the hash-chain link ``chain`` and the time ``at`` it was
  recorded), in the audit routes.
- ``TableEventView``: a table's events (``GET /tables/{id}/stream``), all public.

The field names and their presence follow ``event_view`` and the stored event classes
(``domain.events``) exactly: ``tests/api/test_typed_views.py`` validates every answer of whole
deals of every entry against the schemas the served OpenAPI document holds.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

# --- the values events hold ------------------------------------------------------------------

Step = Annotated[
    int,
    Field(
        ge=1,
        description="the event's step: its version in its deal (or, for a table's event, its table)",
    ),
]
SeatNo = Annotated[int, Field(ge=0, le=5, description="a room seat")]
Card = Annotated[
    str,
    Field(
        pattern=r"^(?:(?:A|[2-9]|10|J|Q|K)[SHDC]|BJ|LJ)/[1-6]$",
        description="a physical card in full notation (R-CARD-1), e.g. QH/2 or BJ/1",
    ),
]
Side = Annotated[str, Field(pattern=r"^[ABC]$", description="a side (team): A, B or C")]
SeatKey = Annotated[str, Field(pattern=r"^[0-5]$", description="a room seat, as a JSON key")]
MeldRank = Annotated[
    str,
    Field(
        pattern=r"^(?:A|K|Q|J|10|[3-9]|W)$",
        description="a meld's rank: a natural rank, W (wild cards) or 3 (black threes)",
    ),
]
Entry = Literal["classic", "extra_six", "modern_american", "ponytail"]
Count = Annotated[int, Field(ge=0)]


class Shown(BaseModel):
    """An answer's object: exactly the fields listed, no others."""

    model_config = ConfigDict(extra="forbid")


class Breakdown(BaseModel):
    """One side's score for one deal (R-SCORE-1): ``total`` is the sum of the nine parts;
    the canasta counts say how many of each kind the side made. A part the domain adds later
    appears as an extra integer field."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, int]

    melds: int
    canasta_bonus: int
    going_out: int
    concealed: int
    red_threes: int
    hands: int
    penalties: int
    ponytails: int
    cut_bonus: int
    natural_canastas: Count
    mixed_canastas: Count
    wild_canastas: Count
    special_canastas: Count
    total: int


# --- a deal's events as players and spectators see them --------------------------------------


class Stepped(Shown):
    """What every event shows: its step (and, in each model, its ``kind``)."""

    step: Step


class EventBase(Stepped):
    """A deal's event on a deal's stream or in a deal's events: at a table with a turn clock,
    with the deadline after it too (a table's events and the audit's records have none)."""

    deadline: datetime | None = Field(
        None,
        description="deal streams at a table with a turn clock only: when the seat to act "
        "after this event runs out of time (null: nobody to act, or his turn has timed out)",
    )


class StartedView(EventBase):
    """The deal begins: its seating and the public commitment to the seed (R-DEAL-3)."""

    kind: Literal["Started"]
    number: Annotated[int, Field(ge=1)]
    variant: Entry
    options: dict[str, bool]
    order: list[SeatNo] = Field(description="the seats that play this deal, clockwise")
    side_of: list[Side] = Field(description="each room seat's side")
    dealer: SeatNo
    cutter: SeatNo
    scores_before: dict[Side, int]
    commitment: str
    player_ids: list[str] | None = Field(
        None,
        description="who plays each room seat from the deal's start (a bot's name for a seat "
        'played for its absent player, docs/tables.md; "" for a seat nobody sits in)',
    )


class DeckCutView(EventBase):
    kind: Literal["DeckCut"]
    seat: SeatNo
    n: Annotated[int, Field(ge=1)]


class CardsDealtView(EventBase):
    """The deal's cards: how many each seat got; ``cards`` (his own, in the order dealt)
    only in a seated player's view (R-VIEW-1)."""

    kind: Literal["CardsDealt"]
    counts: dict[SeatKey, Count]
    cards: list[Card] = Field(
        default_factory=list, description="present only for a seated player: his own cards"
    )


class PonytailsDealtView(EventBase):
    """Face-down ponytails (ponytail): counts only, nobody sees the cards."""

    kind: Literal["PonytailsDealt"]
    counts: dict[SeatKey, Count]


class PonytailPickedUpView(EventBase):
    kind: Literal["PonytailPickedUp"]
    seat: SeatNo
    count: Count
    cards: list[Card] = Field(
        default_factory=list, description="present only for the player who picked them up"
    )


class CardsDrawnView(EventBase):
    """Cards drawn from the stock; ``replacement`` when they replace a red three."""

    kind: Literal["CardsDrawn"]
    seat: SeatNo
    count: Count
    replacement: bool
    cards: list[Card] = Field(
        default_factory=list, description="present only for the player who drew (R-VIEW-3)"
    )


class RedThreeLaidView(EventBase):
    kind: Literal["RedThreeLaid"]
    seat: SeatNo
    card: Card


class CardTurnedUpView(EventBase):
    kind: Literal["CardTurnedUp"]
    card: Card
    crosswise: bool


class PlayStartedView(EventBase):
    kind: Literal["PlayStarted"]
    seat: SeatNo


class PartnerAskedView(EventBase):
    kind: Literal["PartnerAsked"]
    seat: SeatNo
    partner: SeatNo


class PartnerAnsweredView(EventBase):
    kind: Literal["PartnerAnswered"]
    seat: SeatNo
    asker: SeatNo
    yes: bool


class PileTakenView(EventBase):
    """The pile taken: its top card and size (the other cards are not listed, R-VIEW-2)."""

    kind: Literal["PileTaken"]
    seat: SeatNo
    top: Card
    size: Annotated[int, Field(ge=1)]


class MeldLaidView(EventBase):
    kind: Literal["MeldLaid"]
    seat: SeatNo
    side: Side
    rank: MeldRank
    cards: list[Card]


class MeldExtendedView(EventBase):
    """Cards added to the side's meld number ``index`` (0 first) of that rank."""

    kind: Literal["MeldExtended"]
    seat: SeatNo
    side: Side
    rank: MeldRank
    index: Count
    cards: list[Card]


class CardDiscardedView(EventBase):
    kind: Literal["CardDiscarded"]
    seat: SeatNo
    card: Card


class WentOutView(EventBase):
    kind: Literal["WentOut"]
    seat: SeatNo
    concealed: bool


class PileDeclinedView(EventBase):
    kind: Literal["PileDeclined"]
    seat: SeatNo


class DealScoredView(EventBase):
    kind: Literal["DealScored"]
    reason: str = Field(description="how the deal ended (went_out, pile_declined, ...)")
    scores: dict[Side, Breakdown]


class DealAbandonedView(EventBase):
    kind: Literal["DealAbandoned"]
    reason: str


SeatChange = Literal["left", "missed_turns", "taken_back", "given"]


class SeatPlayerChangedView(EventBase):
    """Who plays a seat from now on (docs/tables.md, absent players)."""

    kind: Literal["SeatPlayerChanged"]
    seat: SeatNo
    player: str = Field(description="who plays it now (a bot's name while its player is away)")
    reason: SeatChange


class TurnTimedOutView(EventBase):
    """The turn clock ran out for ``seat``; ``on_step``: the step the timeout was decided on
    (the one before this event): the basic bot plays the rest of that turn (docs/tables.md,
    "Turn clock")."""

    kind: Literal["TurnTimedOut"]
    seat: SeatNo
    on_step: Step


class TurnClockRestartedView(EventBase):
    """The server was out of service while ``seat``'s turn ran: its clock starts again, in
    full, from the end of the outage (docs/tables.md, "Turn clock"). The deadline is then
    the event's time (or ``up`` if later) plus the table's ``turn_seconds``."""

    kind: Literal["TurnClockRestarted"]
    seat: SeatNo
    down: datetime | None = Field(
        description="the server's last sign of life before the outage (null: not known)"
    )
    up: datetime = Field(description="when the server came back")


_DealEventView = Annotated[
    StartedView
    | DeckCutView
    | CardsDealtView
    | PonytailsDealtView
    | PonytailPickedUpView
    | CardsDrawnView
    | RedThreeLaidView
    | CardTurnedUpView
    | PlayStartedView
    | PartnerAskedView
    | PartnerAnsweredView
    | PileTakenView
    | MeldLaidView
    | MeldExtendedView
    | CardDiscardedView
    | WentOutView
    | PileDeclinedView
    | DealScoredView
    | DealAbandonedView
    | SeatPlayerChangedView
    | TurnTimedOutView
    | TurnClockRestartedView,
    Field(discriminator="kind"),
]


class DealEventView(RootModel[_DealEventView]):
    """One event of a deal as a player or a spectator may see it, by ``kind``."""


# --- a table's events (GET /tables/{id}/stream) ----------------------------------------------


class TableCreated(Stepped):
    kind: Literal["Created"]
    host: str
    entry: Entry
    players: Annotated[int, Field(ge=2, le=6)]
    options: dict[str, bool]
    target: int
    private: bool = Field(False, description="unlisted, joined with an invite code")
    spectators: bool = Field(True, description="people without a seat may watch")
    rematch_of: str | None = Field(None, description="the table this one is the rematch of")
    turn_seconds: int | None = Field(None, description="the turn clock, in seconds; null: none")


class TablePlayerSeated(Stepped):
    kind: Literal["PlayerSeated"]
    seat: SeatNo
    player: str


class TableTeamsChosen(Stepped):
    kind: Literal["TeamsChosen"]
    sides: dict[Side, list[SeatNo]]


class TableGameStarted(Stepped):
    kind: Literal["GameStarted"]
    sides: dict[Side, list[SeatNo]]
    totals: dict[Side, int]


class TableDealOpened(Stepped):
    kind: Literal["DealOpened"]
    deal_id: str = Field(description="the new deal's id: watch GET /deals/{deal_id}/stream")
    number: Annotated[int, Field(ge=1)]
    dealer: SeatNo
    order: list[SeatNo]
    by: str | None = Field(
        None,
        description="who opened it: the host, or while he is away a player or the bot playing "
        "his seat (docs/tables.md); null for deals recorded before this was kept",
    )


class TableDealRecorded(Stepped):
    kind: Literal["DealRecorded"]
    deal_id: str
    scores: dict[Side, int] = Field(description="the deal's total per side")
    totals: dict[Side, int] = Field(description="each side's total after it")


class TableGameEnded(Stepped):
    kind: Literal["GameEnded"]
    winners: list[Side]


class TableGameStopped(Stepped):
    kind: Literal["GameStopped"]
    completed_deals: Count


class TableInviteRotated(Stepped):
    """The host replaced the invite code of his private table (the code is never shown)."""

    kind: Literal["InviteRotated"]


class TableTurnClockSet(Stepped):
    kind: Literal["TurnClockSet"]
    turn_seconds: int | None = Field(description="the turn clock, in seconds; null: none")


class TableSpectatorsSet(Stepped):
    kind: Literal["SpectatorsSet"]
    allowed: bool


class TableRematchOpened(Stepped):
    kind: Literal["RematchOpened"]
    table_id: str = Field(description="the rematch's table: GET /tables/{table_id}")


class TableMissedTurnsLimitSet(Stepped):
    kind: Literal["MissedTurnsLimitSet"]
    limit: Count


class TableSeatLeft(Stepped):
    kind: Literal["SeatLeft"]
    seat: SeatNo
    player: str
    freed: bool = Field(description="the game had not started: the seat is free again")


class TableSeatTakenOver(Stepped):
    kind: Literal["SeatTakenOver"]
    seat: SeatNo
    player: str = Field(description="the seat's player, away")
    by: str = Field(description="the bot playing the seat for him")
    reason: Literal["left", "missed_turns"]
    since: str


class TableSeatTakenBack(Stepped):
    kind: Literal["SeatTakenBack"]
    seat: SeatNo
    player: str
    since: str


class TableSeatGiven(Stepped):
    kind: Literal["SeatGiven"]
    seat: SeatNo
    player: str = Field(description="who sits and plays there from now on")
    previous: str = Field(description="the player who left it")
    since: str


_TableEventView = Annotated[
    TableCreated
    | TablePlayerSeated
    | TableTeamsChosen
    | TableGameStarted
    | TableDealOpened
    | TableDealRecorded
    | TableGameEnded
    | TableGameStopped
    | TableInviteRotated
    | TableSpectatorsSet
    | TableTurnClockSet
    | TableRematchOpened
    | TableMissedTurnsLimitSet
    | TableSeatLeft
    | TableSeatTakenOver
    | TableSeatTakenBack
    | TableSeatGiven,
    Field(discriminator="kind"),
]


class TableEventView(RootModel[_TableEventView]):
    """One event of a table, by ``kind`` (all public)."""


class StreamEnd(Shown):
    """The ``data`` of a stream's last message, ``event: end``: the stream's final step."""

    step: Annotated[int, Field(ge=0)]


class StreamHeartbeat(Shown):
    """The ``data`` of a heartbeat message, ``event: heartbeat`` (only with
    ``?heartbeat=event``): the server's heartbeat interval, the longest a stream stays silent
    before it sends one (a client that hears nothing for much longer may take the connection
    for dead and resume)."""

    seconds: Annotated[float, Field(gt=0)]
