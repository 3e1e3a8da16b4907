"""One runner per database, elected (SQLite file and PostgreSQL): of two ``ReadModels`` on one
database exactly one leads and projects; when it ends, the other takes over and projects what
follows; every event changes the views exactly once (they equal a rebuild from scratch).
``CANASTA_READ_MODELS=off`` never leads but still answers ``wait_until``; a projection that
fails is retried after a back-off and ends consistent."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest
from eventsourcing.persistence import Tracking

from app.application import CanastaApp
from app.infra.projection_runner import LOCK_FILE_SUFFIX, ReadModels
from app.settings import Settings
from projections.read_models import DiscardLogProjection
from tests.projections.helpers import assert_read_models_match
from tests.support.games import random_game
from tests.support.waiting import wait_for

#: How long a non-leader waits between attempts to take the lease here.
RETRY = 0.1


@pytest.fixture
def opened() -> Iterator[list[ReadModels]]:
    """Read models opened by a test, closed at its end whatever happens."""
    found: list[ReadModels] = []
    yield found
    for read_models in reversed(found):
        read_models.close()


def open_read_models(opened: list[ReadModels], settings: Settings, **kwargs: Any) -> ReadModels:
    """``ReadModels`` with their own application, as another server process would have."""
    read_models = ReadModels(settings, poll_interval=0.05, lease_retry_seconds=RETRY, **kwargs)
    opened.append(read_models)
    return read_models


def processed(read_models: ReadModels, position: int) -> bool:
    return all(w.has_processed(position) for w in read_models.workers.values())


def assert_exactly_one_leads(*candidates: ReadModels, seconds: float = 1.0) -> ReadModels:
    """Over several lease retries, always exactly one of ``candidates`` leads (the same)."""
    wait_for(lambda: any(c.is_leading for c in candidates), what="for a leader")
    leader = next(c for c in candidates if c.is_leading)
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        assert [c.is_leading for c in candidates].count(True) == 1
        assert leader.is_leading
        time.sleep(RETRY / 4)
    return leader


def test_two_on_one_database_one_leads_exactly_once_and_the_other_takes_over(
    settings: Settings, app: CanastaApp, opened: list[ReadModels]
) -> None:
    one = open_read_models(opened, settings)
    two = open_read_models(opened, settings)
    one.start()
    two.start()
    leader = assert_exactly_one_leads(one, two)
    other = two if leader is one else one
    if settings.database_url is None:  # SQLite: the lease is a lock file next to the database
        assert settings.sqlite_path.with_name(settings.sqlite_path.name + LOCK_FILE_SUFFIX).exists()

    first = random_game(app, 41, "classic", 4, max_deals=2)
    head = leader.head()
    # Neither catches up in this thread: the leader's background thread does it.
    wait_for(lambda: processed(leader, head), what="for the leader to project")
    assert_read_models_match(app, leader, [first])
    assert other.dump() == leader.dump()

    # The leader ends (a server stopping): the other takes the lease and projects what follows.
    leader.close()
    wait_for(lambda: other.is_leading, what="for the other to take over")
    second = random_game(app, 42, "classic", 2, max_deals=1)
    head = other.head()
    wait_for(lambda: processed(other, head), what="for the new leader to project")
    assert_read_models_match(app, other, [first, second])

    # Exactly once: the views equal a rebuild from scratch, row for row.
    live, positions = other.dump(), other.positions()
    other.close()
    with ReadModels(settings, app=app) as rebuilt:
        rebuilt.rebuild()
        assert rebuilt.dump() == live
        assert rebuilt.positions() == positions


def test_read_models_off_never_lead_and_wait_until_catches_up_in_the_caller(
    settings: Settings, app: CanastaApp, opened: list[ReadModels]
) -> None:
    off = open_read_models(opened, settings.model_copy(update={"read_models": "off"}))
    off.start()
    assert not off.is_running
    # It does not hold the lease: another process (here: "auto") takes it.
    auto = open_read_models(opened, settings)
    auto.start()
    wait_for(lambda: auto.is_leading, what="for the lease")
    assert not off.is_leading
    auto.close()
    time.sleep(3 * RETRY)
    assert not off.is_leading

    table_id = random_game(app, 43, "classic", 4, max_deals=1)
    assert not processed(off, off.head())  # nobody runs the projections now
    off.wait_until(timeout=10)  # caught up in this thread
    assert processed(off, off.head())
    assert_read_models_match(app, off, [table_id])


def test_a_projection_that_fails_is_retried_after_a_back_off_and_ends_consistent(
    settings: Settings, app: CanastaApp, opened: list[ReadModels], caplog: pytest.LogCaptureFixture
) -> None:
    failed: list[int] = []

    class FailsOnce(DiscardLogProjection):
        def project(self, event: Any, tracking: Tracking) -> None:
            if not failed and tracking.notification_id > 100:
                failed.append(tracking.notification_id)
                raise RuntimeError("a transient failure")
            super().project(event, tracking)

    table_id = random_game(app, 23, "classic", 4, max_deals=1)
    caplog.set_level(logging.INFO, logger="app.infra.projection_runner.runner")
    rm = open_read_models(opened, settings, app=app, projections=(FailsOnce,))
    rm.start()
    wait_for(lambda: failed, what="for the failure")
    head = rm.head()
    wait_for(lambda: processed(rm, head), what="for the retry (after a 1 s back-off)")
    failures = [r for r in caplog.records if "catch-up failed" in r.getMessage()]
    assert len(failures) == 1
    assert failures[0].levelno == logging.ERROR
    assert failures[0].exc_info is not None  # logged with its traceback
    assert "this process leads" in caplog.text
    rm.close()

    with ReadModels(settings, app=app) as all_of_them:
        all_of_them.catch_up()
        assert_read_models_match(app, all_of_them, [table_id])
