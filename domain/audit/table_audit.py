"""``audit_table``: every deal the table opened, and the table's record of them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from domain.audit.deal_audit import audit_deal
from domain.audit.report import (
    SIGNATURE_NOT_RECORDED,
    SIGNATURE_UNCHECKED,
    AuditReport,
    TableAuditReport,
)
from domain.audit.signatures import SignatureCheck, check_record, with_signature
from domain.audit.stored import StoredEvent, canonical, kind_of
from domain.deal import Deal
from domain.events import DealAbandoned, DealScored
from domain.seal import Verifier


def _scored_totals(events: Sequence[StoredEvent]) -> dict[str, int] | None:
    for event in reversed(events):
        if isinstance(event, DealScored):
            try:
                return {side: int(b["total"]) for side, b in event.scores.items()}
            except (AttributeError, KeyError, TypeError, ValueError):
                return None
    return None


class _TableWalk:
    """The table's stored events in order, checked against its deals' histories.

    The table's events are classes the library's ``@event`` decorator makes, with no
    declared fields, so the handlers take them untyped; a read that fails (a field
    missing or of the wrong type) is reported by ``audit_table`` as a malformed event."""

    def __init__(
        self,
        table_id: str,
        deal_events: Mapping[str, Sequence[StoredEvent]],
        unreadable: Mapping[str, int],
        verifier: Verifier | None = None,
    ) -> None:
        self.table_id = table_id
        self.verifier = verifier
        self.deal_events = deal_events
        self.unreadable = unreadable
        self.problems: list[str] = []
        self.reports: list[AuditReport] = []
        self.totals: dict[str, int] | None = None
        self.opened: list[str] = []
        self.recorded: set[str] = set()
        # Who plays each seat (absent players, docs/tables.md), and every change of it in
        # order; per deal, how many changes came before it was opened.
        self.playing: dict[int, str | None] = {}
        self.changes: list[tuple[int, str]] = []
        self.changes_before: dict[str, int] = {}

    def player_seated(self, event: Any) -> None:
        self.playing[int(event.seat)] = str(event.player)

    def seat_left(self, event: Any) -> None:
        if event.freed:
            self.playing[int(event.seat)] = None

    def seat_changed(self, seat: int, player: str) -> None:
        self.playing[seat] = player
        self.changes.append((seat, player))

    def game_started(self, event: Any) -> None:
        self.totals = {side: int(v) for side, v in event.totals.items()}

    def deal_opened(self, event: Any) -> None:
        deal_id, number = str(event.deal_id), event.number
        self.opened.append(deal_id)
        events = list(self.deal_events.get(deal_id, ()))
        unreadable = self.unreadable.get(deal_id)
        if not events and unreadable is None:
            self.problems.append(f"deal {number} ({deal_id}): opened, but it has no events")
            return
        report = audit_deal(events, unreadable_step=unreadable, deal_id=deal_id)
        # Not recorded (in play, or abandoned) until the table records it, keys or none: a
        # deal in play has no signature to check yet.
        report = with_signature(report, SignatureCheck(SIGNATURE_NOT_RECORDED))
        self.reports.append(report)
        if not events:
            return
        started = events[0]
        if not isinstance(started, Deal.Started):
            return  # the deal's own report says so
        for name in ("number", "dealer", "order"):
            theirs, ours = getattr(started, name, None), getattr(event, name)
            if canonical(theirs) != canonical(ours):
                self.problems.append(
                    f"deal {number}: the table opened it with {name} {ours}, the deal says {theirs}"
                )
        self.changes_before[deal_id] = len(self.changes)
        seating = [self.playing.get(seat) or "" for seat in range(len(started.player_ids))]
        if self.playing and list(started.player_ids) != seating:
            self.problems.append(
                f"deal {number}: it seats {started.player_ids}, but the table's seats were "
                f"played by {seating}"
            )
        if getattr(started, "table_id", None) != self.table_id:
            self.problems.append(f"deal {number}: the deal names table {started.table_id}")
        before = getattr(started, "scores_before", None)
        if self.totals is not None and canonical(before) != canonical(self.totals):
            self.problems.append(
                f"deal {number}: it started from {before}, but the table's totals were "
                f"{self.totals}"
            )

    def deal_recorded(self, event: Any) -> None:
        deal_id = str(event.deal_id)
        self.recorded.add(deal_id)
        scores = {side: int(v) for side, v in event.scores.items()}
        scored = _scored_totals(self.deal_events.get(deal_id, ()))
        if deal_id not in self.opened:
            self.problems.append(f"the table recorded deal {deal_id}, which it never opened")
        link = getattr(event, "final_link", "")
        history = self.deal_events.get(deal_id, ())
        if link and history and getattr(history[-1], "chain", None) != link:
            self.problems.append(
                f"deal {deal_id}: its last hash-chain link is not the one the table recorded "
                "(the deal's history was changed or cut short after it was scored)"
            )
        if scored != scores:
            self.problems.append(
                f"deal {deal_id}: the table recorded {scores}, the deal scored {scored}"
            )
        self._check_signature(event, deal_id, history)
        if self.totals is not None:
            expected = {side: self.totals[side] + scores.get(side, 0) for side in self.totals}
            stored = {side: int(v) for side, v in event.totals.items()}
            if expected != stored:
                self.problems.append(
                    f"deal {deal_id}: the table's totals became {stored}, not {self.totals} "
                    f"plus the deal's scores ({expected})"
                )
            self.totals = stored

    def _check_signature(self, event: Any, deal_id: str, history: Sequence[StoredEvent]) -> None:
        if deal_id not in self.opened:
            return
        number = self.opened.index(deal_id) + 1
        check = (
            SignatureCheck(SIGNATURE_UNCHECKED)
            if self.verifier is None
            else check_record(self.table_id, event, number, history, self.verifier)
        )
        for i, report in enumerate(self.reports):
            if report.deal_id == deal_id:
                self.reports[i] = with_signature(report, check)

    def finish(self) -> None:
        for deal_id in self.opened:
            self.check_changes(deal_id)
        for deal_id in self.opened:
            scored = _scored_totals(self.deal_events.get(deal_id, ()))
            if scored is not None and deal_id not in self.recorded:
                self.problems.append(f"deal {deal_id} was scored but the table never recorded it")

    def check_changes(self, deal_id: str) -> None:
        """A deal's changes of who plays a seat are the table's changes since it was opened,
        in order: all of them while it is not over, else the first ones (those recorded
        after it was over are the table's alone)."""
        events: Sequence[Any] = self.deal_events.get(deal_id, ())
        recorded = [
            (int(e.seat), str(e.player)) for e in events if kind_of(e) == "SeatPlayerChanged"
        ]
        start = self.changes_before.get(deal_id, 0)
        over = bool(events) and isinstance(events[-1], (DealScored, DealAbandoned))
        since = self.changes[start:] if not over else self.changes[start : start + len(recorded)]
        if recorded != since:
            self.problems.append(
                f"deal {deal_id}: its changes of who plays a seat {recorded} are not the table's"
            )


def audit_table(
    table_id: str,
    table_events: Sequence[StoredEvent],
    deal_events: Mapping[str, Sequence[StoredEvent]],
    *,
    unreadable: Mapping[str, int] | None = None,
    verifier: Verifier | None = None,
) -> TableAuditReport:
    """Audit every deal the table opened (in order), and the table's record of them.

    ``deal_events`` maps each deal id (as in the table's ``DealOpened`` events) to the
    deal's stored events; a deal missing from it (or with no events) is a problem.
    ``unreadable`` maps a deal id to the step of its first record that could not be decoded.
    ``verifier``: the published keys, to check the signature of each deal's record
    (``domain.audit.signatures``); without it the verdicts of the deals the table recorded
    read ``unchecked`` (those it has not, ``not_recorded``, as with it).
    """
    walk = _TableWalk(table_id, deal_events, unreadable or {}, verifier)
    handlers: dict[str, Callable[[Any], None]] = {
        "GameStarted": walk.game_started,
        "DealOpened": walk.deal_opened,
        "DealRecorded": walk.deal_recorded,
        "PlayerSeated": walk.player_seated,
        "SeatLeft": walk.seat_left,
        "SeatTakenOver": lambda e: walk.seat_changed(int(e.seat), str(e.by)),
        "SeatTakenBack": lambda e: walk.seat_changed(int(e.seat), str(e.player)),
        "SeatGiven": lambda e: walk.seat_changed(int(e.seat), str(e.player)),
    }
    for event in table_events:
        handler = handlers.get(kind_of(event))
        if handler is None:
            continue
        try:
            handler(event)
        except Exception as exc:  # a field missing or of the wrong type
            version = getattr(event, "originator_version", "?")
            walk.problems.append(
                f"the table's {kind_of(event)} event (version {version}) is malformed: {exc!r}"
            )
    walk.finish()
    return TableAuditReport(table_id=table_id, deals=walk.reports, problems=walk.problems)
