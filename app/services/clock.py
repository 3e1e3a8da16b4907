"""The turn clock on the command path (docs/tables.md, "Turn clock").

Who may send what, decided where ``CommandService`` decides every sequenced command:

- ``time_out`` is sent only by a seat's stand-in (``domain.clock.stand_in``: the name under
  which the bots process acts for a seat), never by a person: 403 ``timeout_not_allowed``,
  before anything is read or recorded;
- a stand-in's ``time_out`` is accepted once the seat's deadline has passed, at a table with a
  clock (409 ``clock_not_due`` otherwise); its other commands only while the seat's turn has
  timed out (403 ``R-CMD-2`` otherwise: the stand-in holds no seat);
- a person's command while his turn has timed out (the basic bot is playing the rest of it) is
  refused with 409 ``turn_timed_out``.

These checks come after the ``expect`` check, so that a late move and the timeout decided on
the same step race like any two commands: the second is refused as stale (R-CMD-1).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from domain.clock import deadline, stand_in_seat
from domain.commands import Command, TimeOut
from domain.deal import Deal
from domain.errors import Conflict, Forbidden

TIMEOUT_NOT_ALLOWED = "timeout_not_allowed"
TURN_TIMED_OUT = "turn_timed_out"
CLOCK_NOT_DUE = "clock_not_due"


def sender_seat(deal: Deal, player: str, command: Command | None) -> int:
    """The seat ``player`` sends for: his own, or the one he stands in for."""
    state = deal.state
    if player in state.player_ids:
        if isinstance(command, TimeOut):
            raise Forbidden(
                TIMEOUT_NOT_ALLOWED, "only the turn clock (the bots process) times a turn out"
            )
        return state.player_ids.index(player)
    seat = stand_in_seat(player, state)
    if seat is None:
        raise Forbidden("R-CMD-2", "you have no seat at this table")
    return seat


def check_clock(
    deal: Deal,
    player: str,
    seat: int,
    command: Command,
    turn_seconds: Callable[[], int | None],
    now: datetime | None = None,
) -> None:
    """The clock's part of a command's decision, once its ``expect`` has been checked
    (``turn_seconds``: the table's, read only for a timeout)."""
    state = deal.state
    if player in state.player_ids:  # a person (or a seated bot)
        if seat in state.timed_out:
            raise Conflict(
                f"seat {seat}'s turn timed out: the basic bot plays the rest of it",
                code=TURN_TIMED_OUT,
            )
        return
    if isinstance(command, TimeOut):
        due = deadline(deal.turn_since, turn_seconds(), state)
        if due is None or (now or datetime.now(UTC)) < due:
            raise Conflict(f"seat {seat}'s turn clock has not run out", code=CLOCK_NOT_DUE)
    elif seat not in state.timed_out:
        raise Forbidden("R-CMD-2", f"seat {seat}'s turn has not timed out: not yours to play")
