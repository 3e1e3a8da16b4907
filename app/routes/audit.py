"""Audit of a deal's complete history, for auditors only (R-VIEW-4, R-DEAL-3, R-HIST-1/2).

An auditor (a role granted by the operator: ``canasta grant-auditor NAME`` or the
``CANASTA_AUDITORS`` setting, never through the API) sees everything: the seed, the deck,
every hand, the stock. Everything here is read from the stored events themselves (not from
the aggregate cache or snapshots), so what is checked is what the store holds.

- ``GET /audit/deals/{id}``: the complete history and the audit report (``domain.audit``);
- ``GET /audit/deals/{id}/replay?step=N``: the full state at step N;
- ``GET /audit/tables/{id}``: the reports of every deal of a table, and the table's checks.

The functions ``deal_events``, ``deal_report`` and ``table_report`` are shared with the
``canasta audit`` command. With a read replica the routes read the replica (``app.replica``;
``X-Canasta-Min-Step`` as for the views), the auditor's role the primary. Each deal's report carries the verdict on the server's signature
of the table's record of it, checked with the application's keys (``app.signing``).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Annotated, Any
from uuid import UUID

from eventsourcing.utils import get_topic
from fastapi import APIRouter, Query
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse

from app.application import CanastaApp, refusal_body
from app.deps import AuditorDep
from app.replica import DealStore, TableStore
from app.schemas import ErrorOut
from app.schemas_views import AuditReplay, DealAudit, TableAudit
from domain.audit import AuditReport, TableAuditReport, audit_deal, audit_table, fold, kind_of
from domain.audit.signatures import sign_deal_report
from domain.deal import Deal
from domain.errors import Conflict, NotFound
from domain.refusals import said
from domain.table import Table
from projections.visibility import Viewer, deal_view, event_view

router = APIRouter(prefix="/audit", tags=["audit"])

_AUDITOR = Viewer.auditor()
_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "R-CMD-2: no valid bearer token or session"},
    403: {"model": ErrorOut, "description": "R-VIEW-4: not an auditor"},
    404: {"model": ErrorOut, "description": "not_found: no such deal or table (or step)"},
}


# --- reading the store --------------------------------------------------------------------


def stored_events(canasta: CanastaApp, aggregate_id: UUID) -> tuple[list[Any], int | None]:
    """An aggregate's stored events, decoded one by one: (the events up to the first record
    that cannot be decoded, that record's version or None)."""
    events: list[Any] = []
    for record in canasta.recorder.select_events(aggregate_id):
        try:
            events.append(canasta.mapper.to_domain_event(record))
        except Exception:
            return events, int(record.originator_version)
    return events, None


def deal_events(canasta: CanastaApp, deal_id: UUID) -> tuple[list[Any], int | None]:
    """A deal's stored events, or NotFound when ``deal_id`` names no deal."""
    events, unreadable = stored_events(canasta, deal_id)
    if unreadable == 1 or (events and isinstance(events[0], Deal.Started)):
        return events, unreadable
    raise NotFound("deal.not_found", id=str(deal_id))


def deal_report(canasta: CanastaApp, deal_id: UUID) -> AuditReport:
    events, unreadable = deal_events(canasta, deal_id)
    report = audit_deal(events, unreadable_step=unreadable, deal_id=str(deal_id))
    return signed_report(canasta, report, events)


def signed_report(canasta: CanastaApp, report: AuditReport, events: list[Any]) -> AuditReport:
    """The report with the verdict on the deal's signature: the table's record of the deal
    checked with the published keys (``domain.audit.signatures``); without keys,
    ``unchecked`` if the table recorded it, ``not_recorded`` if not (in play, say)."""
    table_id = str(getattr(events[0], "table_id", "")) if events else ""
    try:
        table_events, _ = stored_events(canasta, UUID(table_id))
    except ValueError:  # a forged Started event: no table to find
        table_events = []
    return sign_deal_report(report, table_id, table_events, events, canasta.keys)


#: The event that makes a table: the event log's every table is found by it.
TABLE_CREATED: str = get_topic(Table.Created)


def table_ids(canasta: CanastaApp, batch: int = 500) -> Iterator[UUID]:
    """Every table of the store, oldest first, from the event log itself (not the lobby,
    whose rows an audit must not trust, nor which leaves private tables out)."""
    start = 1
    while True:
        found = canasta.recorder.select_notifications(
            start=start, limit=batch, topics=[TABLE_CREATED]
        )
        for notification in found:
            yield UUID(str(notification.originator_id))
        if len(found) < batch:
            return
        start = found[-1].id + 1


def table_report(canasta: CanastaApp, table_id: UUID) -> TableAuditReport:
    """Every deal the table opened, audited, and the table's record of their scores."""
    table_events, _ = stored_events(canasta, table_id)
    if not table_events or not isinstance(table_events[0], Table.Created):
        raise NotFound("table.not_found", id=str(table_id))
    deals: dict[str, list[Any]] = {}
    unreadable: dict[str, int] = {}
    for event in table_events:
        if kind_of(event) == "DealOpened":
            events, bad = stored_events(canasta, UUID(str(event.deal_id)))
            deals[str(event.deal_id)] = events
            if bad is not None:
                unreadable[str(event.deal_id)] = bad
    return audit_table(
        str(table_id), table_events, deals, unreadable=unreadable, verifier=canasta.keys
    )


# --- the history --------------------------------------------------------------------------


def _event_out(event: Any, st: Any) -> dict[str, Any]:
    out = event_view(event, _AUDITOR, st) or {"step": event.originator_version}
    timestamp = getattr(event, "timestamp", None)
    out["at"] = timestamp.isoformat() if isinstance(timestamp, datetime) else str(timestamp)
    return out


def _step_of(events: list[Any], kind: str) -> int | None:
    return next((int(e.originator_version) for e in events if kind_of(e) == kind), None)


def history(events: list[Any]) -> dict[str, Any]:
    """The complete history: every event with all its fields (the time each was recorded,
    which the hash chain covers, included), the seed or prepared deck, the deck as shuffled,
    the stock after the cut, the cards dealt, and every hand at the end."""
    if not events:
        nothing = said("audit.nothing_readable")
        return {
            "events": [],
            "fold_error": nothing.message,
            "worded": {"fold_error": nothing.to_dict()},
        }
    final = fold(events)
    started = events[0]
    st = final.state
    out: dict[str, Any] = {
        "table": getattr(started, "table_id", None),
        "number": getattr(started, "number", None),
        "step": int(events[-1].originator_version),
        "commitment": getattr(started, "commitment", None),
        "seed": None,
        "stacked_deck": None,
    }
    if len(events) > 1:
        if kind_of(events[1]) == "DeckShuffled":
            out["seed"] = getattr(events[1], "seed", None)
        elif kind_of(events[1]) == "DeckStacked":
            out["stacked_deck"] = list(getattr(events[1], "order", []))
    shuffled = fold(events, upto=2)
    out["deck"] = list(shuffled.state.deck) if shuffled.state and shuffled.step == 2 else None
    cut_step = _step_of(events, "DeckCut")
    out["stock_after_cut"] = None
    if cut_step is not None:
        cut = fold(events, upto=cut_step)
        if cut.state is not None and cut.step == cut_step:
            out["stock_after_cut"] = list(reversed(cut.state.stock))  # top first
    dealt: dict[str, list[str]] = {}
    for event in events:
        if kind_of(event) == "CardsDealt":
            for seat, card in getattr(event, "cards", []):
                dealt.setdefault(str(seat), []).append(card)
    out["dealt"] = dealt
    if st is not None:
        final_view = deal_view(st, _AUDITOR)
        out["hands"] = final_view["hands"]
        out["final"] = final_view
    else:
        out["hands"] = None
        out["final"] = None
    out["folded_to"] = final.step  # the step "hands" and "final" show (the last, unless
    out["fold_error"] = final.error  # a stored event does not fold: then why)
    out["worded"] = {"fold_error": final.why.to_dict()} if final.why else {}
    out["events"] = [_event_out(e, st) for e in events] if st is not None else []
    return out


# --- routes -------------------------------------------------------------------------------
#
# The answers are declared (``response_model``) but sent as they are, not validated against
# their models: an audit shows what the store holds, and a row someone tampered with may
# hold anything. Refusing to show it (a validation error) would defeat the audit.


def _as_stored(content: dict[str, Any]) -> JSONResponse:
    return JSONResponse(jsonable_encoder(content))


@router.get("/deals/{deal_id}", response_model=DealAudit, responses=_ERRORS, name="audit_deal")
def audit_deal_route(deal_id: UUID, canasta: DealStore, _auditor: AuditorDep) -> Any:
    """The complete history of a deal (seed, deck, every hand, the stock after the cut, every
    event with all its fields) and its audit: the hash chain, the seed against the published
    commitment, every command re-decided by the rules against the stored events, and the
    server's signature of the table's record of the deal (``signature``: valid, forged,
    unknown_key, unsigned, not_recorded; GET /.well-known/canasta-keys)."""
    events, unreadable = deal_events(canasta, deal_id)
    report = audit_deal(events, unreadable_step=unreadable, deal_id=str(deal_id))
    report = signed_report(canasta, report, events)
    out = {"deal": str(deal_id), **history(events)}
    if unreadable is not None:
        out["unreadable_step"] = unreadable
    out["audit"] = report.to_dict()
    return _as_stored(out)


@router.get(
    "/deals/{deal_id}/replay",
    response_model=AuditReplay,
    responses={
        **_ERRORS,
        409: {
            "model": ErrorOut,
            "description": "R-HIST-1: the deal's stored events cannot be read",
        },
    },
)
def audit_replay(
    deal_id: UUID,
    canasta: DealStore,
    _auditor: AuditorDep,
    step: Annotated[int, Query(ge=1, le=10**9)],
) -> Any:
    """The full state of the deal at ``step`` (every hand, the stock, the pile), folded from
    the stored events; a step past the end gives the last. 409 if the stored events do not
    fold that far (the audit report says why)."""
    events, _ = deal_events(canasta, deal_id)
    if not events:
        unread = Conflict("R-HIST-1", "history.first_unreadable")
        return JSONResponse(refusal_body(unread), 409)
    step = min(step, int(events[-1].originator_version))
    folded = fold(events, upto=step)
    if folded.state is None or folded.step < step:
        short = Conflict("R-HIST-1", "history.no_fold", step=step, why=folded.error)
        return JSONResponse(refusal_body(short), 409)
    view = deal_view(folded.state, _AUDITOR)
    view.update(
        id=str(deal_id),
        table=folded.state.table_id,
        step=step,
        event=_event_out(events[step - 1], folded.state),
    )
    return _as_stored(view)


@router.get("/tables/{table_id}", response_model=TableAudit, responses=_ERRORS, name="audit_table")
def audit_table_route(table_id: UUID, canasta: TableStore, _auditor: AuditorDep) -> Any:
    """The audit report of every deal the table opened, and the table's own checks: each
    recorded deal score equals the deal's DealScored totals, the totals add up, and each deal
    started from the totals before it; each deal's report checks the signature of its record."""
    return _as_stored(table_report(canasta, table_id).to_dict())
