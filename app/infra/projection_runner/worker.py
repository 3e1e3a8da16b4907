"""The pull worker: one projection, following the notification log after its position.

Each batch of up to ``batch_size`` notifications is processed in ONE transaction, tracking
position included (the library's ``ProjectionRunner`` commits one transaction per event).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from uuid import UUID

from eventsourcing.persistence import ApplicationRecorder, Mapper, Notification, Tracking

from app.infra.event_log import stored_time
from app.infra.read_model_store import ReadModelRecorder
from projections.read_models import ReadModelProjection
from projections.view import AlreadyProcessed


def tracking_table_name(projection: type[ReadModelProjection]) -> str:
    """The library's naming: ``<projection name>_tracking`` (PostgreSQL factory)."""
    return projection.name.lower() + "_tracking"


class PullWorker:
    """Processes one projection by pulling the notification log after its position.

    Each batch of ``batch_size`` notifications is processed in one transaction (rows and
    position). Safe to call from several threads (one catch-up at a time) and alongside other
    runners of the same projection (a notification processed elsewhere first is skipped).
    """

    def __init__(
        self,
        projection: ReadModelProjection,
        *,
        app_name: str,
        recorder: ApplicationRecorder,
        mapper: Mapper[UUID],
        batch_size: int = 500,
    ) -> None:
        self.projection = projection
        if not isinstance(projection.view, ReadModelRecorder):
            raise TypeError(f"{projection.name}: its view is not a ReadModelRecorder")
        self.view: ReadModelRecorder = projection.view
        self.app_name = app_name
        self.recorder = recorder
        self.mapper = mapper
        self.batch_size = batch_size
        self._plain = mapper.cipher is None and mapper.compressor is None  # states as JSON
        self._lock = threading.Lock()
        self._scanned = 0  # every notification up to here was processed (or not ours)

    @property
    def name(self) -> str:
        return self.projection.name

    @property
    def topics(self) -> list[str]:
        return list(self.projection.topics)

    def position(self) -> int | None:
        """The id of the last notification this projection processed (None: none yet)."""
        return self.view.max_tracking_id(self.app_name)

    def catch_up(
        self,
        progress: Callable[[int, int], None] | None = None,
        *,
        stop: threading.Event | None = None,
    ) -> int:
        """Process every notification of the projection's topics up to the log's head now;
        returns how many were read (some may have been processed elsewhere already).

        ``progress(count, position)``, if given, is called after each committed batch with
        the number read so far and the id of the batch's last notification. Once ``stop``
        is set, it returns after the batch it is in (committed), short of the head."""
        with self._lock:
            head = self.recorder.max_notification_id() or 0
            start = max(self._scanned, self.position() or 0)
            count = 0
            while start < head:
                notifications = self.recorder.select_notifications(
                    start=start,
                    limit=self.batch_size,
                    stop=head,
                    topics=self.topics,
                    inclusive_of_start=False,
                )
                if not notifications:
                    break
                self._process_batch(notifications)
                count += len(notifications)
                if progress is not None:
                    progress(count, notifications[-1].id)
                if len(notifications) < self.batch_size:
                    break
                start = notifications[-1].id
                if stop is not None and stop.is_set():
                    return count  # not at the head: _scanned stays where it was
            self._scanned = max(self._scanned, head)
            return count

    def _process_batch(self, notifications: Sequence[Notification]) -> None:
        """One transaction for the batch, its last position recorded once. If some of it
        was processed elsewhere meanwhile (another runner, despite the lease), the batch
        is done again with each event's position checked, skipping what was done."""
        span = (
            Tracking(self.app_name, notifications[0].id),
            Tracking(self.app_name, notifications[-1].id),
        )
        try:
            with self.view.batch(span):
                self._process(notifications)
        except AlreadyProcessed:
            with self.view.batch():
                self._process(notifications)

    def _process(self, notifications: Sequence[Notification]) -> None:
        projection = self.projection
        # An event the projection reads for its time only (a deal's move, for the lobby) is
        # not decoded: its time is read from its stored bytes, when they are plain JSON.
        moves = projection.move_topics if self._plain else frozenset()
        for notification in notifications:
            tracking = Tracking(self.app_name, notification.id)
            if notification.topic in moves:
                at = stored_time(notification.state)
                if at is not None:
                    deal = notification.originator_id
                    projection.process_move(
                        deal if isinstance(deal, UUID) else UUID(deal), at, tracking
                    )
                    continue
            event = self.mapper.to_domain_event(notification)
            projection.process_event(event, tracking)

    def has_processed(self, position: int) -> bool:
        """True if every notification of the projection's topics up to ``position`` has
        been processed (by this worker or any other runner)."""
        if position <= self._scanned:
            return True
        tracked = self.position() or 0
        if tracked >= position:
            return True
        pending = self.recorder.select_notifications(
            start=tracked, limit=1, stop=position, topics=self.topics, inclusive_of_start=False
        )
        return not pending

    def reset(self) -> None:
        """Delete the projection's rows and position (the next catch-up starts afresh)."""
        with self._lock:
            self.view.reset(self.projection.tables)
            self._scanned = 0
