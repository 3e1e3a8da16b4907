"""``audit_deal``: the three checks of one deal's stored history, in one report."""

from __future__ import annotations

from collections.abc import Sequence

from domain.audit.integrity import broken_link, check_commitment
from domain.audit.replay import check_rules
from domain.audit.report import AuditReport, Mismatch
from domain.audit.stored import StoredEvent
from domain.events import DealAbandoned, DealScored
from domain.refusals import Said, said


def audit_deal(
    events: Sequence[StoredEvent], *, unreadable_step: int | None = None, deal_id: str | None = None
) -> AuditReport:
    """Audit one deal's stored events (the store's order, ``Started`` first).

    ``unreadable_step``: the step of a stored record that could not even be decoded; the
    events before it are audited and the chain is reported broken there at the latest.
    ``deal_id`` names the deal when no event could be read.
    """
    events = list(events)
    if deal_id is None:
        deal_id = str(events[0].originator_id) if events else ""
    broken = broken_link(events)
    if unreadable_step is not None and (broken is None or unreadable_step < broken):
        broken = unreadable_step
    ok_commitment, commitment_said, stacked = check_commitment(deal_id, events)
    mismatch, commands = check_rules(events)
    if mismatch is None and unreadable_step is not None:
        mismatch = Mismatch(unreadable_step, said("audit.unreadable", step=unreadable_step))
    worded: dict[str, Said] = {"message": mismatch.said} if mismatch else {}
    if commitment_said is not None:
        worded["commitment_message"] = commitment_said
    scored = [e for e in events if isinstance(e, DealScored)]
    final_scores = None
    if scored:
        try:
            final_scores = {side: int(b["total"]) for side, b in scored[-1].scores.items()}
        except (AttributeError, KeyError, TypeError, ValueError):
            final_scores = None
    complete = bool(events) and isinstance(events[-1], (DealScored, DealAbandoned))
    end_reason = getattr(events[-1], "reason", None) if complete else None
    return AuditReport(
        deal_id=deal_id,
        events=len(events),
        chain_ok=broken is None,
        first_broken_step=broken,
        commitment_ok=ok_commitment,
        commitment_message=commitment_said.message if commitment_said else None,
        rules_ok=mismatch is None,
        first_mismatch_step=mismatch.step if mismatch else None,
        message=mismatch.message if mismatch else None,
        expected=mismatch.expected if mismatch else None,
        stored=mismatch.stored if mismatch else None,
        command=mismatch.command if mismatch else None,
        commands=commands,
        stacked=stacked,
        complete=complete,
        end_reason=end_reason,
        final_scores=final_scores,
        worded=worded,
    )
