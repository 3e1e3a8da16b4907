"""Forging a finished deal the way an intruder with write access to the database would:
another legal history of the same deal (a different shuffle, played to its end), given the
deal's ids, its chain recomputed link by link, its commitment recomputed from the new seed,
and the table's record of the deal (scores, totals, last link) rewritten to match. The hash
chain, the commitment, the rules and the table's arithmetic then all agree; only the
server's signature of the record, which the intruder cannot make, gives it away."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg

from app.application import CanastaApp
from app.arena import MEMORY_ENV
from app.autoplay import SeededRandom
from domain.chain import GENESIS, event_data, link
from domain.shuffle import commitment
from tests.support.games import play_to_end, seated_table

DEAL_RECORDED = "domain.table:Table.DealRecorded"


def forged_rows(server: CanastaApp, deal_id: UUID, seed: int) -> list[tuple[str, int, bytes]]:
    """The stored rows (topic, version, state) of another legal history of ``deal_id``:
    the same table, players, seats and dealer, another shuffle; its chain and commitment
    recomputed for the deal's id."""
    original: Any = next(iter(server.events.get(deal_id)))
    forger = CanastaApp(env=MEMORY_ENV, random=SeededRandom(seed), allow_stacked_decks=True)
    try:
        players = list(original.player_ids)
        table_id = seated_table(forger, players, original.variant)
        other = forger.start_game(table_id, players[0], dealer=original.dealer)
        play_to_end(forger, other, random.Random(seed))
        events: list[Any] = list(forger.events.get(other))
    finally:
        forger.close()
    prev = GENESIS
    rows = []
    for event in events:
        fields: dict[str, Any] = event.__dict__
        fields["originator_id"] = deal_id
        if event.originator_version == 1:
            fields["table_id"] = original.table_id
        if event.originator_version == 2:  # the seed: recommit to it under the deal's id
            events[0].__dict__["commitment"] = commitment(str(deal_id), bytes.fromhex(event.seed))
    for event in events:  # the chain, recomputed over the rewritten events
        kind = type(event).__name__
        ts = event.timestamp.isoformat()
        prev = link(prev, str(deal_id), event.originator_version, kind, ts, event_data(event))
        event.__dict__["chain"] = prev
        stored = server.mapper.to_stored_event(event)
        rows.append((stored.topic, stored.originator_version, bytes(stored.state)))
    return rows


def rewritten_record(record: dict[str, Any], rows: list[tuple[str, int, bytes]]) -> dict[str, Any]:
    """The table's ``DealRecorded`` state made to agree with the forged history (its
    signature left as it was: the intruder has no key)."""
    scored = json.loads(rows[-1][2])
    scores = {side: int(b["total"]) for side, b in scored["scores"].items()}
    before = {side: record["totals"][side] - record["scores"][side] for side in record["totals"]}
    totals = {side: before[side] + scores.get(side, 0) for side in before}
    final_link = json.loads(rows[-1][2])["chain"]
    return {**record, "scores": scores, "totals": totals, "final_link": final_link}


def forge_sqlite(server: CanastaApp, db: Path, table_id: UUID, deal_id: UUID, seed: int) -> None:
    rows = forged_rows(server, deal_id, seed)
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM stored_events WHERE originator_id = ?", (deal_id.hex,))
        conn.executemany(
            "INSERT INTO stored_events (originator_id, originator_version, topic, state) "
            "VALUES (?, ?, ?, ?)",
            [(deal_id.hex, version, topic, state) for topic, version, state in rows],
        )
        found = conn.execute(
            "SELECT originator_version, state FROM stored_events WHERE originator_id = ? "
            "AND topic = ?",
            (table_id.hex, DEAL_RECORDED),
        ).fetchall()
        (version, state), *_ = [r for r in found if json.loads(r[1])["deal_id"] == str(deal_id)]
        record = rewritten_record(json.loads(state), rows)
        conn.execute(
            "UPDATE stored_events SET state = ? WHERE originator_id = ? AND originator_version = ?",
            (json.dumps(record).encode(), table_id.hex, version),
        )


def forge_postgres(server: CanastaApp, url: str, table_id: UUID, deal_id: UUID, seed: int) -> None:
    rows = forged_rows(server, deal_id, seed)
    with psycopg.connect(url) as conn:
        conn.execute("DELETE FROM canasta_events WHERE originator_id = %s", (deal_id,))
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO canasta_events (originator_id, originator_version, topic, state) "
                "VALUES (%s, %s, %s, %s)",
                [(deal_id, version, topic, state) for topic, version, state in rows],
            )
        found = conn.execute(
            "SELECT originator_version, state FROM canasta_events WHERE originator_id = %s "
            "AND topic = %s",
            (table_id, DEAL_RECORDED),
        ).fetchall()
        (version, state), *_ = [
            r for r in found if json.loads(bytes(r[1]))["deal_id"] == str(deal_id)
        ]
        record = rewritten_record(json.loads(bytes(state)), rows)
        conn.execute(
            "UPDATE canasta_events SET state = %s "
            "WHERE originator_id = %s AND originator_version = %s",
            (json.dumps(record).encode(), table_id, version),
        )
