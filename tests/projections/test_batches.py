"""A catch-up batch records its last position once, first, and (on PostgreSQL) pipelines its
writes. Exactly-once must hold all the same: a batch whose span was partly processed
elsewhere is done again event by event, and a write the database refuses at the commit
rolls the whole batch back, position included."""

from __future__ import annotations

from typing import Any

import pytest
from eventsourcing.persistence import Tracking

from app.application import CanastaApp
from app.infra.projection_runner import ReadModels
from app.infra.read_model_store import postgres as postgres_store
from app.settings import Settings
from projections.view import DISCARD_LOG, DRAW_LOG, AlreadyProcessed
from tests.projections.helpers import assert_read_models_match
from tests.projections.test_read_models import notifications, play_games, read_models


def discard_worker(rm: ReadModels) -> Any:
    (worker,) = [w for w in rm.workers.values() if DISCARD_LOG in w.projection.tables]
    return worker


def test_a_batch_whose_span_was_partly_processed_is_done_event_by_event(
    settings: Settings, app: CanastaApp
) -> None:
    table_ids = play_games(app)
    with read_models(settings, app) as rm:
        rm.catch_up()
        before, positions = rm.dump(), rm.positions()
        worker = discard_worker(rm)
        ours = [n for n in notifications(app) if n.topic in worker.topics]
        assert len(ours) > 20
        worker.reset()
        # Another runner processed the first ten, each with its own position.
        for n in ours[:10]:
            worker.projection.process_event(app.mapper.to_domain_event(n), Tracking(app.name, n.id))
        partial = rm.dump()[DISCARD_LOG]
        assert len(partial) == 10

        span = (Tracking(app.name, ours[0].id), Tracking(app.name, ours[-1].id))
        with pytest.raises(AlreadyProcessed), worker.view.batch(span):
            pytest.fail("the batch must not start")  # pragma: no cover
        assert rm.dump()[DISCARD_LOG] == partial  # nothing written, position unchanged
        assert worker.position() == ours[9].id

        worker._process_batch(ours)  # falls back to one position per event
        assert rm.dump() == before
        assert rm.positions() == positions
        assert_read_models_match(app, rm, table_ids)


def test_a_write_refused_at_the_commit_rolls_the_whole_batch_back(
    settings: Settings, app: CanastaApp
) -> None:
    play_games(app)
    with read_models(settings, app) as rm:
        rm.catch_up()
        before, positions = rm.dump(), rm.positions()
        worker = discard_worker(rm)
        ours = [n for n in notifications(app) if n.topic in worker.topics]
        worker.reset()
        # A row in the way of the batch's 15th write (same primary key): the database
        # refuses that INSERT, which on PostgreSQL was sent without waiting for its answer.
        row = before[DISCARD_LOG][14]
        with worker.view._write(None) as run:
            run(
                f"INSERT INTO {worker.view._table(DISCARD_LOG)} (deal_id, step, kind) "
                "VALUES (:deal_id, :step, :kind)",
                {"deal_id": worker.view._id(row["deal_id"]), "step": row["step"], "kind": "x"},
            )
        with pytest.raises(Exception, match=r"(?i)unique|duplicate"):
            worker._process_batch(ours)
        assert worker.position() is None
        assert [r["kind"] for r in rm.dump()[DISCARD_LOG]] == ["x"]

        with worker.view._write(None) as run:
            run(f"DELETE FROM {worker.view._table(DISCARD_LOG)}")
        rm.catch_up()
        assert rm.dump() == before
        assert rm.positions() == positions


def test_a_batch_writes_its_log_rows_in_chunks_equal_to_one_by_one(
    settings: Settings, app: CanastaApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch keeps its discard-log and draw-log rows and inserts them at its end, several
    rows per statement (on PostgreSQL in chunks; 7 here, so that a batch spans several
    chunks and a last partial one): the rows are those that event-by-event writes give."""
    table_ids = play_games(app)
    monkeypatch.setattr(postgres_store, "_ROWS_PER_INSERT", 7)
    with read_models(settings, app) as rm:
        for worker in rm.workers.values():  # one event, one transaction: no batch
            for n in notifications(app):
                if n.topic in worker.topics:
                    event = app.mapper.to_domain_event(n)
                    worker.projection.process_event(event, Tracking(app.name, n.id))
        one_by_one, positions = rm.dump(), rm.positions()
        assert len(one_by_one[DISCARD_LOG]) > 20 and len(one_by_one[DRAW_LOG]) > 20
        for worker in rm.workers.values():
            worker.reset()
        rm.catch_up()  # batches of up to 500 notifications
        assert rm.dump() == one_by_one
        assert rm.positions() == positions
        assert_read_models_match(app, rm, table_ids)
