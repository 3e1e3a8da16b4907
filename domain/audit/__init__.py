"""Audit of a deal's stored history (R-VIEW-4, R-DEAL-3, R-HIST-1): pure functions.

``audit_deal(events)`` takes the stored events of one deal, as the event store returns them
(``Deal.Started`` first), and checks three things independently:

1. the hash chain (``domain.chain``): every event commits to its predecessor, so the first
   stored event whose link does not verify is where the history was altered;
2. the commitment published with the deal (``Started.commitment``) matches the shuffle seed
   recorded in ``DeckShuffled`` (or the prepared deck of ``DeckStacked``);
3. re-application through the rules: the players' commands are rebuilt from the events and
   decided again by ``domain.rules.decide`` on the state folded so far; each command must
   produce exactly the stored events that follow (kind and data), the final score included.

Rebuilding commands: the events do not record where one command ends and the next begins
(a meld with its discard and a meld followed by a discard record the same events), so at
each position the auditor tries the candidate commands that the stored event there can
begin, largest first, and goes on after the first whose decided events equal the stored
ones. The state at a position depends only on the events before it, whatever the grouping,
so the search backtracks (should a grouping lead to a dead end) without exploring any
position twice. The history passes when some grouping reaches its end. Otherwise the
mismatch that got furthest is reported: the step of the first stored event no rebuilt
command reproduces, what the rules record there (or why they refuse), and what is stored.

``audit_table`` adds the table-level checks: every deal the table opened exists and agrees
with it, every recorded deal score equals the deal's own ``DealScored`` totals, the running
totals add up, and each deal started from the totals before it. Given the published keys
(``verifier``), it also checks the server's signature of the table's record of each deal
(``signatures``: a rewritten deal whose chain was recomputed is named ``forged``).

The package, by the checks above: ``stored`` (reading and folding stored events), ``integrity``
(the chain and the commitment), ``replay`` (re-deciding the commands), ``signatures`` (the
server's signature), ``report`` (the reports), ``deal_audit`` and ``table_audit`` (the two
entry points).
"""

from domain.audit.deal_audit import audit_deal
from domain.audit.report import AuditReport, Mismatch, TableAuditReport
from domain.audit.stored import Folded, describe, fold, initial_state, kind_of, typed
from domain.audit.table_audit import audit_table

__all__ = [
    "AuditReport",
    "Folded",
    "Mismatch",
    "TableAuditReport",
    "audit_deal",
    "audit_table",
    "describe",
    "fold",
    "initial_state",
    "kind_of",
    "typed",
]
