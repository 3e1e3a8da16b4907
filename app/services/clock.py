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

The service's outages (``app.infra.liveness``) are the clock's business too: while no server
process says it is alive, players cannot move, so no turn times out (409 ``clock_not_due``);
a person's turn that ran through an outage gets its full time again from the outage's end,
recorded in the deal (``ClockService.restart_turn_clock``: ``TurnClockRestarted``), and
cannot time out before that is recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from uuid import UUID

from app.infra.liveness import Alive
from app.services.tables import TableService
from domain.clock import deadline, restart_due, stand_in_seat
from domain.commands import Command, TimeOut
from domain.deal import Deal
from domain.errors import RACE_LOST, Conflict, Forbidden

TIMEOUT_NOT_ALLOWED = "timeout_not_allowed"
TURN_TIMED_OUT = "turn_timed_out"
CLOCK_NOT_DUE = "clock_not_due"


def sender_seat(deal: Deal, player: str, command: Command | None) -> int:
    """The seat ``player`` sends for: his own, or the one he stands in for."""
    state = deal.state
    if player in state.player_ids:
        if isinstance(command, TimeOut):
            raise Forbidden(TIMEOUT_NOT_ALLOWED, "clock.timeout_not_allowed")
        return state.player_ids.index(player)
    seat = stand_in_seat(player, state)
    if seat is None:
        raise Forbidden("R-CMD-2", "seat.none_here")
    return seat


def check_clock(
    deal: Deal,
    player: str,
    seat: int,
    command: Command,
    turn_seconds: Callable[[], int | None],
    service: Callable[[], tuple[Alive | None, float]],
    now: datetime | None = None,
) -> None:
    """The clock's part of a command's decision, once its ``expect`` has been checked
    (``turn_seconds``: the table's, ``service``: the service's record and how long a silence
    is an outage; both read only for a timeout)."""
    state = deal.state
    if player in state.player_ids:  # a person (or a seated bot)
        if seat in state.timed_out:
            raise Conflict(TURN_TIMED_OUT, "clock.timed_out", seat=seat)
        return
    if isinstance(command, TimeOut):
        seconds = turn_seconds()
        due = deadline(deal.turn_since, seconds, state)
        now = now or datetime.now(UTC)
        if due is None or now < due:
            raise Conflict(CLOCK_NOT_DUE, "clock.not_run_out", seat=seat)
        alive, outage_seconds = service()
        if alive is None:
            return
        if restart_due(deal.turn_since, seconds, state, alive.up_since) is not None:
            raise Conflict(CLOCK_NOT_DUE, "clock.outage_restart", seat=seat)
        if alive.out_of_service(now, outage_seconds):
            raise Conflict(CLOCK_NOT_DUE, "clock.out_of_service")
    elif seat not in state.timed_out:
        raise Forbidden("R-CMD-2", "clock.not_timed_out", seat=seat)


class ClockService(TableService):
    """Records the restart of a turn clock after an outage (docs/tables.md, "Turn clock")."""

    def restart_turn_clock(self, deal_id: UUID, step: int) -> int | None:
        """If the deal (still at ``step``) waits for a person whose turn ran through the
        service's last outage, record ``TurnClockRestarted``: his clock starts again, in
        full. Returns the seat, or None when no restart is due. 409 ``race_lost`` when the
        deal moved meanwhile (the caller looks again)."""
        deal = self.get_deal(deal_id)
        if deal.version != step:
            raise Conflict(RACE_LOST, "deal.at_step", step=deal.version, expected=step)
        alive = self.liveness.read()
        if alive is None:
            return None
        table = self.get_table(UUID(deal.state.table_id))
        seat = restart_due(deal.turn_since, table.turn_seconds, deal.state, alive.up_since)
        if seat is None:
            return None
        down = None if alive.down_since is None else alive.down_since.isoformat()
        deal.restart_clock(seat, down, alive.up_since.isoformat())
        self._save(deal)
        return seat
