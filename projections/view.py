"""What the read-model projections write: the view tables, their columns, and the writer.

The projections (``projections.read_models``) decide which rows an event produces and hand
them to a ``ReadModelView``; the database code that stores them (tables, transactions,
tracking) is infrastructure: ``app.infra.read_model_store``. The tables:

- ``discard_log``: the public discard log of every deal (R-VIEW-2), one row per entry of
  ``projections.discard_log.public_entry``;
- ``draw_log``: each seat's private draws from the stock (R-VIEW-3), one row per
  ``CardsDrawn`` event; a query always names the one seat whose rows it returns;
- ``score_deals`` and ``deal_scores``: the score table (R-SCORE-1, R-GAME-1), per deal and
  per side, with the breakdown of the deal's score and the side's cumulative total;
- ``tables``: the lobby, one row per table (entry, options, host, who sits where, status),
  from the table aggregate's events, and the time of its last move (``last_move_at``, also
  from the public events of its current deal, within a granularity); everything in it is
  public (``GET /tables/{id}``; a move's time is public: spectators see the moves).

Every write records the position of the event it comes from (``Tracking``) in the same
transaction as the rows; a notification already processed is refused with
``AlreadyProcessed`` and nothing is written.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Tracking, TrackingRecorder

DISCARD_LOG = "discard_log"
DRAW_LOG = "draw_log"
SCORE_DEALS = "score_deals"
DEAL_SCORES = "deal_scores"
LOBBY = "tables"
VIEW_TABLES = (DISCARD_LOG, DRAW_LOG, SCORE_DEALS, DEAL_SCORES, LOBBY)

#: A table's status in the lobby (``domain.table``'s statuses).
LOBBY_STATUSES = ("open", "playing", "finished", "stopped")
#: Lobby columns a table event may change besides its version and position.
LOBBY_CHANGES = (
    "sides",
    "totals",
    "status",
    "deals",
    "current_deal",
    "winners",
    "spectators",
    "turn_seconds",
)

#: The parts of a side's deal score (domain.scoring), one column each, ``total`` last. The
#: whole breakdown is kept too (column ``breakdown``, JSON), so that a part added to the
#: domain later is shown at once and only needs a migration to become a column.
BREAKDOWN = (
    "melds",
    "natural_canastas",
    "mixed_canastas",
    "wild_canastas",
    "special_canastas",
    "canasta_bonus",
    "going_out",
    "concealed",
    "red_threes",
    "hands",
    "penalties",
    "ponytails",
    "cut_bonus",
    "total",
)

#: Columns of ``discard_log`` besides deal_id, step and kind; an entry sets only its own.
DISCARD_FIELDS = ("seat", "card", "top", "size", "crosswise", "partner", "yes")


class AlreadyProcessed(Exception):
    """This projection has already processed the notification: nothing was written."""


class ReadModelView(TrackingRecorder, ABC):
    """The writes a projection makes: each records ``tracking`` in the same transaction as
    its rows, or raises ``AlreadyProcessed`` and writes nothing."""

    @abstractmethod
    def in_batch(self) -> bool:
        """True inside a batch (one transaction for many events; no retries inside)."""

    @abstractmethod
    def track(self, tracking: Tracking) -> None:
        """Record that an event was processed without changing any view row."""

    @abstractmethod
    def add_discard_entry(
        self, tracking: Tracking, deal_id: UUID | str, entry: Mapping[str, Any]
    ) -> None:
        """One entry of the public discard log (``public_entry``'s dict)."""

    @abstractmethod
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

    @abstractmethod
    def open_deal(
        self, tracking: Tracking, deal_id: UUID | str, *, table_id: UUID | str, number: int
    ) -> None:
        """A deal started: remember its table and number for its scores."""

    @abstractmethod
    def score_deal(
        self,
        tracking: Tracking,
        deal_id: UUID | str,
        *,
        reason: str,
        scores: Mapping[str, Mapping[str, int]],
    ) -> None:
        """A deal was scored: each side's breakdown (R-SCORE-1)."""

    @abstractmethod
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

    @abstractmethod
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
        """A table was created: it is open, every seat free. An unlisted (private) table
        is never listed; one without spectators only while it is open (docs/tables.md).
        ``turn_seconds``: its turn clock (None: none)."""

    @abstractmethod
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
        """A player took a seat (None: he left it before the start, docs/tables.md)."""

    @abstractmethod
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
        again: he came back, or (``player``) the host gave it to him (docs/tables.md)."""

    @abstractmethod
    def update_lobby_table(
        self,
        tracking: Tracking,
        table_id: UUID | str,
        *,
        version: int,
        at: datetime,
        **changes: Any,
    ) -> None:
        """Set the ``changes`` (columns of ``LOBBY_CHANGES``) of a lobby row."""

    @abstractmethod
    def note_lobby_move(
        self, tracking: Tracking, deal_id: UUID | str, *, at: datetime, granularity: timedelta
    ) -> None:
        """An event of deal ``deal_id`` at ``at``: the table whose current deal it is moved
        then. Its ``last_move_at`` is set to ``at`` only when that is at least
        ``granularity`` past the stored time (a table event sets it at every event)."""


__all__ = [
    "BREAKDOWN",
    "DEAL_SCORES",
    "DISCARD_FIELDS",
    "DISCARD_LOG",
    "DRAW_LOG",
    "LOBBY",
    "LOBBY_CHANGES",
    "LOBBY_STATUSES",
    "SCORE_DEALS",
    "VIEW_TABLES",
    "AlreadyProcessed",
    "ReadModelView",
]
