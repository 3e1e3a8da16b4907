"""The read-model projections: which events each one reads and what it writes.

Each is an ``eventsourcing.projection.Projection`` over a ``ReadModelView``
(``projections.view``; the database behind it is ``app.infra.read_model_store``), with ``topics`` so that only its own events are read from the
notification log. ``process_event`` writes the rows and the tracking position in one
transaction; a notification already processed is skipped (``AlreadyProcessed``), so
delivering an event twice changes nothing. Transient database errors are retried, which the
tracking makes safe.

The projection objects run under the pull runner of ``app.infra.projection_runner`` (batches of
notifications, one transaction each), on every backend; they would also run under the
library's ``ProjectionRunner`` (one transaction per event), which this project no longer uses.
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, ClassVar
from uuid import UUID

from eventsourcing.persistence import InterfaceError, OperationalError, Tracking
from eventsourcing.projection import Projection
from eventsourcing.utils import get_topic, retry

from domain.deal import Deal
from domain.events import (
    EVENT_CLASSES,
    CardDiscarded,
    CardsDrawn,
    CardTurnedUp,
    DealScored,
    PartnerAnswered,
    PartnerAsked,
    PileTaken,
)
from domain.table import FINISHED, PLAYING, STOPPED, Table
from projections.discard_log import public_entry
from projections.view import (
    DEAL_SCORES,
    DISCARD_LOG,
    DRAW_LOG,
    LOBBY,
    SCORE_DEALS,
    AlreadyProcessed,
    ReadModelView,
)
from projections.visibility import SECRET_KINDS

logger = logging.getLogger(__name__)

#: The table aggregate's events (classes declared by ``@event`` in ``domain.table``).
TABLE_CREATED: type[Any] = Table.Created
TABLE_PLAYER_SEATED: type[Any] = Table.PlayerSeated  # type: ignore[attr-defined]
TABLE_TEAMS_CHOSEN: type[Any] = Table.TeamsChosen  # type: ignore[attr-defined]
TABLE_GAME_STARTED: type[Any] = Table.GameStarted  # type: ignore[attr-defined]
TABLE_DEAL_OPENED: type[Any] = Table.DealOpened  # type: ignore[attr-defined]
TABLE_DEAL_RECORDED: type[Any] = Table.DealRecorded  # type: ignore[attr-defined]
TABLE_GAME_ENDED: type[Any] = Table.GameEnded  # type: ignore[attr-defined]
TABLE_GAME_STOPPED: type[Any] = Table.GameStopped  # type: ignore[attr-defined]
TABLE_SPECTATORS_SET: type[Any] = Table.SpectatorsSet  # type: ignore[attr-defined]
TABLE_INVITE_ROTATED: type[Any] = Table.InviteRotated  # type: ignore[attr-defined]
TABLE_REMATCH_OPENED: type[Any] = Table.RematchOpened  # type: ignore[attr-defined]
#: Absent players (docs/tables.md): a seat freed before the start, or given, changes who sits
#: there; a takeover or a return which seats the bot plays for an absent player (``away``); the
#: turn clock set before the start, the table's ``turn_seconds``. The limit of missed turns
#: moves the lobby's step of the table only.
TABLE_SEAT_LEFT: type[Any] = Table.SeatLeft  # type: ignore[attr-defined]
TABLE_SEAT_GIVEN: type[Any] = Table.SeatGiven  # type: ignore[attr-defined]
TABLE_SEAT_TAKEN_OVER: type[Any] = Table.SeatTakenOver  # type: ignore[attr-defined]
TABLE_SEAT_TAKEN_BACK: type[Any] = Table.SeatTakenBack  # type: ignore[attr-defined]
TABLE_TURN_CLOCK_SET: type[Any] = Table.TurnClockSet  # type: ignore[attr-defined]
TABLE_STEP_ONLY: tuple[type[Any], ...] = (
    Table.MissedTurnsLimitSet,  # type: ignore[attr-defined]
)

#: A deal's moves, for the lobby's last move of its table: its start and every event a
#: spectator is shown (the secret ones come with the start anyway).
DEAL_MOVES: tuple[type[Any], ...] = (
    Deal.Started,
    *(cls for kind, cls in EVENT_CLASSES.items() if kind not in SECRET_KINDS),
)
#: The lobby writes a table's last move when it is at least this much past the stored one
#: (a table event writes it always): a table in play is written about once a minute, not
#: at every move, and its ``last_move_at`` is at most this much behind (docs/api.md).
LAST_MOVE_GRANULARITY = timedelta(seconds=60)


def topics_of(*classes: type[Any]) -> tuple[str, ...]:
    return tuple(get_topic(cls) for cls in classes)


class ReadModelProjection(Projection[ReadModelView]):
    """Base class: ``project()`` writes one event through the view, tracked.

    ``name`` names the projection's tracking table (``<name>_tracking``) and its environment
    prefix; ``tables`` are the view tables it alone writes (emptied by a rebuild). A subclass
    of a concrete projection keeps its name (and so its tracking table).
    """

    name = ""
    tables: ClassVar[tuple[str, ...]] = ()
    #: Topics (of ``topics``) whose events the projection reads for their aggregate and time
    #: only: a runner that can read a stored event's time without decoding the event passes
    #: those to ``process_move`` instead of ``process_event``.
    move_topics: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Unlike the library's default (the class name), a subclass keeps its parent's name.
        if not cls.__dict__.get("name") and not getattr(cls, "name", ""):
            cls.name = cls.__name__

    def process_event(self, domain_event: Any, tracking: Tracking) -> None:
        self._write(self.project, tracking, domain_event, tracking)

    def process_move(self, originator_id: UUID, at: datetime, tracking: Tracking) -> None:
        """An event of ``move_topics``, given by its aggregate and time: as ``process_event``."""
        self._write(self.project_move, tracking, originator_id, at, tracking)

    def _write(self, write: Callable[..., None], tracking: Tracking, *args: Any) -> None:
        """``write(*args)``, retried on a connection error outside a batch (in one, an error
        rolls the batch back and a later catch-up redoes it); an event already processed is
        skipped."""
        try:
            if self.view.in_batch():
                write(*args)
            else:
                self._with_retries(write, *args)
        except AlreadyProcessed:
            logger.debug(
                "%s: notification %s already processed", self.name, tracking.notification_id
            )

    @retry((InterfaceError, OperationalError), max_attempts=5, wait=0.2)
    def _with_retries(self, write: Callable[..., None], *args: Any) -> None:
        write(*args)

    def project_move(self, originator_id: UUID, at: datetime, tracking: Tracking) -> None:
        """Write what an event of ``move_topics`` adds (none unless ``move_topics``)."""
        raise NotImplementedError(f"{self.name} reads no event by its time alone")

    @abstractmethod
    def project(self, event: Any, tracking: Tracking) -> None:
        """Write what ``event`` adds to the view, with ``tracking``, in one transaction."""


class DiscardLogProjection(ReadModelProjection):
    """The public discard log (R-VIEW-2): ``public_entry`` of each deal event."""

    name = "discard_log"
    tables = (DISCARD_LOG,)
    topics = topics_of(CardTurnedUp, CardDiscarded, PileTaken, PartnerAsked, PartnerAnswered)

    def project(self, event: Any, tracking: Tracking) -> None:
        entry = public_entry(event)
        if entry is None:
            self.view.track(tracking)
        else:
            self.view.add_discard_entry(tracking, event.originator_id, entry)


class DrawLogProjection(ReadModelProjection):
    """Each seat's private draw log (R-VIEW-3): the cards it drew from the stock,
    replacements of red threes included."""

    name = "draw_log"
    tables = (DRAW_LOG,)
    topics = topics_of(CardsDrawn)

    def project(self, event: Any, tracking: Tracking) -> None:
        if isinstance(event, CardsDrawn):
            self.view.add_draw(
                tracking,
                event.originator_id,
                step=event.originator_version,
                seat=event.seat,
                cards=event.cards,
                replacement=event.replacement,
            )
        else:
            self.view.track(tracking)


class ScoreTableProjection(ReadModelProjection):
    """The score table (R-SCORE-1, R-GAME-1): per deal and side, the breakdown from the
    deal's ``DealScored`` and the cumulative total from the table's ``DealRecorded``."""

    name = "score_table"
    tables = (SCORE_DEALS, DEAL_SCORES)
    topics = topics_of(Deal.Started, DealScored, TABLE_DEAL_RECORDED)

    def project(self, event: Any, tracking: Tracking) -> None:
        if isinstance(event, Deal.Started):
            self.view.open_deal(
                tracking, event.originator_id, table_id=UUID(event.table_id), number=event.number
            )
        elif isinstance(event, DealScored):
            self.view.score_deal(
                tracking, event.originator_id, reason=event.reason, scores=event.scores
            )
        elif isinstance(event, TABLE_DEAL_RECORDED):
            self.view.record_deal(
                tracking,
                event.originator_id,
                deal_id=UUID(event.deal_id),
                scores=event.scores,
                totals=event.totals,
            )
        else:
            self.view.track(tracking)


class LobbyProjection(ReadModelProjection):
    """The lobby: one row per table, from every event of the table aggregate (R-SEAT-3,
    R-SEAT-5, R-GAME-1, R-GAME-2) and the times of its deals' public events. All of it is
    public, as ``GET /tables/{id}`` and the deals' public views show.

    Besides the set-up (entry, players, options, target, host, turn clock), the seats, the
    seats the bot plays for absent players and the sides, it
    keeps the status, the number of deals opened and the current deal (so that a spectator
    finds the deal to watch), the totals, the winners, the table's version (its step, as
    ``GET /tables/{id}`` shows it) and the positions and times of its creation and last
    change, and the time of its last move: a table event or a public event of its current
    deal (``DEAL_MOVES``, read for their deal and time only: ``move_topics``), written at
    most once per ``LAST_MOVE_GRANULARITY`` (the order of the tables in play, and which are
    idle)."""

    name = "lobby"
    tables = (LOBBY,)
    topics = topics_of(
        TABLE_CREATED,
        TABLE_PLAYER_SEATED,
        TABLE_TEAMS_CHOSEN,
        TABLE_GAME_STARTED,
        TABLE_DEAL_OPENED,
        TABLE_DEAL_RECORDED,
        TABLE_GAME_ENDED,
        TABLE_GAME_STOPPED,
        TABLE_SPECTATORS_SET,
        TABLE_INVITE_ROTATED,
        TABLE_REMATCH_OPENED,
        TABLE_SEAT_LEFT,
        TABLE_SEAT_GIVEN,
        TABLE_SEAT_TAKEN_OVER,
        TABLE_SEAT_TAKEN_BACK,
        TABLE_TURN_CLOCK_SET,
        *TABLE_STEP_ONLY,
        *DEAL_MOVES,
    )
    #: A deal's move counts by its deal and time only (the runner reads no more of it).
    move_topics = frozenset(topics_of(*DEAL_MOVES))

    def project_move(self, originator_id: UUID, at: datetime, tracking: Tracking) -> None:
        self.view.note_lobby_move(tracking, originator_id, at=at, granularity=LAST_MOVE_GRANULARITY)

    def project(self, event: Any, tracking: Tracking) -> None:
        if isinstance(event, DEAL_MOVES):
            self.project_move(event.originator_id, event.timestamp, tracking)
            return
        table_id = event.originator_id
        when = {"version": event.originator_version, "at": event.timestamp}
        if isinstance(event, TABLE_CREATED):
            self.view.add_lobby_table(
                tracking,
                table_id,
                host=event.host,
                entry=event.entry,
                players=event.players,
                options=event.options,
                target=event.target,
                listed=not event.private,
                spectators=event.spectators,
                turn_seconds=getattr(event, "turn_seconds", None),  # older tables: none
                **when,
            )
        elif isinstance(event, TABLE_PLAYER_SEATED):
            self.view.seat_lobby_player(
                tracking, table_id, seat=event.seat, player=event.player, **when
            )
        elif isinstance(event, TABLE_TEAMS_CHOSEN):
            self.view.update_lobby_table(tracking, table_id, sides=event.sides, **when)
        elif isinstance(event, TABLE_GAME_STARTED):
            self.view.update_lobby_table(
                tracking, table_id, sides=event.sides, totals=event.totals, status=PLAYING, **when
            )
        elif isinstance(event, TABLE_DEAL_OPENED):
            self.view.update_lobby_table(
                tracking, table_id, deals=event.number, current_deal=event.deal_id, **when
            )
        elif isinstance(event, TABLE_DEAL_RECORDED):
            self.view.update_lobby_table(tracking, table_id, totals=event.totals, **when)
        elif isinstance(event, TABLE_GAME_ENDED):
            self.view.update_lobby_table(
                tracking, table_id, status=FINISHED, winners=event.winners, **when
            )
        elif isinstance(event, TABLE_GAME_STOPPED):
            self.view.update_lobby_table(tracking, table_id, status=STOPPED, **when)
        elif isinstance(event, TABLE_SPECTATORS_SET):
            self.view.update_lobby_table(tracking, table_id, spectators=event.allowed, **when)
        elif isinstance(event, TABLE_SEAT_LEFT):
            if event.freed:  # before the start: the seat is free again
                self.view.seat_lobby_player(
                    tracking, table_id, seat=event.seat, player=None, **when
                )
            else:  # during the game the seat stays his (the takeover follows)
                self.view.update_lobby_table(tracking, table_id, **when)
        elif isinstance(event, TABLE_SEAT_TAKEN_OVER | TABLE_SEAT_TAKEN_BACK | TABLE_SEAT_GIVEN):
            away = isinstance(event, TABLE_SEAT_TAKEN_OVER)
            player = event.player if isinstance(event, TABLE_SEAT_GIVEN) else None
            self.view.set_lobby_away(
                tracking, table_id, seat=event.seat, away=away, player=player, **when
            )
        elif isinstance(event, TABLE_TURN_CLOCK_SET):
            self.view.update_lobby_table(
                tracking, table_id, turn_seconds=event.turn_seconds, **when
            )
        elif isinstance(event, (TABLE_INVITE_ROTATED, TABLE_REMATCH_OPENED, *TABLE_STEP_ONLY)):
            self.view.update_lobby_table(tracking, table_id, **when)  # the table's step
        else:
            self.view.track(tracking)


#: Every read-model projection, each with its own pull runner and tracking table.
PROJECTIONS: tuple[type[ReadModelProjection], ...] = (
    DiscardLogProjection,
    DrawLogProjection,
    ScoreTableProjection,
    LobbyProjection,
)
