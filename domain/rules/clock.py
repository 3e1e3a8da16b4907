"""The turn clock's command (docs/tables.md, "Turn clock"): ``TimeOut`` records that the seat
to act ran out of time. The rules know no clock: whether the deadline has passed is decided by
whoever sends it (the bots process, from the recorded deadline); the rules only check that the
seat named is the one the deal waits for, and that its clock has not already run out."""

from __future__ import annotations

from domain import deal_events as ev
from domain.commands import TimeOut
from domain.errors import RuleViolation
from domain.rules.decision import Decision


def time_out(d: Decision, seat: int, cmd: TimeOut) -> None:
    st = d.state
    if st.to_act is None:
        raise RuleViolation("R-TURN-1", "timeout.nobody")
    if seat != st.to_act:
        raise RuleViolation("R-TURN-1", "timeout.other_seat", to_act=st.to_act, seat=seat)
    if seat in st.timed_out:
        raise RuleViolation("R-TURN-1", "timeout.already", seat=seat)
    d.emit(ev.TurnTimedOut(seat=seat, on_step=cmd.step))
