"""The read models on SQLite and PostgreSQL: what they show, exactly-once, crash and resume,
rebuild, and the privacy of the draw log (R-VIEW-2, R-VIEW-3, R-SCORE-1)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.persistence import Tracking
from eventsourcing.utils import get_topic

from app.application import CanastaApp
from app.infra.projection_runner import ReadModels
from app.infra.read_model_store import (
    PostgresReadModelRecorder,
    ReadModelRecorder,
    SQLiteReadModelRecorder,
)
from app.settings import Settings
from domain.events import EVENT_CLASSES, CardsDrawn
from projections.discard_log import public_entry
from projections.read_models import (
    PROJECTIONS,
    DiscardLogProjection,
    DrawLogProjection,
    ScoreTableProjection,
)
from projections.view import VIEW_TABLES
from tests.projections.helpers import (
    assert_read_models_match,
    expected_discard_log,
    expected_draw_log,
    row_counts,
)
from tests.support.games import random_game
from tests.support.waiting import all_at_once, wait_for

GAMES = [
    # seed, entry, players, max deals, always_frozen
    (1, "classic", 4, 2, False),
    (2, "classic", 2, 1, True),
    (3, "extra_six", 6, 1, False),
    (4, "modern_american", 4, 1, False),
    (5, "ponytail", 4, 1, False),
]


def play_games(app: CanastaApp) -> list[UUID]:
    return [
        random_game(app, seed, entry, players, max_deals=deals, always_frozen=frozen)
        for seed, entry, players, deals, frozen in GAMES
    ]


def notifications(app: CanastaApp) -> list[Any]:
    return list(app.recorder.select_notifications(start=None, limit=1_000_000))


@contextmanager
def read_models(settings: Settings, app: CanastaApp, **kwargs: Any) -> Iterator[ReadModels]:
    rm = ReadModels(settings, app=app, **kwargs)
    try:
        yield rm
    finally:
        rm.close()


def test_read_models_show_what_the_events_say(settings: Settings, app: CanastaApp) -> None:
    table_ids = play_games(app)
    with read_models(settings, app) as rm:
        rm.catch_up()
        assert_read_models_match(app, rm, table_ids)
        # Each projection's position is the last event of its topics.
        for projection in PROJECTIONS:
            ours = [n.id for n in notifications(app) if n.topic in projection.topics]
            assert rm.positions()[projection.name] == ours[-1]
        counts = row_counts(rm.dump())
        assert counts["deal_scores"] == sum(
            len(app.get_table(t).sides or {}) * len(app.get_table(t).deal_scores) for t in table_ids
        )


def test_topics_select_exactly_the_events_that_make_rows(
    settings: Settings, app: CanastaApp
) -> None:
    play_games(app)
    events = [app.mapper.to_domain_event(n) for n in notifications(app)]
    for event in events:
        topic = get_topic(type(event))
        assert (public_entry(event) is not None) == (topic in DiscardLogProjection.topics)
        assert isinstance(event, CardsDrawn) == (topic in DrawLogProjection.topics)
    # Every topic named by a projection is a real event class.
    known = {get_topic(cls) for cls in EVENT_CLASSES.values()}
    assert set(DiscardLogProjection.topics) | set(DrawLogProjection.topics) <= known
    seen = {get_topic(type(e)) for e in events}
    assert set(ScoreTableProjection.topics) <= seen


def test_draw_log_returns_one_seats_rows_only(settings: Settings, app: CanastaApp) -> None:
    (table_id,) = [random_game(app, 7, "classic", 4, max_deals=1)]
    deal_id = app.get_table(table_id).deals[0]
    with read_models(settings, app) as rm:
        rm.catch_up()
        all_draws = []
        for seat in range(4):
            rows = rm.draw_log(deal_id, seat)
            assert rows and {row["seat"] for row in rows} == {seat}
            assert rows == expected_draw_log(app, deal_id, seat)
            all_draws.extend(rows)
        drawn = [e for e in app.events.get(UUID(deal_id)) if isinstance(e, CardsDrawn)]
        assert sorted(r["step"] for r in all_draws) == [e.originator_version for e in drawn]
        assert any(r["replacement"] for r in all_draws) == any(e.replacement for e in drawn)
        assert rm.draw_log(deal_id, 9) == []
        for not_a_seat in (None, True, "0", 0.0):
            with pytest.raises(TypeError):
                rm.draw_log(deal_id, not_a_seat)  # type: ignore[arg-type]
        assert rm.discard_log(deal_id) == expected_discard_log(app, deal_id)


def test_discard_log_after_step(settings: Settings, app: CanastaApp) -> None:
    table_id = random_game(app, 8, "classic", 4, max_deals=1)
    deal_id = app.get_table(table_id).deals[0]
    with read_models(settings, app) as rm:
        rm.catch_up()
        log = rm.discard_log(deal_id)
        middle = log[len(log) // 2]["step"]
        assert rm.discard_log(deal_id, after_step=middle) == [e for e in log if e["step"] > middle]
        assert rm.discard_log(deal_id, after_step=log[-1]["step"]) == []
        assert rm.discard_log(UUID(int=0)) == []
        assert rm.score_table(UUID(int=0)) == {
            "table_id": str(UUID(int=0)),
            "deals": [],
            "totals": {},
        }


def test_catching_up_twice_or_concurrently_adds_nothing(
    settings: Settings, app: CanastaApp
) -> None:
    table_ids = play_games(app)
    with read_models(settings, app) as rm:
        rm.catch_up()
        before = rm.dump()
        positions = rm.positions()
        rm.catch_up()
        # Deliver every notification again, past the in-memory position: all are skipped.
        for worker in rm.workers.values():
            for n in notifications(app):
                if n.topic in worker.topics:
                    event = app.mapper.to_domain_event(n)
                    worker.projection.process_event(event, Tracking(app.name, n.id))
        assert rm.dump() == before
        assert rm.positions() == positions

    # Two runners over the same database, from scratch, at the same time.
    with read_models(settings, app) as first, read_models(settings, app) as second:
        for worker in first.workers.values():
            worker.reset()
        all_at_once(ReadModels.catch_up, (first, second))
        assert first.dump() == before
        assert first.positions() == positions
        assert_read_models_match(app, first, table_ids)


class Crash(RuntimeError):
    """A simulated crash inside a projection's transaction."""


def crashing_view(base: type[ReadModelRecorder], after: int) -> type[Any]:
    """The view ``base`` whose write number ``after + 1`` fails AFTER writing its rows and
    tracking, before the commit (as if the process died there); an event that writes nothing
    counts as a write."""

    class CrashingView(base):  # type: ignore[valid-type,misc]
        writes = 0
        crashed_at: int | None = None

        @contextmanager
        def _write(self, tracking: Tracking | None) -> Iterator[Any]:
            with super()._write(tracking) as run:
                yield run
                if tracking is not None:
                    self._written(tracking)

        def track(self, tracking: Tracking) -> None:
            # An event that changes no row inside a batch that covers it has no ``_write``.
            writes = type(self).writes
            super().track(tracking)
            if type(self).writes == writes:
                self._written(tracking)

        def _written(self, tracking: Tracking) -> None:
            type(self).writes += 1
            if type(self).writes > after:
                type(self).crashed_at = tracking.notification_id
                raise Crash(f"crash at notification {tracking.notification_id}")

    return CrashingView


@pytest.mark.parametrize(("batch_size", "kept"), [(1, 40), (16, 32)])
def test_a_crash_mid_transaction_leaves_nothing_and_a_new_runner_resumes(
    settings: Settings, app: CanastaApp, batch_size: int, kept: int
) -> None:
    """Write 41 fails after its rows and position were written, before the commit. Catch-ups
    commit a batch of notifications at a time: with batches of 16, the third batch (writes
    33 to 41) is rolled back whole."""
    table_ids = play_games(app)
    crashing = {
        "postgres_view": crashing_view(PostgresReadModelRecorder, after=40),
        "sqlite_view": crashing_view(SQLiteReadModelRecorder, after=40),
    }
    with read_models(
        settings, app, projections=(DiscardLogProjection,), batch_size=batch_size, **crashing
    ) as rm:
        with pytest.raises(Crash):
            rm.catch_up()
        view_class: Any = type(rm.views["discard_log"])
        crashed_at = view_class.crashed_at
        assert crashed_at is not None
        ours = [n for n in notifications(app) if n.topic in DiscardLogProjection.topics]
        assert ours[40].id == crashed_at
        # What was committed: the rows and the position of the first ``kept`` events.
        assert rm.positions()["discard_log"] == ours[kept - 1].id
        rows = rm.dump()["discard_log"]
        assert len(rows) == kept
        crashed = app.mapper.to_domain_event(ours[40])
        assert not any(
            r["deal_id"] == str(crashed.originator_id) and r["step"] == crashed.originator_version
            for r in rows
        )

    # A new runner (all projections) resumes from the tracking positions.
    with read_models(settings, app) as rm:
        rm.catch_up()
        assert_read_models_match(app, rm, table_ids)


@pytest.mark.parametrize(("batch_size", "kept"), [(1, 3), (2, 2), (500, 0)])
def test_a_crash_between_events_then_resume(
    settings: Settings, app: CanastaApp, batch_size: int, kept: int
) -> None:
    """The projection itself fails on its fourth event; what its batch had done is undone,
    and a new runner does the rest."""
    table_ids = play_games(app)
    seen: list[int] = []

    class FailingScores(ScoreTableProjection):
        def project(self, event: Any, tracking: Tracking) -> None:
            if len(seen) == 3:
                raise Crash("the process died")
            super().project(event, tracking)
            seen.append(tracking.notification_id)

    assert FailingScores.name == "score_table"  # same projection, same tracking table
    with read_models(settings, app, projections=(FailingScores,), batch_size=batch_size) as rm:
        with pytest.raises(Crash):
            rm.catch_up()
        assert rm.positions() == {"score_table": seen[kept - 1] if kept else None}

    with read_models(settings, app) as rm:
        read = rm.workers["score_table"].catch_up()
        total = [n for n in notifications(app) if n.topic in ScoreTableProjection.topics]
        assert read == len(total) - kept  # only what the crashed runner had not done
        rm.catch_up()
        assert_read_models_match(app, rm, table_ids)


def test_a_new_runner_continues_from_the_tracking_position(
    settings: Settings, app: CanastaApp
) -> None:
    first_game = random_game(app, 11, "classic", 4, max_deals=1)
    with read_models(settings, app) as rm:
        rm.catch_up()
        positions = rm.positions()
    second_game = random_game(app, 12, "classic", 3, max_deals=1)

    with read_models(settings, app) as rm:
        assert rm.positions() == positions
        for name, worker in rm.workers.items():
            after = [
                n
                for n in notifications(app)
                if n.topic in worker.topics and n.id > (positions[name] or 0)
            ]
            assert worker.catch_up() == len(after) > 0
        assert_read_models_match(app, rm, [first_game, second_game])


def test_rebuild_from_scratch_gives_identical_tables(settings: Settings, app: CanastaApp) -> None:
    table_ids = play_games(app)
    with read_models(settings, app) as rm:
        rm.catch_up()
        before, positions = rm.dump(), rm.positions()
        assert all(before[t] for t in VIEW_TABLES)
        for worker in rm.workers.values():
            worker.reset()
        assert all(rows == [] for rows in rm.dump().values())
        assert set(rm.positions().values()) == {None}
        rm.rebuild()
        assert rm.dump() == before
        assert rm.positions() == positions
        assert_read_models_match(app, rm, table_ids)


def test_wait_until_a_position_of_other_topics_returns(settings: Settings, app: CanastaApp) -> None:
    """A position whose events no projection reads (a new account) is reached at once."""
    random_game(app, 13, "classic", 2, max_deals=1)
    with read_models(settings, app) as rm:
        rm.catch_up()
        positions = rm.positions()
        app.register("someone")
        rm.wait_until(timeout=1.0)
        assert rm.positions() == positions
        assert all(w.has_processed(rm.head()) for w in rm.workers.values())


def test_background_runner_follows_the_log(settings: Settings, app: CanastaApp) -> None:
    with read_models(settings, app, poll_interval=0.02, lease_retry_seconds=0.05) as rm:
        rm.start()
        rm.start()  # idempotent
        wait_for(lambda: rm.is_leading)  # alone on its database: it takes the lease
        table_id = random_game(app, 14, "classic", 4, max_deals=1)
        head = rm.head()
        # Wait WITHOUT catching up here: the background runner must do it.
        deadline = threading.Event()
        for _ in range(500):
            if all(w.has_processed(head) for w in rm.workers.values()):
                break
            deadline.wait(0.01)
        assert all(w.has_processed(head) for w in rm.workers.values())
        rm.wait_until(head, timeout=5)
        assert_read_models_match(app, rm, [table_id])
        rm.stop()
        rm.stop()  # idempotent
        assert not rm.is_running
        assert not rm.is_leading
