"""The turn clock (docs/tables.md, "Turn clock"), as pure functions of recorded facts.

A table may give each seat ``turn_seconds`` to act. The clock of the seat to act starts at the
recorded time of the event that made it that seat's turn (``Deal.turn_since``, kept by the
fold), so its deadline is a fact of the stored history, the same in every process and every
replay; nothing here reads a clock. When the deadline has passed, the bots process sends
``TimeOut`` for that seat (as the seat's stand-in, ``stand_in``), and the ``basic`` bot plays
the rest of that turn under the same name.

A turn that ran while the server was out of service (no process answered the players) gets
its full time again from the outage's end (``restart_due``): the deal records
``TurnClockRestarted``, from which its clock starts again.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from domain.bot_names import STAND_IN_LEVEL, bot_level, bot_name
from domain.errors import SetupError
from domain.state import DealState

#: The bounds of a table's ``turn_seconds`` (R-SEAT-3); tests may allow less (a setting).
TURN_SECONDS_MIN = 10
TURN_SECONDS_MAX = 3600


def check_turn_seconds(value: object, minimum: int = TURN_SECONDS_MIN) -> int | None:
    """R-SEAT-3: None (no clock) or a whole number of seconds within the bounds."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise SetupError("R-SEAT-3", "table.turn_seconds_whole")
    if not minimum <= value <= TURN_SECONDS_MAX:
        raise SetupError(
            "R-SEAT-3",
            "table.turn_seconds_range",
            least=minimum,
            most=TURN_SECONDS_MAX,
            chosen=value,
        )
    return value


def deadline(turn_since: str | None, turn_seconds: int | None, state: DealState) -> datetime | None:
    """When the seat to act runs out of time: None without a clock, when nobody is to act,
    or when its turn has already timed out (the basic bot is playing it)."""
    if turn_seconds is None or turn_since is None:
        return None
    seat = state.to_act
    if seat is None or seat in state.timed_out:
        return None
    return datetime.fromisoformat(turn_since) + timedelta(seconds=turn_seconds)


def restart_due(
    turn_since: str | None, turn_seconds: int | None, state: DealState, up: datetime | None
) -> int | None:
    """The seat whose turn clock starts again because the service came back at ``up`` (the
    end of the last outage; None: none known) while its turn ran: a person's turn, with a
    clock, not timed out, begun before ``up``. None when no restart is due. A restarted
    turn starts at ``up`` or later (``Deal.turn_since``), so it is due once an outage."""
    if up is None or deadline(turn_since, turn_seconds, state) is None:
        return None
    seat = state.to_act
    assert seat is not None and turn_since is not None  # a deadline has both
    if bot_level(state.player_ids[seat]) is not None:  # a bot's seat has no time to lose
        return None
    return seat if datetime.fromisoformat(turn_since) < up else None


def stand_in(seat: int) -> str:
    """The name under which the bots process times a seat's turn out and plays the rest of
    it. People's names cannot contain ':', so no person ever sends as a stand-in."""
    return bot_name(STAND_IN_LEVEL, seat)


def stand_in_seat(sender: str, state: DealState) -> int | None:
    """The seat ``sender`` stands in for, if it is a seat's stand-in (and not a seated
    player under that name)."""
    if sender in state.player_ids:
        return None
    for seat in range(state.players):
        if sender == stand_in(seat):
            return seat
    return None


def missed_in_a_row(state: DealState, seat: int) -> int:
    """How many of ``seat``'s turns in a row (in this deal, up to now) timed out."""
    return state.missed[seat]
