"""The lobby shows each table's turn clock and the seats the bot plays for their absent players
(docs/tables.md), on SQLite and PostgreSQL, as the events happen and after a rebuild; an
SQLite file made before the columns existed gets them when it is opened."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.application import CanastaApp
from app.settings import Settings, eventsourcing_env
from tests.projections.helpers import expected_lobby_row, lobby_row
from tests.projections.test_lobby import read_models


def test_the_lobby_follows_the_clock_and_who_is_away(settings: Settings, app: CanastaApp) -> None:
    table_id, _ = app.open_table("ann", "classic", 4, turn_seconds=60)
    plain = app.create_table("hal", "classic", 2)
    with read_models(settings, app) as rm:
        rm.catch_up()
        row = lobby_row(rm, table_id)
        assert row is not None and row["turn_seconds"] == 60 and row["away"] == []
        assert lobby_row(rm, plain)["turn_seconds"] is None  # type: ignore[index]

        app.set_turn_clock(table_id, "ann", 120)
        for seat, name in enumerate(("ann", "bob", "cy", "di")):
            app.join_table(table_id, name, seat)
        app.set_turn_clock(table_id, "ann", None)
        app.set_turn_clock(table_id, "ann", 30)
        app.start_game(table_id, "ann")
        rm.catch_up()
        row = lobby_row(rm, table_id)
        assert row == expected_lobby_row(app, table_id)
        assert row is not None and row["turn_seconds"] == 30 and row["away"] == []

        app.leave_table(table_id, "cy")
        app.leave_table(table_id, "ann")
        rm.catch_up()
        row = lobby_row(rm, table_id)
        assert row == expected_lobby_row(app, table_id)
        assert row is not None and row["away"] == [0, 2]
        assert row["seats"] == ["ann", "bob", "cy", "di"]  # the seats stay theirs

        app.take_seat_back(table_id, "ann")
        app.give_seat(table_id, "ann", 2, "eve")
        rm.catch_up()
        row = lobby_row(rm, table_id)
        assert row == expected_lobby_row(app, table_id)
        assert row is not None and row["away"] == [] and row["seats"][2] == "eve"

        app.leave_table(table_id, "bob")
        rm.catch_up()
        before = rm.dump()
        rm.rebuild()
        assert rm.dump() == before
        row = lobby_row(rm, table_id)
        assert row == expected_lobby_row(app, table_id)
        assert row is not None and row["away"] == [1] and row["turn_seconds"] == 30


def test_an_older_sqlite_file_gets_the_columns(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    app = CanastaApp(eventsourcing_env(settings))
    try:
        table_id = app.create_table("hal", "classic", 2)
        with read_models(settings, app) as rm:
            rm.catch_up()
        with sqlite3.connect(settings.sqlite_path) as db:  # as the file was before (SQLite 3.35+)
            db.execute("ALTER TABLE tables DROP COLUMN away")
            db.execute("ALTER TABLE tables DROP COLUMN turn_seconds")
        with read_models(settings, app) as rm:
            rm.catch_up()
            row = lobby_row(rm, table_id)
            assert row is not None and row["away"] == [] and row["turn_seconds"] is None
    finally:
        app.close()
