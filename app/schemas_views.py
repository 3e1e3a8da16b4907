"""The answers of the read routes as declared in the OpenAPI document: the deal as a player,
a spectator or an auditor sees it, the table, the audit's history and reports, and the small
answers (``/health``, a seat taken).

A deal view comes in two shapes, so that each is exact:

- ``DealView`` (``GET /deals/{id}``, ``GET /deals/{id}/replay``): the public table and the
  requester's own ``seat`` and ``hand`` (both null for a spectator, R-VIEW-1/2);
- ``AuditedDeal`` (the audit routes): the public table with every hand, the stock and the
  pile's cards (R-VIEW-4).

The request bodies and the command answer are in ``app.schemas``; the events in
``app.schemas_events`` and ``app.schemas_records``; the read models' answers (lobby, scores,
logs) in ``app.routes.views``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from app.schemas import ParamValue
from app.schemas_events import (
    Breakdown,
    Card,
    Count,
    Entry,
    MeldRank,
    SeatKey,
    SeatNo,
    Shown,
    Side,
)
from app.schemas_records import DealEventRecord
from app.schemas_seats import SeatPlay

Phase = Literal["shuffle", "cut", "dealing", "draw", "play", "answer", "over"]


# --- a deal -----------------------------------------------------------------------------------


class Pile(Shown):
    top: Card | None = Field(description="the top card, null when the pile is empty")
    size: Count
    crosswise: list[Card] = Field(description="the freezing cards lying in the pile")
    frozen: bool = Field(description="a freezing card lies in the pile (R-PILE-2)")
    always_frozen: bool = Field(description="the option: the pile is always frozen")


class Meld(Shown):
    rank: MeldRank
    cards: list[Card]
    closed: bool = Field(default=False, description="present (true) once a capped meld is complete")


class Question(Shown):
    """A player asked his partner whether he may go out (R-OUT-3)."""

    asker: SeatNo | None
    partner: SeatNo | None
    answer: bool | None = Field(description="null until the partner answers")


class PublicDeal(Shown):
    """What everybody may see of a deal (R-VIEW-2)."""

    number: Annotated[int, Field(ge=1)]
    variant: Entry
    options: dict[str, bool]
    phase: Phase
    turn: SeatNo | None = Field(description="the seat to act; null once the deal is over")
    dealer: SeatNo
    cutter: SeatNo
    order: list[SeatNo] = Field(description="the seats that play this deal, clockwise")
    sides: dict[SeatKey, Side] = Field(description="each playing seat's side")
    sitting_out: list[SeatNo] = Field(description="room seats sitting this deal out")
    commitment: str = Field(description="the public commitment to the seed (R-DEAL-3)")
    stock_size: Count | None = Field(description="null before the cut")
    pile: Pile
    hand_counts: dict[SeatKey, Count]
    ponytail_counts: dict[SeatKey, Count] = Field(
        description="cards in each ponytail still face down (ponytail)"
    )
    melds: dict[Side, list[Meld]]
    red_threes: dict[Side, list[Card]]
    opened: dict[Side, bool] = Field(description="whether each side has made its initial meld")
    question: Question | None
    went_out: SeatNo | None
    concealed: bool | None = Field(description="whether the player went out concealed")
    end_reason: str | None
    scores: dict[Side, Breakdown] | None = Field(description="per side, once the deal is scored")
    timed_out: list[SeatNo] = Field(
        [], description="seats whose turn clock ran out in this turn: the basic bot plays it"
    )


class _Located(BaseModel):
    id: UUID = Field(description="the deal's id")
    table: UUID = Field(description="its table's id")
    step: Annotated[int, Field(ge=1)] = Field(description="the deal's step (version) shown")
    deadline: datetime | None = Field(
        None,
        description="when the seat to act runs out of time (the table's turn clock, from "
        "the recorded time of the event that made it his turn), at a table with a clock "
        "only; null: nobody to act, or his turn has timed out",
    )


class DealView(PublicDeal, _Located):
    """The deal as the requester may see it: a seated player's own seat and hand; null for
    a spectator (and for a player sitting this deal out, R-SEAT-4)."""

    seat: SeatNo | None
    hand: list[Card] | None = Field(description="the requester's hand, sorted")


class AuditedDeal(PublicDeal):
    """The whole deal, hidden cards included (auditors only, R-VIEW-4)."""

    hands: dict[SeatKey, list[Card]]
    stock: list[Card] = Field(description="the stock, top first")
    pile_cards: list[Card] = Field(description="the pile, bottom first")


class AuditReplay(AuditedDeal, _Located):
    """The whole deal at ``step``, and the event recorded at that step."""

    event: DealEventRecord


# --- the audit ----------------------------------------------------------------------------------


class StoredEventDump(BaseModel):
    """A stored event as the store holds it, whatever it holds (a forged one may hold
    anything): its step, its kind and its fields."""

    model_config = ConfigDict(extra="allow")

    step: int
    kind: str


class SignedRecord(Shown):
    """The table's record of a deal, which the server signs (docs/api.md): with the table's
    and the deal's ids, the message is rebuilt from it and checked with the published key."""

    number: int = Field(description="the deal's place among the table's deals, from 1")
    final_link: str | None = Field(description="the deal's last hash-chain link")
    scores: dict[Side, int] | None
    totals: dict[Side, int] | None
    key_id: str | None = Field(description="the key that signed it (empty: unsigned)")
    signature: str | None = Field(description="the Ed25519 signature, base64 (empty: unsigned)")


class WordedOut(Shown):
    """A message of the audit by its key and params (domain/refusals.py; docs/api.md,
    "Errors"), for a client to say it in its reader's language; ``refusal``: the rules' own
    refusal it quotes (``audit.rules_refuse``), by its key and params too."""

    key: str
    params: dict[str, ParamValue] = Field(
        description="the key's parameters: numbers, words, card codes, steps, lists of them"
    )
    refusal: WordedOut | None = None


class AuditReportOut(Shown):
    """The audit of one deal's stored history (R-HIST-1, R-DEAL-3)."""

    deal: str
    ok: bool = Field(description="chain, commitment and rules check; signature not failing")
    events: Count = Field(description="stored events read")
    chain_ok: bool
    first_broken_step: int | None
    commitment_ok: bool
    commitment_message: str | None
    rules_ok: bool
    first_mismatch_step: int | None
    message: str | None = Field(description="why the rules disagree with the store")
    expected: StoredEventDump | None = Field(description="what the rules record there")
    stored: StoredEventDump | None = Field(description="what the store holds there")
    command: str | None = Field(description="the rebuilt command, as seat N: Command(...)")
    commands: Count = Field(description="commands rebuilt and re-decided")
    stacked: bool = Field(description="a prepared deck (tests only) instead of a shuffle")
    complete: bool = Field(description="the stored history ends the deal")
    end_reason: str | None
    final_scores: dict[Side, int] | None
    signature: Literal[
        "valid", "forged", "unknown_key", "unsigned", "not_recorded", "unchecked"
    ] = Field(description="the server's signature of the table's record of the deal (docs/api.md)")
    signature_key_id: str | None = Field(description="the key that signed it")
    signature_message: str | None = Field(description="why the signature is not valid")
    signed_record: SignedRecord | None = Field(
        description="the table's record of the deal as stored, which the signature covers"
    )
    worded: dict[str, WordedOut] = Field(
        default_factory=dict,
        description="message, commitment_message, signature_message by key and params",
    )


class DealAudit(Shown):
    """A deal's complete history and its audit. When not even the first stored event can be
    read, only ``deal``, ``events`` (empty), ``fold_error``, ``unreadable_step`` and
    ``audit`` are given. Events are shown as the store holds them: at a step the audit
    reports as tampered with, one may differ from its schema."""

    deal: UUID
    table: str | None = None
    number: int | None = None
    step: int | None = Field(default=None, description="the last stored step")
    commitment: str | None = None
    seed: str | None = Field(default=None, description="the shuffle's seed, hex")
    stacked_deck: list[Card] | None = None
    deck: list[Card] | None = Field(default=None, description="the deck as shuffled, top first")
    stock_after_cut: list[Card] | None = Field(default=None, description="top first")
    dealt: dict[SeatKey, list[Card]] | None = None
    hands: dict[SeatKey, list[Card]] | None = Field(
        default=None, description="every hand at step folded_to"
    )
    final: AuditedDeal | None = Field(default=None, description="the deal at step folded_to")
    folded_to: int | None = Field(
        default=None,
        description="the step the stored events fold to (the last, unless one does not fold)",
    )
    fold_error: str | None = Field(description="why folding stopped early, if it did")
    worded: dict[str, WordedOut] = Field(
        default_factory=dict, description="fold_error by key and params"
    )
    events: list[DealEventRecord]
    unreadable_step: int | None = Field(
        default=None, description="present when a stored record cannot even be decoded"
    )
    audit: AuditReportOut


class TableAudit(Shown):
    """The audit of every deal a table opened, and the table's own checks."""

    table: str
    ok: bool
    table_ok: bool = Field(description="recorded deal scores and totals agree with the deals")
    problems: list[str]
    deals: list[AuditReportOut]


# --- a table ----------------------------------------------------------------------------------


class TableView(Shown):
    """A table; everything about it is public."""

    id: UUID
    entry: Entry
    players: Annotated[int, Field(ge=2, le=6)]
    options: dict[str, bool]
    target: int
    max_deals: Annotated[int, Field(ge=1)] | None = Field(
        description="the game also ends after this many deals, short of the target (ponytail: "
        "4, R-PT-GAME-1); null where only the target ends it"
    )
    host: str
    seats: list[str | None] = Field(description="the player in each room seat, null if free")
    bots: list[str | None] = Field(
        description="per room seat: the level of the bot sitting there, null for a person or "
        "a free seat"
    )
    sides: dict[Side, list[SeatNo]] | None = Field(description="room seats per side, once set")
    status: Literal["open", "playing", "finished", "stopped"]
    totals: dict[Side, int] = Field(description="each side's total (empty before the start)")
    deals: list[UUID] = Field(description="the deals opened, in order")
    current_deal: UUID | None = Field(description="the last deal opened")
    deal_scores: list[dict[Side, int]] = Field(description="per completed deal, per side")
    winners: list[Side] | None = Field(description="the winning sides once finished")
    version: Annotated[int, Field(ge=1)] = Field(description="the table's step")
    private: bool = Field(description="unlisted; a seat needs the invite code")
    spectators: bool = Field(description="people without a seat may watch")
    rematch_of: UUID | None = Field(description="the table this one is the rematch of")
    rematch: UUID | None = Field(description="this table's rematch, once opened")
    playing: list[SeatPlay] = Field(description="per room seat: who plays it now (docs/tables.md)")
    missed_turns_limit: int = Field(
        description="turns missed in a row after which the basic bot takes a seat over"
    )
    turn_seconds: int | None = Field(
        None, description="the turn clock: seconds each seat has to act; null: no clock"
    )
    deadline: datetime | None = Field(
        None,
        description="when the seat to act in the current deal runs out of time (GET "
        "/tables/{id}; null: no clock, nobody to act, or his turn already timed out)",
    )


class TableForYou(TableView):
    """``GET /tables/{id}``: the table, and the requester's place in its command sequence."""

    your_last_seq: Annotated[int, Field(ge=0)] | None = Field(
        description="the requester's last sequence number at this table (R-CMD-1): 0 before "
        "his first command, null without a token; his next command carries a greater one"
    )


class SeatTaken(Shown):
    seat: SeatNo


class NewTable(Shown):
    """``POST /tables``: the new table; a private table's invite code, shown this once."""

    id: UUID
    invite: str | None = Field(
        None,
        description="a private table's invite code (only its hash is kept): give it "
        "to the players you invite; POST /tables/{id}/invite replaces it",
    )


class InviteOut(Shown):
    invite: str = Field(description="the table's new invite code; the old one no longer works")


class RematchOut(Shown):
    """The rematch's table (the same one for every request: the first opened it)."""

    id: UUID


class Health(Shown):
    status: Literal["ok"]
