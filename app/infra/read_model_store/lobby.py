"""The lobby's writes and query (``projections.view``'s ``tables``), written once.

``LobbyRecorder`` is the part of ``ReadModelRecorder`` (``recorder.py``) that writes and reads
the lobby, one row per table. Besides what the table's own events set, each row keeps
``last_move_at``: the time of the table's last move as far as the lobby knows it, a table
event or any public event of its current deal (``note_lobby_move``). A deal event does not
write the row each time: only when its time is at least a granularity (the projection's,
60 s) past the stored one, so the row's time is at most that much behind the last move, and
the lobby writes a table in play about once a minute, not at every move. The rule is decided
by the database (a conditional UPDATE) and so depends only on the events: a rebuild writes the
same times. What this process last stored for each deal is kept in memory, only to skip the
writes the database would not make; a process that knows nothing (restarted) writes at the
first move it sees.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from functools import partial
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Tracking

from app.infra.read_model_store.base import (
    JSON_COLUMNS,
    UUID_COLUMNS,
    Run,
    TrackedTransactions,
    check_seat,
)
from domain.bot_names import bot_level
from domain.table import PLAYING
from projections.view import LOBBY, LOBBY_CHANGES, LOBBY_STATUSES

#: Deals whose stored last move this process remembers (the oldest remembered is forgotten
#: first; a deal forgotten costs one write at its next move).
KNOWN_MOVES_MAX = 10_000


class LobbyRecorder(TrackedTransactions):
    """Writes and reads the lobby (``tables``); each write also records the tracking
    position."""

    # --- writes ----------------------------------------------------------------------------
    def add_lobby_table(
        self,
        tracking: Tracking,
        table_id: UUID | str,
        *,
        host: str,
        entry: str,
        players: int,
        options: Mapping[str, Any],
        target: int,
        version: int,
        at: datetime,
        listed: bool = True,
        spectators: bool = True,
        turn_seconds: int | None = None,
    ) -> None:
        """A table was created: it is open, every seat free; ``listed`` and ``spectators``
        say when the lobby lists it (``lobby``); ``turn_seconds``: its turn clock."""
        with self._write(tracking) as run:
            run(
                f"INSERT INTO {self._table(LOBBY)} "
                "(table_id, entry, players, options, target, host, seats, status, deals, "
                "version, created_position, updated_position, created_at, updated_at, "
                "listed, spectators, turn_seconds, away, last_move_at) "
                "VALUES (:table_id, :entry, :players, :options, :target, :host, :seats, "
                ":status, 0, :version, :position, :position, :at, :at, :listed, :spectators, "
                ":turn_seconds, :away, :at)",
                {
                    "table_id": self._id(table_id),
                    "entry": entry,
                    "players": players,
                    "options": self._json(dict(options)),
                    "target": target,
                    "host": host,
                    "seats": self._json([None] * players),
                    "status": LOBBY_STATUSES[0],
                    "version": version,
                    "position": tracking.notification_id,
                    "at": self._time(at),
                    "listed": listed,
                    "spectators": spectators,
                    "turn_seconds": turn_seconds,
                    "away": self._json([]),
                },
            )

    def seat_lobby_player(
        self,
        tracking: Tracking,
        table_id: UUID | str,
        *,
        seat: int,
        player: str | None,
        version: int,
        at: datetime,
    ) -> None:
        """A player took a seat (None: he left it before the start, docs/tables.md). The seats are read and written in the transaction that
        recorded the position first, so no other runner of this projection is in between."""
        with self._write(tracking) as run:
            rows = run(
                f"SELECT seats FROM {self._table(LOBBY)} WHERE table_id = :table_id",
                {"table_id": self._id(table_id)},
            )
            if not rows:
                raise LookupError(f"a seat was taken at table {table_id}, never created")
            seats = list(self._json_out(rows[0]["seats"]))
            seats[check_seat(seat)] = player
            self._update_lobby(run, tracking, table_id, version, at, {"seats": seats})

    def set_lobby_away(
        self,
        tracking: Tracking,
        table_id: UUID | str,
        *,
        seat: int,
        away: bool,
        version: int,
        at: datetime,
        player: str | None = None,
    ) -> None:
        """The bot plays ``seat`` for its absent player (``away``), or a person plays it
        again (``player``: the one the host gave it to). Read and written in the transaction
        that recorded the position first, as ``seat_lobby_player``."""
        with self._write(tracking) as run:
            rows = run(
                f"SELECT seats, away FROM {self._table(LOBBY)} WHERE table_id = :table_id",
                {"table_id": self._id(table_id)},
            )
            if not rows:
                raise LookupError(f"a seat changed hands at table {table_id}, never created")
            seats = list(self._json_out(rows[0]["seats"]))
            marked = set(self._json_out(rows[0]["away"])) - {check_seat(seat)}
            changes: dict[str, Any] = {"away": sorted(marked | ({seat} if away else set()))}
            if player is not None:
                seats[seat] = player
                changes["seats"] = seats
            self._update_lobby(run, tracking, table_id, version, at, changes)

    def update_lobby_table(
        self,
        tracking: Tracking,
        table_id: UUID | str,
        *,
        version: int,
        at: datetime,
        **changes: Any,
    ) -> None:
        """Teams chosen, game started, a deal opened or recorded, game ended or stopped:
        set the ``changes`` (columns of ``LOBBY_CHANGES``)."""
        unknown = set(changes) - set(LOBBY_CHANGES)
        if unknown:
            raise ValueError(f"the lobby has no column for {sorted(unknown)}")
        if "status" in changes and changes["status"] not in LOBBY_STATUSES:
            raise ValueError(f"not a table status: {changes['status']!r}")
        with self._write(tracking) as run:
            self._update_lobby(run, tracking, table_id, version, at, changes)

    def _update_lobby(
        self,
        run: Run,
        tracking: Tracking,
        table_id: UUID | str,
        version: int,
        at: datetime,
        changes: Mapping[str, Any],
    ) -> None:
        params: dict[str, Any] = {}
        for column, value in changes.items():
            if value is not None and column in JSON_COLUMNS:
                value = self._json(value)
            elif value is not None and column in UUID_COLUMNS:
                value = self._id(value)
            params[column] = value
        assignments = "".join(f"{column} = :{column}, " for column in params)
        params.update(
            table_id=self._id(table_id),
            version=version,
            position=tracking.notification_id,
            at=self._time(at),
        )
        # A table event is a move too (last_move_at never goes back: an event of another
        # aggregate may have been recorded a moment later but notified first).
        updated = run(
            f"UPDATE {self._table(LOBBY)} SET {assignments}version = :version, "
            "updated_position = :position, updated_at = :at, last_move_at = CASE "
            "WHEN last_move_at IS NULL OR last_move_at < :at THEN :at ELSE last_move_at END "
            "WHERE table_id = :table_id RETURNING table_id",
            params,
        )
        if not updated:
            raise LookupError(f"table {table_id} changed but its creation was never projected")

    def note_lobby_move(
        self, tracking: Tracking, deal_id: UUID | str, *, at: datetime, granularity: timedelta
    ) -> None:
        """An event of deal ``deal_id`` at ``at``: if it is its table's current deal, the
        table's ``last_move_at`` becomes ``at`` when that is at least ``granularity`` past
        the stored time (or none is stored); otherwise only the position is recorded."""
        key = str(deal_id)
        notes = self._batch_notes()  # what this batch stored, not committed yet
        stored = notes.get(("last_move", key)) if notes is not None else None
        if stored is None:
            stored = self._known_moves().get(key)
        if stored is not None and at < stored + granularity:
            self.track(tracking)  # the database would change nothing
            return
        with self._write(tracking) as run:
            rows = run(
                f"UPDATE {self._table(LOBBY)} SET last_move_at = CASE "
                "WHEN last_move_at IS NULL OR last_move_at <= :due THEN :at "
                "ELSE last_move_at END "
                "WHERE current_deal = :deal_id RETURNING last_move_at",
                {
                    "deal_id": self._id(deal_id),
                    "at": self._time(at),
                    "due": self._time(at - granularity),
                },
            )
        if rows:  # a deal no table has as its current one is not remembered
            now = datetime.fromisoformat(self._time_out(rows[0]["last_move_at"]))
            if notes is not None:
                notes[("last_move", key)] = now
            self._after_commit(partial(self._remember_move, key, now))

    def _known_moves(self) -> dict[str, datetime]:
        known: dict[str, datetime] | None = self.__dict__.get("_moves_stored")
        if known is None:
            known = self.__dict__.setdefault("_moves_stored", {})
        return known

    def _remember_move(self, deal_id: str, stored: datetime) -> None:
        known = self._known_moves()
        known.pop(deal_id, None)
        known[deal_id] = stored  # the latest last
        while len(known) > KNOWN_MOVES_MAX:
            known.pop(next(iter(known)))

    def _forget_moves(self) -> None:
        """The rows were emptied (a rebuild): what this process stored is gone."""
        self._known_moves().clear()

    # --- the query -------------------------------------------------------------------------
    def lobby(
        self,
        status: str = "open",
        limit: int = 100,
        *,
        moved_since: datetime | None = None,
        moved_before: datetime | None = None,
    ) -> list[dict[str, Any]]:
        """The tables of one status: what a lobby lists (all of it public). Tables in play
        by their last move, the latest first; the others newest first. Never an unlisted
        table; a table without spectators only while it is open. ``moved_since``: only the
        tables whose stored last move is at or after it; ``moved_before``: before it."""
        if status not in LOBBY_STATUSES:
            raise ValueError(f"not a table status: {status!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"not a limit: {limit!r}")
        params: dict[str, Any] = {
            "status": status,
            "limit": limit,
            "yes": True,
            "open": LOBBY_STATUSES[0],
        }
        moved = ""
        if moved_since is not None:
            moved += " AND last_move_at >= :since"
            params["since"] = self._time(moved_since)
        if moved_before is not None:
            moved += " AND last_move_at < :before"
            params["before"] = self._time(moved_before)
        order = "last_move_at DESC, " if status == PLAYING else ""
        with self._read() as run:
            rows = run(
                f"SELECT * FROM {self._table(LOBBY)} WHERE status = :status "
                f"AND listed = :yes AND (status = :open OR spectators = :yes){moved} "
                f"ORDER BY {order}created_position DESC LIMIT :limit",
                params,
            )
        tables = []
        for row in rows:
            plain = self._plain(LOBBY, row)
            seats = plain["seats"]
            tables.append(
                {
                    "id": plain["table_id"],
                    "entry": plain["entry"],
                    "players": plain["players"],
                    "options": plain["options"],
                    "target": plain["target"],
                    "host": plain["host"],
                    "seats": seats,
                    "bots": [bot_level(name) for name in seats],
                    "free_seats": sum(1 for name in seats if name is None),
                    "away": plain["away"],
                    "turn_seconds": plain["turn_seconds"],
                    "sides": plain["sides"],
                    "totals": plain["totals"],
                    "status": plain["status"],
                    "deals": plain["deals"],
                    "current_deal": plain["current_deal"],
                    "winners": plain["winners"],
                    "version": plain["version"],
                    "created_at": plain["created_at"],
                    "updated_at": plain["updated_at"],
                    # Null only in a row written by a server older than revision 0009.
                    "last_move_at": plain.get("last_move_at") or plain["updated_at"],
                }
            )
        return tables
