"""Reading what the application stored, past its repository and snapshots, and tampering with
it the way an intruder would (an UPDATE of a stored row in the SQLite file)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any
from uuid import UUID

from app.application import CanastaApp
from domain.deal import Deal


def stored_versions(app: CanastaApp, deal_id: UUID) -> list[int]:
    """The versions of the deal's stored events, in the order the store returns them."""
    return [e.originator_version for e in app.events.get(deal_id)]


def fold_stored_events(app: CanastaApp, deal_id: UUID) -> Deal:
    """Rebuild the deal by folding every stored event, without the repository or snapshots."""
    aggregate: Any = None
    event: Any
    for event in app.events.get(deal_id):
        aggregate = event.mutate(aggregate)
    assert isinstance(aggregate, Deal)
    return aggregate


def sqlite_tamper(path: Path, deal: str, version: int, state: bytes) -> None:
    """Overwrites the stored state of the deal's event ``version`` in the SQLite file."""
    with sqlite3.connect(path) as db:
        cur = db.execute(
            "UPDATE stored_events SET state = ? WHERE originator_id = ? AND originator_version = ?",
            (state, UUID(deal).hex, version),
        )
        assert cur.rowcount == 1


def sqlite_row(path: Path, deal: str, kind: str, nth: int) -> tuple[int, dict[str, Any]]:
    """The ``nth`` stored event of ``kind`` of the deal: (version, decoded state)."""
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT originator_version, state FROM stored_events WHERE originator_id = ? "
            "AND topic = ? ORDER BY originator_version",
            (UUID(deal).hex, f"domain.events:{kind}"),
        ).fetchall()
    version, state = rows[nth]
    return int(version), json.loads(state)
