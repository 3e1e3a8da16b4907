"""The projection runner reads the notification log without the write side: a read-only
``LogReader`` (recorder and mapper from the library's factory), no ``CanastaApp``, no
group-commit thread; what it projects is what the application wrote."""

from __future__ import annotations

import threading
from pathlib import Path

from app.application import CanastaApp
from app.infra.event_log import LOG_NAME, LogReader
from app.infra.projection_runner import ReadModels
from app.settings import Settings, eventsourcing_env
from tests.projections.helpers import assert_read_models_match
from tests.support.games import random_game


def test_the_log_reader_is_the_applications_log() -> None:
    assert CanastaApp.name == LOG_NAME  # the events table and the tracking rows' name


def test_the_runner_reads_a_sqlite_log_with_no_write_side(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    app = CanastaApp(eventsourcing_env(settings))
    try:
        table_id = random_game(app, 7, "classic", 4, max_deals=1)
        threads = set(threading.enumerate())
        with ReadModels(settings) as rm:
            assert isinstance(rm.log, LogReader)
            assert set(threading.enumerate()) == threads  # no group-commit thread, nothing
            notifications = rm.log.recorder.select_notifications(start=None, limit=1000)
            assert notifications == app.recorder.select_notifications(start=None, limit=1000)
            first = notifications[0]
            assert rm.log.mapper.to_domain_event(first) == app.mapper.to_domain_event(first)
            rm.catch_up()
            assert_read_models_match(app, rm, [table_id])
    finally:
        app.close()
