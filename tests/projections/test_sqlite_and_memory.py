"""SQLite keeps the events and the read models in one file; the in-memory store gets its read
models in an in-memory SQLite database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.application import CanastaApp
from app.infra.projection_runner import ReadModels, tracking_table_name
from app.settings import MEMORY, Settings, eventsourcing_env
from domain.scoring import PARTS
from projections.read_models import PROJECTIONS
from projections.view import VIEW_TABLES
from tests.projections.helpers import assert_read_models_match
from tests.support.games import random_game


def test_one_sqlite_file_holds_events_and_read_models(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    app = CanastaApp(eventsourcing_env(settings))
    try:
        table_id = random_game(app, 31, "classic", 4, max_deals=1)
        with ReadModels(settings) as rm:  # its own application on the same file
            rm.catch_up()
            assert_read_models_match(app, rm, [table_id])
    finally:
        app.close()
    files = {p.name for p in tmp_path.iterdir()}
    assert files <= {"canasta.sqlite", "canasta.sqlite-wal", "canasta.sqlite-shm"}
    with sqlite3.connect(settings.sqlite_path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"stored_events", *VIEW_TABLES} <= tables
        for projection in PROJECTIONS:
            table = tracking_table_name(projection)
            assert table in tables
            rows = dict(conn.execute(f"SELECT * FROM {table}").fetchall())
            assert rows["__migration__"] == 1
            assert rows["canasta"] > 1
        # The library's shared "tracking" table is not used.
        assert "tracking" not in tables


def test_in_memory_store(tmp_path: Path) -> None:
    settings = Settings(database_url=MEMORY)
    app = CanastaApp(eventsourcing_env(settings))
    try:
        with pytest.raises(ValueError, match="application"):
            ReadModels(settings)
        table_id = random_game(app, 32, "classic", 2, max_deals=2)
        with ReadModels(settings, app=app) as rm:
            rm.catch_up()
            assert_read_models_match(app, rm, [table_id])
            before = rm.dump()
            rm.rebuild()
            assert rm.dump() == before
        assert list(tmp_path.iterdir()) == []
    finally:
        app.close()


def test_a_whole_game(tmp_path: Path) -> None:
    """A game played until a side reaches the target (R-GAME-1)."""
    settings = Settings(data_dir=tmp_path)
    app = CanastaApp(eventsourcing_env(settings))
    try:
        table_id = random_game(app, 33, "classic", 4, max_deals=100)
        assert app.get_table(table_id).status == "finished"
        with ReadModels(settings, app=app) as rm:
            rm.catch_up()
            assert_read_models_match(app, rm, [table_id])
            table = rm.score_table(table_id)
            assert max(table["totals"].values()) >= 5000
            running: dict[str, int] = {}
            for deal in table["deals"]:
                for side, score in deal["scores"].items():
                    assert sum(score[part] for part in PARTS) == score["total"]
                    running[side] = running.get(side, 0) + score["total"]
                    assert score["cumulative"] == running[side]
    finally:
        app.close()
