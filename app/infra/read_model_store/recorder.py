"""The writes and queries of the read-model tables (``projections.view``), written once.

``ReadModelRecorder`` turns a projection's writes into ``:name``-parameter SQL run in a
tracked transaction (``base.TrackedTransactions``) and reads the views back; the PostgreSQL
and SQLite subclasses (``postgres.py``, ``sqlite.py``) supply the database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Tracking

from app.infra.read_model_store.base import (
    BOOLEAN_FIELDS,
    MIGRATION_ROW,
    Run,
    check_seat,
)
from app.infra.read_model_store.lobby import LobbyRecorder
from projections.view import (
    BREAKDOWN,
    DEAL_SCORES,
    DISCARD_FIELDS,
    DISCARD_LOG,
    DRAW_LOG,
    LOBBY,
    SCORE_DEALS,
    VIEW_TABLES,
)

#: Rows sort by these columns in ``rows()`` (the primary keys).
_ORDER = {
    DISCARD_LOG: "deal_id, step",
    DRAW_LOG: "deal_id, step",
    SCORE_DEALS: "deal_id",
    DEAL_SCORES: "deal_id, side",
    LOBBY: "table_id",
}


class ReadModelRecorder(LobbyRecorder):
    """Writes and reads the view tables; each write also records the tracking position."""

    # --- writes ----------------------------------------------------------------------------
    def add_discard_entry(
        self, tracking: Tracking, deal_id: UUID | str, entry: Mapping[str, Any]
    ) -> None:
        """One entry of the public discard log (``public_entry``'s dict)."""
        unknown = set(entry) - {"step", "kind", *DISCARD_FIELDS}
        if unknown:
            raise ValueError(f"the discard_log table has no column for {sorted(unknown)}")
        params = {"deal_id": self._id(deal_id), "step": entry["step"], "kind": entry["kind"]}
        params.update({field: entry.get(field) for field in DISCARD_FIELDS})
        self._append(tracking, DISCARD_LOG, params)

    def add_draw(
        self,
        tracking: Tracking,
        deal_id: UUID | str,
        *,
        step: int,
        seat: int,
        cards: Sequence[str],
        replacement: bool,
    ) -> None:
        """One draw from the stock, to the private log of ``seat`` (R-VIEW-3)."""
        row = {
            "deal_id": self._id(deal_id),
            "step": step,
            "seat": check_seat(seat),
            "cards": self._cards(cards),
            "replacement": bool(replacement),
        }
        self._append(tracking, DRAW_LOG, row)

    def open_deal(
        self, tracking: Tracking, deal_id: UUID | str, *, table_id: UUID | str, number: int
    ) -> None:
        """A deal started: remember its table and number for its scores."""
        with self._write(tracking) as run:
            run(
                f"INSERT INTO {self._table(SCORE_DEALS)} (deal_id, table_id, deal_number) "
                "VALUES (:deal_id, :table_id, :deal_number)",
                {
                    "deal_id": self._id(deal_id),
                    "table_id": self._id(table_id),
                    "deal_number": number,
                },
            )

    def score_deal(
        self,
        tracking: Tracking,
        deal_id: UUID | str,
        *,
        reason: str,
        scores: Mapping[str, Mapping[str, int]],
    ) -> None:
        """A deal was scored: each side's breakdown (R-SCORE-1)."""
        columns = (*BREAKDOWN, "breakdown")
        update = ", ".join(f"{key} = excluded.{key}" for key in columns)
        with self._write(tracking) as run:
            table_id, number = self._deal_of(run, deal_id)
            run(
                f"UPDATE {self._table(SCORE_DEALS)} SET reason = :reason WHERE deal_id = :deal_id",
                {"reason": reason, "deal_id": self._id(deal_id)},
            )
            for side, breakdown in sorted(scores.items()):
                run(
                    f"INSERT INTO {self._table(DEAL_SCORES)} "
                    f"(table_id, deal_id, deal_number, side, {', '.join(columns)}) "
                    "VALUES (:table_id, :deal_id, :deal_number, :side, "
                    f"{', '.join(':' + key for key in columns)}) "
                    f"ON CONFLICT (deal_id, side) DO UPDATE SET {update}",
                    {
                        "table_id": table_id,
                        "deal_id": self._id(deal_id),
                        "deal_number": number,
                        "side": side,
                        **{key: breakdown.get(key) for key in BREAKDOWN},
                        "total": breakdown["total"],
                        "breakdown": self._json(dict(breakdown)),
                    },
                )

    def record_deal(
        self,
        tracking: Tracking,
        table_id: UUID | str,
        *,
        deal_id: UUID | str,
        scores: Mapping[str, int],
        totals: Mapping[str, int],
    ) -> None:
        """The table recorded a deal: each side's cumulative total after it (R-GAME-1)."""
        with self._write(tracking) as run:
            _, number = self._deal_of(run, deal_id)
            for side, cumulative in sorted(totals.items()):
                run(
                    f"INSERT INTO {self._table(DEAL_SCORES)} "
                    "(table_id, deal_id, deal_number, side, total, cumulative) "
                    "VALUES (:table_id, :deal_id, :deal_number, :side, :total, :cumulative) "
                    "ON CONFLICT (deal_id, side) DO UPDATE SET cumulative = excluded.cumulative",
                    {
                        "table_id": self._id(table_id),
                        "deal_id": self._id(deal_id),
                        "deal_number": number,
                        "side": side,
                        "total": scores.get(side, 0),
                        "cumulative": cumulative,
                    },
                )

    def _deal_of(self, run: Run, deal_id: UUID | str) -> tuple[Any, int]:
        rows = run(
            f"SELECT table_id, deal_number FROM {self._table(SCORE_DEALS)} "
            "WHERE deal_id = :deal_id",
            {"deal_id": self._id(deal_id)},
        )
        if not rows:
            raise LookupError(f"deal {deal_id} was scored but its start was never projected")
        return rows[0]["table_id"], int(rows[0]["deal_number"])

    def reset(self, tables: Sequence[str]) -> None:
        """Delete every row of ``tables`` and this projection's positions, in one transaction
        (the next run processes the notification log from the start)."""
        for name in tables:
            if name not in VIEW_TABLES:
                raise ValueError(f"not a read-model table: {name!r}")
        with self._write(None) as run:
            for name in tables:
                run(f"DELETE FROM {self._table(name)}")
            run(
                f"DELETE FROM {self._tracking_table()} WHERE application_name <> :keep",
                {"keep": MIGRATION_ROW},
            )
        self._forget_moves()

    # --- queries ---------------------------------------------------------------------------
    def discard_log(
        self, deal_id: UUID | str, after_step: int | None = None
    ) -> list[dict[str, Any]]:
        """The deal's public discard log (R-VIEW-2), oldest first, entries after
        ``after_step`` only if given; each entry as ``public_entry`` made it."""
        sql = (
            f"SELECT step, kind, {', '.join(DISCARD_FIELDS)} FROM {self._table(DISCARD_LOG)} "
            "WHERE deal_id = :deal_id"
        )
        params: dict[str, Any] = {"deal_id": self._id(deal_id)}
        if after_step is not None:
            sql += " AND step > :after_step"
            params["after_step"] = int(after_step)
        with self._read() as run:
            rows = run(sql + " ORDER BY step", params)
        entries = []
        for row in rows:
            entry: dict[str, Any] = {"step": int(row["step"]), "kind": row["kind"]}
            for field in DISCARD_FIELDS:
                value = row[field]
                if value is not None:
                    entry[field] = bool(value) if field in BOOLEAN_FIELDS else value
            entries.append(entry)
        return entries

    def draw_log(self, deal_id: UUID | str, seat: int) -> list[dict[str, Any]]:
        """The private draw log of ``seat`` in the deal (R-VIEW-3): its rows only."""
        with self._read() as run:
            rows = run(
                f"SELECT step, seat, cards, replacement FROM {self._table(DRAW_LOG)} "
                "WHERE deal_id = :deal_id AND seat = :seat ORDER BY step",
                {"deal_id": self._id(deal_id), "seat": check_seat(seat)},
            )
        return [
            {
                "step": int(row["step"]),
                "seat": int(row["seat"]),
                "cards": self._cards_out(row["cards"]),
                "replacement": bool(row["replacement"]),
            }
            for row in rows
        ]

    def score_table(self, table_id: UUID | str) -> dict[str, Any]:
        """The game's score table: every deal the table recorded, in order, with each side's
        breakdown (R-SCORE-1), deal total and cumulative total; ``totals`` after the last."""
        with self._read() as run:
            rows = run(
                "SELECT d.deal_id, d.deal_number, d.reason, s.side, s.total, s.breakdown, "
                f"s.cumulative FROM {self._table(DEAL_SCORES)} s "
                f"JOIN {self._table(SCORE_DEALS)} d ON d.deal_id = s.deal_id "
                "WHERE s.table_id = :table_id AND s.cumulative IS NOT NULL "
                "ORDER BY d.deal_number, s.side",
                {"table_id": self._id(table_id)},
            )
        deals: list[dict[str, Any]] = []
        for row in rows:
            deal_id = str(self._id(row["deal_id"]))
            if not deals or deals[-1]["deal_id"] != deal_id:
                deals.append(
                    {
                        "deal_id": deal_id,
                        "number": int(row["deal_number"]),
                        "reason": row["reason"],
                        "scores": {},
                    }
                )
            side: dict[str, Any] = (
                self._json_out(row["breakdown"])
                if row["breakdown"] is not None
                else {"total": row["total"]}  # recorded by the table, not scored (yet)
            )
            side["cumulative"] = row["cumulative"]
            deals[-1]["scores"][row["side"]] = side
        totals = {s: v["cumulative"] for s, v in deals[-1]["scores"].items()} if deals else {}
        return {"table_id": str(self._id(table_id)), "deals": deals, "totals": totals}

    def rows(self, table: str) -> list[dict[str, Any]]:
        """Every row of a view table in primary-key order (checks and diagnostics)."""
        if table not in VIEW_TABLES:
            raise ValueError(f"not a read-model table: {table!r}")
        with self._read() as run:
            rows = run(f"SELECT * FROM {self._table(table)} ORDER BY {_ORDER[table]}")
        return [self._plain(table, row) for row in rows]
