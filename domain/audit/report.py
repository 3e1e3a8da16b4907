"""The audit's reports: a deal's (``AuditReport``, with the first ``Mismatch``) and a
table's (``TableAuditReport``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from domain.refusals import Said


@dataclass(frozen=True)
class Mismatch:
    """Where re-applying the rules first disagreed with the stored history."""

    step: int
    said: Said  # why, worded by key (``domain.refusals``)
    expected: dict[str, Any] | None = None  # what the rules record at this step
    stored: dict[str, Any] | None = None  # what the store holds at this step
    command: str | None = None  # the rebuilt command, as ``seat N: Command(...)``

    @property
    def message(self) -> str:
        return self.said.message


#: The verdicts on a deal's signature (``domain.audit.signatures``); the first two fail it.
SIGNATURE_FORGED = "forged"
SIGNATURE_UNKNOWN_KEY = "unknown_key"
SIGNATURE_VALID = "valid"
SIGNATURE_UNSIGNED = "unsigned"
SIGNATURE_NOT_RECORDED = "not_recorded"
SIGNATURE_UNCHECKED = "unchecked"
FAILING_SIGNATURES = frozenset({SIGNATURE_FORGED, SIGNATURE_UNKNOWN_KEY})


@dataclass(frozen=True)
class AuditReport:
    deal_id: str
    events: int
    chain_ok: bool
    first_broken_step: int | None
    commitment_ok: bool
    commitment_message: str | None
    rules_ok: bool
    first_mismatch_step: int | None
    message: str | None
    expected: dict[str, Any] | None
    stored: dict[str, Any] | None
    command: str | None
    commands: int  # commands rebuilt and re-decided successfully
    stacked: bool  # a prepared deck (tests only) instead of a shuffle
    complete: bool  # the stored history ends the deal (scored or abandoned)
    end_reason: str | None
    final_scores: dict[str, int] | None  # per side, from the stored DealScored
    signature: str = SIGNATURE_UNCHECKED  # the verdict on the table's signed record of it
    signature_key_id: str | None = None
    signature_message: str | None = None  # why the verdict is not "valid"
    signed_record: dict[str, Any] | None = None  # the table's record of it, as stored
    #: The key and params of each message above (``message``, ``commitment_message``,
    #: ``signature_message``), for a page to say it in its language (docs/api.md, "Audit").
    worded: dict[str, Said] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return (
            self.chain_ok
            and self.commitment_ok
            and self.rules_ok
            and self.signature not in FAILING_SIGNATURES
        )

    def problems(self) -> list[str]:
        out = []
        if not self.chain_ok:
            out.append(f"hash chain broken at step {self.first_broken_step}")
        if not self.commitment_ok:
            out.append(f"commitment: {self.commitment_message}")
        if not self.rules_ok:
            out.append(f"rules: step {self.first_mismatch_step}: {self.message}")
        if self.signature in FAILING_SIGNATURES:
            out.append(f"signature {self.signature}: {self.signature_message}")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "deal": self.deal_id,
            "ok": self.ok,
            "events": self.events,
            "chain_ok": self.chain_ok,
            "first_broken_step": self.first_broken_step,
            "commitment_ok": self.commitment_ok,
            "commitment_message": self.commitment_message,
            "rules_ok": self.rules_ok,
            "first_mismatch_step": self.first_mismatch_step,
            "message": self.message,
            "expected": self.expected,
            "stored": self.stored,
            "command": self.command,
            "commands": self.commands,
            "stacked": self.stacked,
            "complete": self.complete,
            "end_reason": self.end_reason,
            "final_scores": self.final_scores,
            "signature": self.signature,
            "signature_key_id": self.signature_key_id,
            "signature_message": self.signature_message,
            "signed_record": self.signed_record,
            "worded": {name: said.to_dict() for name, said in self.worded.items()},
        }


@dataclass
class TableAuditReport:
    table_id: str
    deals: list[AuditReport]
    problems: list[str] = field(default_factory=list)  # table-level disagreements

    @property
    def ok(self) -> bool:
        return not self.problems and all(r.ok for r in self.deals)

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table_id,
            "ok": self.ok,
            "table_ok": not self.problems,
            "problems": list(self.problems),
            "deals": [r.to_dict() for r in self.deals],
        }
