"""The answer of ``GET /deals/{id}/moves``, the move menu (docs/api.md)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from pydantic import BaseModel, Field

from app.schemas import CommandBody, ExpectIn, command_body
from app.schemas_events import SeatNo
from app.schemas_views import Phase
from domain.menu import Menu


class MenuMeld(BaseModel):
    """One of the side's melds (public, R-VIEW-2)."""

    rank: str = Field(description="A, 4..K, W (wild cards) or 3 (black threes)")
    size: int
    naturals: int
    wilds: int
    closed: bool = Field(description="complete at the entry's cap: it takes no more cards")
    canasta: bool


class GoOut(BaseModel):
    allowed: bool = Field(description="the seat may go out in this turn (with this command)")
    lacks: list[str] = Field(
        description="why not, in the rules' order: not_your_turn, partner_said_no, "
        "needs_canasta, ponytail_face_down, needs_natural_canasta, needs_mixed_canasta, "
        "needs_natural_sevens_canasta, needs_wild_canasta (docs/api.md)"
    )


class WildLimitOut(BaseModel):
    """A wild card may join a meld of one of ``ranks`` only when the meld, with the cards
    added, holds ``naturals`` naturals or more (null: never)."""

    rule: str = Field(description="the rule id a command breaking it is refused with")
    ranks: list[str] = Field(description="the natural ranks it holds for")
    naturals: int | None = Field(description="the naturals the meld needs; null: no wild card")
    key: str = Field(description="the refusal's key (docs/api.md, Errors), param rank")
    message: str = Field(description="the refusal's message (English), without the rank")


class MeldLimitsOut(BaseModel):
    """What a meld of the requester's side may hold now (the rules' own limits, docs/api.md)."""

    min_cards: int = Field(description="cards a new meld needs")
    max_cards: int | None = Field(description="complete at this size (null: no cap)")
    min_naturals: int = Field(description="natural cards a meld needs")
    max_wilds: int = Field(description="wild cards a meld may hold")
    wilds_outnumbered: bool = Field(description="naturals must outnumber wild cards")
    wild_melds: bool = Field(description="wild cards alone may form a meld (rank W)")
    size_rule: str = Field(description="the rule id refusing too few or too many cards")
    wilds_rule: str = Field(description="the rule id refusing too few naturals or many wilds")
    ratio_rule: str = Field(description="the rule id refusing wilds not outnumbered")
    wild_meld_rule: str = Field(description="the rule id refusing a wild-card meld's size")
    wild_limits: list[WildLimitOut] = Field(
        description="further limits on adding wild cards, in the order the rules check them"
    )


class MovesOut(BaseModel):
    """The requester's legal moves now, and what he needs to compose others."""

    seat: SeatNo = Field(description="the requester's room seat")
    step: int = Field(description="the deal's step (event position) the menu was made at")
    phase: Phase
    expect: ExpectIn = Field(description="send it back as is: POST /deals/{id}/commands' expect")
    next_seq: int = Field(description="the requester's next sequence number at this table")
    moves: list[CommandBody] = Field(
        description="complete command bodies, each accepted as it is now (empty: not your move)"
    )
    hand_by_rank: dict[str, list[str]] = Field(description="the requester's cards by rank")
    melds: list[MenuMeld] = Field(description="the requester's side's melds, in laying order")
    initial_minimum_left: int = Field(
        description="the count the side's initial meld must still reach (0 once it has melded)"
    )
    go_out: GoOut
    meld_limits: MeldLimitsOut = Field(
        description="what a meld of the side may hold now; a command now is the side's "
        "initial meld when initial_minimum_left is above 0"
    )


def moves_out(
    menu: Menu, *, expect: dict[str, Any], step: int, phase: str, next_seq: int
) -> MovesOut:
    """The menu as the route answers it; each move is ``command_body`` of the command."""

    return MovesOut.model_validate(
        {
            "seat": menu.seat,
            "step": step,
            "phase": phase,
            "expect": expect,
            "next_seq": next_seq,
            "moves": [command_body(c) for c in menu.moves],
            "hand_by_rank": {rank: list(cards) for rank, cards in menu.hand_by_rank.items()},
            "melds": [vars(m) for m in menu.melds],
            "initial_minimum_left": menu.initial_minimum_left,
            "go_out": {"allowed": menu.go_out.allowed, "lacks": list(menu.go_out.lacks)},
            "meld_limits": asdict(menu.meld_limits),
        }
    )
