"""The rules engine: ``decide(state, seat, command)`` returns the events a legal command
records, or raises ``RuleViolation`` with a rule id (docs/rules/) and records nothing (R-CMD-3).

Deciding works on a clone of the state and folds each event into it as it is emitted,
so multi-step commands (melds plus a discard, a pile taken with its melds) are checked
against the state they really produce and are applied atomically.

The package: ``decision`` (the ``Decision``, the turn guard, the deal's end), ``dealing`` (the
cut and the deal), ``drawing`` (the stock, the bonus cards, the ponytails), ``melding``,
``pile`` (taking and declining the discard pile) and ``going_out`` (the discard, asking the
partner, going out); this module dispatches a command to its handler.
"""

from __future__ import annotations

from domain import deal_events as ev
from domain.commands import (
    Answer,
    AskPartner,
    Command,
    Cut,
    DeclinePile,
    Discard,
    Draw,
    Meld,
    PickUpPonytail,
    TakePile,
    TimeOut,
)
from domain.constants import OVER
from domain.errors import RuleViolation
from domain.rules import clock, dealing, drawing, going_out, melding, pile
from domain.rules.decision import Decision, Event
from domain.state import DealState

__all__ = ["Decision", "Event", "abandon", "decide"]


def decide(state: DealState, seat: int, command: Command) -> list[Event]:
    """The events ``command`` from room seat ``seat`` records, or a RuleViolation."""
    d = Decision(state)
    match command:
        case Draw():
            drawing.draw(d, seat, command)
        case Meld():
            melding.meld(d, seat, command)
        case Discard():
            going_out.discard(d, seat, command)
        case TakePile():
            pile.take_pile(d, seat, command)
        case Cut():
            dealing.cut(d, seat, command)
        case AskPartner():
            going_out.ask_partner(d, seat, command)
        case Answer():
            going_out.answer(d, seat, command)
        case DeclinePile():
            pile.decline_pile(d, seat, command)
        case PickUpPonytail():
            drawing.pick_up_ponytail(d, seat, command)
        case TimeOut():
            clock.time_out(d, seat, command)
        case _:
            raise RuleViolation("R-CMD-3", "command.unknown", command=type(command).__name__)
    return d.events


def abandon(state: DealState) -> list[Event]:
    """R-GAME-2: the host stopped the game; the unfinished deal is not scored."""
    if state.phase == OVER:
        return []
    return [ev.DealAbandoned(reason="stopped")]
