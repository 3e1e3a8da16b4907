"""The audit's fourth check: the server's signature of the table's record of each deal.

The table's ``DealRecorded`` event carries the server's signature (``domain.seal``) of the
table id, the deal id, its number, its last chain link, its scores and the running totals.
The verdict of a deal (``SIGNATURE_*``):

- ``valid``: the record's signature verifies with a published key, and the deal's stored
  history ends at the link it signs (with the hash chain intact, every event is vouched for);
- ``forged``: the signature does not verify (the record was changed after it was signed),
  or the deal's history no longer ends at the signed link (it was rewritten, its chain
  recomputed); ``ok`` is then false;
- ``unknown_key``: signed with a key this server does not publish (a retired key left out of
  the configuration, or a made-up one); ``ok`` is false: nothing vouches for the deal;
- ``unsigned``: the record has no signature (recorded before signing existed);
- ``not_recorded``: the table has not recorded the deal (in play, or abandoned);
- ``unchecked``: the table recorded the deal, but the audit was given no keys to check its
  signature with (a deal the table has not recorded is ``not_recorded``, keys or none).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from domain.audit.report import (
    SIGNATURE_FORGED,
    SIGNATURE_NOT_RECORDED,
    SIGNATURE_UNCHECKED,
    SIGNATURE_UNKNOWN_KEY,
    SIGNATURE_UNSIGNED,
    SIGNATURE_VALID,
    AuditReport,
)
from domain.audit.stored import StoredEvent, kind_of
from domain.refusals import Said, said
from domain.seal import Verifier, record_message

#: The fields of a table's record of a deal that its signature covers (with the table, the
#: deal and the number), and the signature: shown to the auditor as the store holds them.
RECORD_FIELDS = ("final_link", "scores", "totals", "key_id", "signature")


@dataclass(frozen=True)
class SignatureCheck:
    verdict: str
    key_id: str | None = None
    said: Said | None = None  # why the verdict is not "valid"
    record: dict[str, Any] | None = None  # the signed record as stored (``RECORD_FIELDS``)

    @property
    def message(self) -> str | None:
        """Why, in English."""
        return self.said.message if self.said else None


def check_record(
    table_id: str,
    record: Any,
    number: int,
    history: Sequence[StoredEvent],
    verifier: Verifier,
) -> SignatureCheck:
    """The verdict of the table's ``record`` (a ``DealRecorded`` event) of the ``number``-th
    deal it opened, whose stored events are ``history``; with the record itself, so that
    anyone can check the signature with the published key (docs/api.md)."""
    stored = {"number": number, **{name: getattr(record, name, None) for name in RECORD_FIELDS}}
    check = _verdict(table_id, record, number, history, verifier)
    return dataclasses.replace(check, record=stored)


def _verdict(
    table_id: str,
    record: Any,
    number: int,
    history: Sequence[StoredEvent],
    verifier: Verifier,
) -> SignatureCheck:
    signature = getattr(record, "signature", "") or ""
    key_id = getattr(record, "key_id", "") or ""
    if not signature:
        return SignatureCheck(SIGNATURE_UNSIGNED, None, said("audit.unsigned"))
    try:
        message = record_message(
            table_id,
            str(record.deal_id),
            number,
            str(record.final_link),
            record.scores,
            record.totals,
        )
        verified = verifier.verify(str(key_id), message, str(signature))
    except Exception as exc:  # a field missing or of the wrong type
        return SignatureCheck(
            SIGNATURE_FORGED, str(key_id), said("audit.record_unbuildable", error=repr(exc))
        )
    if verified is None:
        return SignatureCheck(
            SIGNATURE_UNKNOWN_KEY,
            str(key_id),
            said("audit.unknown_key", key=str(key_id)),
        )
    if not verified:
        return SignatureCheck(
            SIGNATURE_FORGED,
            str(key_id),
            said("audit.signature_mismatch"),
        )
    last = getattr(history[-1], "chain", None) if history else None
    if last != record.final_link:
        return SignatureCheck(
            SIGNATURE_FORGED,
            str(key_id),
            said("audit.history_rewritten"),
        )
    return SignatureCheck(SIGNATURE_VALID, str(key_id), None)


def find_record(table_events: Sequence[StoredEvent], deal_id: str) -> tuple[Any, int] | None:
    """The table's ``DealRecorded`` of ``deal_id`` and the deal's number (its place among the
    deals the table opened), or None if the table has not recorded it."""
    opened: list[str] = []
    for event in table_events:
        kind = kind_of(event)
        if kind == "DealOpened":
            opened.append(str(getattr(event, "deal_id", "")))
        elif kind == "DealRecorded" and str(getattr(event, "deal_id", "")) == deal_id:
            number = opened.index(deal_id) + 1 if deal_id in opened else 0
            return event, number
    return None


def worded_with(worded: dict[str, Said], name: str, why: Said | None) -> dict[str, Said]:
    """``worded`` with ``name`` said by ``why`` (or without it)."""
    out = {key: value for key, value in worded.items() if key != name}
    return out if why is None else {**out, name: why}


def with_signature(report: AuditReport, check: SignatureCheck) -> AuditReport:
    return dataclasses.replace(
        report,
        signature=check.verdict,
        signature_key_id=check.key_id,
        signature_message=check.message,
        worded=worded_with(report.worded, "signature_message", check.said),
        signed_record=check.record,
    )


def sign_deal_report(
    report: AuditReport,
    table_id: str,
    table_events: Sequence[StoredEvent],
    history: Sequence[StoredEvent],
    verifier: Verifier | None,
) -> AuditReport:
    """A deal's report with the verdict on its signature (the table's record of it);
    without a ``verifier``, ``unchecked`` if the table recorded it."""
    found = find_record(table_events, report.deal_id)
    if found is None:
        check = SignatureCheck(SIGNATURE_NOT_RECORDED)
    elif verifier is None:
        check = SignatureCheck(SIGNATURE_UNCHECKED)
    else:
        record, number = found
        check = check_record(table_id, record, number, history, verifier)
    return with_signature(report, check)
