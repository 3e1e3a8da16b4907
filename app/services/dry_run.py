"""Dry runs (docs/dry_run.md): a command decided without being recorded.

``check`` reads the deal and the sender's seat as ``submit`` does, applies the same checks in
the same order (the sequence number when one is given, ``CommandLog.check_new``; what the
sender believed, ``Expected``; the rules, ``Deal.execute``), but on a copy of the deal, and
saves nothing: no event, no sequence number used, no command-log entry. What it tells is
``projections.dry_run``'s business: the same answer whatever the cards hidden from the
sender are.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any
from uuid import UUID

from app.services.clock import check_clock
from app.services.commands import CommandService, Expected, refusal_body
from domain.commands import Command
from domain.errors import Conflict, DomainError, RuleViolation
from projections.dry_run import dry_run_view


def refusal(error: DomainError) -> dict[str, Any]:
    """A refusal as the command would get it (``refusal_body``), and an initial meld's
    ``points`` and ``minimum`` apart (``CheckError``)."""
    details = error.details if isinstance(error, RuleViolation) else {}
    return {"accepted": False, "error": refusal_body(error)["error"] | details}


class DryRunService(CommandService):
    def check(
        self,
        deal_id: UUID,
        player: str,
        seq: int | None,
        command: Command,
        expected: Expected,
    ) -> dict[str, Any]:
        """Whether ``command`` from ``player`` would be accepted now, and what it would
        record as he may be told (``CheckOut``); nothing is saved. A deal that does not
        exist, or a sender with no seat in it, raise as for a command (404, 403)."""
        deal = self.get_deal(deal_id)  # the store's current state, as views read it
        seat = self._seat_of(deal, player, command)  # a person's time_out: 403; away: 403
        try:
            if seq is not None:
                self._command_log(deal.state.table_id, player).check_new(seq)
            stale = expected.mismatch(deal)
            if stale is not None:
                raise stale
            check_clock(
                deal, player, seat, command, lambda: self._turn_seconds(deal), self.service_alive
            )
            trial = deepcopy(deal)  # decided on a copy that is never saved
            trial.execute(seat, command)
        except Conflict as conflict:  # stale, or the turn clock's (``turn_timed_out``)
            return refusal(conflict)
        except RuleViolation as refused:
            return refusal(refused)
        new = [e for e in trial.pending_events if e.originator_version > deal.version]
        run = dry_run_view(deal.state, deal.version, seat, new)
        return {
            "accepted": True,
            "step": run.step,
            "events": run.events,
            "undisclosed": run.undisclosed,
            "points": run.points,
            "minimum": run.minimum,
        }
