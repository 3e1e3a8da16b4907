"""Absent players' requests and answers (docs/tables.md): who plays each seat, a leave, a
seat given, the missed turns limit."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from app.schemas import Integral, Name, Strict
from app.schemas_events import SeatNo, Shown
from domain.table import MAX_MISSED_TURNS_LIMIT

Reason = Literal["left", "missed_turns", "taken_back", "given"]


class SeatPlay(Shown):
    """Who plays a room seat now."""

    player: str | None = Field(description="who plays the seat now (a bot's name while away)")
    bot: str | None = Field(description="the level of the bot playing it, null for a person")
    away: bool = Field(description="the seat's player is away: a bot plays it for him")
    reason: Reason | None = Field(
        description="the last change of who plays it during the game, null if none"
    )
    since: str | None = Field(description="when that change was recorded (UTC, ISO 8601)")


class LeaveOut(Shown):
    seat: SeatNo
    played_by: str | None = Field(
        description="the bot playing the seat while you are away (null: the game had not "
        "started, the seat is free again)"
    )


class GiveIn(Strict):
    player: Name = Field(description="the registered player who plays the seat from now on")


class MissedTurnsIn(Strict):
    limit: Annotated[int, Field(strict=True, ge=0, le=MAX_MISSED_TURNS_LIMIT), Integral] = Field(
        description="turns missed in a row after which the bot takes the seat over (0: never)"
    )
