"""Reading what the application stored, past its repository and snapshots (and what the lobby
must show of it: a table's last move), and tampering with it the way an intruder would (an
UPDATE of a stored row in the SQLite file)."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

from app.application import CanastaApp
from domain.deal import Deal
from projections.read_models import TABLE_DEAL_OPENED


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


#: The lobby stores a deal's move when it is at least this much past the stored one
#: (docs/api.md, "The lobby").
LAST_MOVE_GRANULARITY = timedelta(seconds=60)
#: Deal events whose time is not a move the lobby counts (their deal's start is).
NOT_MOVES = {"DeckShuffled", "DeckStacked"}


def expected_last_move(app: Any, table_id: UUID | str) -> datetime | None:
    """The lobby's last move of a table, by the notification log's order: each table event
    (never back in time), and each public event of the table's current deal that is at least
    ``LAST_MOVE_GRANULARITY`` past the last one stored."""
    table = UUID(str(table_id))
    current: str | None = None
    stored: datetime | None = None
    for n in app.recorder.select_notifications(start=None, limit=10**7):
        event = app.mapper.to_domain_event(n)
        at = event.timestamp
        if event.originator_id == table:
            stored = at if stored is None else max(stored, at)
            if isinstance(event, TABLE_DEAL_OPENED):
                current = event.deal_id
        elif (
            str(event.originator_id) == current
            and type(event).__name__ not in NOT_MOVES
            and (stored is None or at - stored >= LAST_MOVE_GRANULARITY)
        ):
            stored = at
    return stored
