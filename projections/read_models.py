"""The read-model projections: which events each one reads and what it writes.

Each is an ``eventsourcing.projection.Projection`` over a ``ReadModelRecorder``
(``projections.store``), with ``topics`` so that only its own events are read from the
notification log. ``process_event`` writes the rows and the tracking position in one
transaction; a notification already processed is skipped (``AlreadyProcessed``), so
delivering an event twice changes nothing. Transient database errors are retried, which the
tracking makes safe.

The same projection objects run under the library's ``ProjectionRunner`` (PostgreSQL) and under
the pull runner of ``projections.runner`` (SQLite, and catch-ups on any backend).
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from typing import Any, ClassVar
from uuid import UUID

from eventsourcing.persistence import InterfaceError, OperationalError, Tracking
from eventsourcing.projection import Projection
from eventsourcing.utils import get_topic, retry

from domain.deal import Deal
from domain.events import (
    CardDiscarded,
    CardsDrawn,
    CardTurnedUp,
    DealScored,
    PartnerAnswered,
    PartnerAsked,
    PileTaken,
)
from domain.table import Table
from projections.discard_log import public_entry
from projections.store import (
    DEAL_SCORES,
    DISCARD_LOG,
    DRAW_LOG,
    SCORE_DEALS,
    AlreadyProcessed,
    ReadModelRecorder,
)

logger = logging.getLogger(__name__)

#: The table aggregate's event recording a completed deal (declared by ``@event``).
TABLE_DEAL_RECORDED: type[Any] = Table.DealRecorded  # type: ignore[attr-defined]


def topics_of(*classes: type[Any]) -> tuple[str, ...]:
    return tuple(get_topic(cls) for cls in classes)


class ReadModelProjection(Projection[ReadModelRecorder]):
    """Base class: ``project()`` writes one event through the view, tracked.

    ``name`` names the projection's tracking table (``<name>_tracking``) and its environment
    prefix; ``tables`` are the view tables it alone writes (emptied by a rebuild). A subclass
    of a concrete projection keeps its name (and so its tracking table).
    """

    name = ""
    tables: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Unlike the library's default (the class name), a subclass keeps its parent's name.
        if not cls.__dict__.get("name") and not getattr(cls, "name", ""):
            cls.name = cls.__name__

    def process_event(self, domain_event: Any, tracking: Tracking) -> None:
        try:
            if self.view.in_batch():  # an error rolls the batch back; a later catch-up redoes it
                self.project(domain_event, tracking)
            else:
                self._project_with_retries(domain_event, tracking)
        except AlreadyProcessed:
            logger.debug(
                "%s: notification %s already processed", self.name, tracking.notification_id
            )

    @retry((InterfaceError, OperationalError), max_attempts=5, wait=0.2)
    def _project_with_retries(self, domain_event: Any, tracking: Tracking) -> None:
        self.project(domain_event, tracking)

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


#: Every read-model projection, each run by its own runner.
PROJECTIONS: tuple[type[ReadModelProjection], ...] = (
    DiscardLogProjection,
    DrawLogProjection,
    ScoreTableProjection,
)
