"""The lobby read model on SQLite and PostgreSQL: one row per table, from the table
aggregate's events, written exactly once, resumable after a crash, rebuildable (R-SEAT-3,
R-SEAT-5, R-GAME-1, R-GAME-2)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from eventsourcing.persistence import Tracking
from eventsourcing.utils import get_topic

from app.application import CanastaApp
from app.autoplay import play_deal
from app.infra.projection_runner import ReadModels
from app.infra.read_model_store import PostgresReadModelRecorder, SQLiteReadModelRecorder
from app.settings import Settings
from domain.deal import Deal
from domain.events import EVENT_CLASSES
from domain.table import Table
from projections.read_models import LobbyProjection
from projections.view import LOBBY
from tests.projections.helpers import (
    assert_read_models_match,
    expected_lobby_row,
    lobby_row,
)
from tests.projections.test_read_models import (
    Crash,
    crashing_view,
    notifications,
    play_games,
    read_models,
)
from tests.support.store import NOT_MOVES
from tests.support.waiting import all_at_once


def listed(rm: ReadModels, status: str) -> list[str]:
    return [row["id"] for row in rm.lobby(status, limit=1000)]


def lobby_notifications(app: CanastaApp) -> list[Any]:
    return [n for n in notifications(app) if n.topic in LobbyProjection.topics]


def test_the_lobby_reads_every_table_event_and_the_public_deal_events(
    settings: Settings, app: CanastaApp
) -> None:
    declared = {
        get_topic(cls)
        for name, cls in vars(Table).items()
        if isinstance(cls, type) and issubclass(cls, Table.Event) and name != "Event"
    }
    moves = {get_topic(Deal.Started)} | {
        get_topic(cls) for kind, cls in EVENT_CLASSES.items() if kind not in NOT_MOVES
    }
    assert set(LobbyProjection.topics) == declared | moves
    play_games(app)
    for n in notifications(app):
        event = app.mapper.to_domain_event(n)
        public = isinstance(event, Table.Event | Deal.Started) or (
            type(event).__name__ not in NOT_MOVES
        )
        assert public == (n.topic in LobbyProjection.topics)


def test_the_lobby_follows_a_table_from_open_to_stopped_r_seat_5_r_game_2(
    settings: Settings, app: CanastaApp
) -> None:
    with read_models(settings, app) as rm:
        table_id = app.create_table("hal", "classic", 4, {"always_frozen": True})
        rm.catch_up()
        row = lobby_row(rm, table_id)
        assert row == expected_lobby_row(app, table_id)
        assert row is not None
        assert row["status"] == "open" and row["seats"] == [None] * 4 and row["free_seats"] == 4
        assert row["host"] == "hal" and row["options"] == {"always_frozen": True}
        assert row["target"] == 5000 and row["version"] == 1 and row["totals"] is None
        assert str(table_id) in listed(rm, "open")

        for taken, (seat, name) in enumerate([(2, "cyd"), (0, "ann"), (3, "dee"), (1, "bob")]):
            app.join_table(table_id, name, seat)
            rm.catch_up()
            row = lobby_row(rm, table_id)
            assert row == expected_lobby_row(app, table_id)
            assert row is not None and row["seats"][seat] == name
            assert row["free_seats"] == 3 - taken
        assert row["seats"] == ["ann", "bob", "cyd", "dee"]
        assert str(table_id) in listed(rm, "open")  # full, but not started: still open

        deal_id = app.start_game(table_id, "hal")
        rm.catch_up()
        assert str(table_id) not in listed(rm, "open")
        assert str(table_id) in listed(rm, "playing")
        row = lobby_row(rm, table_id)
        assert row == expected_lobby_row(app, table_id)
        assert row is not None and row["current_deal"] == str(deal_id) and row["deals"] == 1
        assert row["sides"] == {"A": [0, 2], "B": [1, 3]}
        assert row["totals"] == {"A": 0, "B": 0}

        play_deal(app, deal_id, random.Random(3))
        rm.catch_up()
        row = lobby_row(rm, table_id)
        assert row == expected_lobby_row(app, table_id)
        assert row is not None and row["totals"] == app.get_table(table_id).totals

        second = app.start_next_deal(table_id, "hal")
        app.stop_game(table_id, "hal")
        rm.catch_up()
        assert str(table_id) not in listed(rm, "playing")
        assert str(table_id) in listed(rm, "stopped")
        row = lobby_row(rm, table_id)
        assert row == expected_lobby_row(app, table_id)
        assert row is not None and row["deals"] == 2 and row["current_deal"] == str(second)
        assert row["winners"] is None


def test_chosen_teams_show_while_the_table_is_open_r_seat_3(
    settings: Settings, app: CanastaApp
) -> None:
    table_id = app.create_table("hal", "extra_six", 6)
    for seat in range(6):
        app.join_table(table_id, f"p{seat}", seat)
    app.choose_teams(table_id, "hal", [[0, 1, 2]])
    with read_models(settings, app) as rm:
        rm.catch_up()
        row = lobby_row(rm, table_id)
        assert row == expected_lobby_row(app, table_id)
        assert row is not None and row["status"] == "open"
        assert row["sides"] == {"A": [0, 1, 2], "B": [3, 4, 5]}
        assert row["target"] == 10000


def test_a_finished_game_lists_its_winners_r_game_1(settings: Settings, app: CanastaApp) -> None:
    app.allow_stacked_decks = True  # to start with a side already past the target
    table_id = app.create_table("hal", "classic", 2)
    app.join_table(table_id, "ann")
    app.join_table(table_id, "bob")
    deal_id = app.start_game(table_id, "hal", scores_before={"A": 9000})
    play_deal(app, deal_id, random.Random(5))
    table = app.get_table(table_id)
    assert table.status == "finished"
    with read_models(settings, app) as rm:
        rm.catch_up()
        assert listed(rm, "finished") == [str(table_id)]
        row = lobby_row(rm, table_id)
        assert row == expected_lobby_row(app, table_id)
        assert row is not None and row["winners"] == table.winners == ["A"]


def test_the_lobby_lists_the_newest_tables_first_up_to_the_limit(
    settings: Settings, app: CanastaApp
) -> None:
    tables = [app.create_table(f"host{i}", "classic", 2) for i in range(5)]
    app.join_table(tables[1], "ann")
    with read_models(settings, app) as rm:
        rm.catch_up()
        newest_first = [str(t) for t in reversed(tables)]
        assert listed(rm, "open") == newest_first  # a later change does not reorder
        assert [row["id"] for row in rm.lobby("open", limit=2)] == newest_first[:2]
        assert rm.lobby("open", limit=0) == []
        assert rm.lobby("playing") == rm.lobby("finished") == rm.lobby("stopped") == []
        for bad in ("OPEN", "", "closed"):
            with pytest.raises(ValueError):
                rm.lobby(bad)
        with pytest.raises(ValueError):
            rm.lobby("open", limit=-1)


def test_lobby_rows_are_written_exactly_once_whatever_is_delivered_again(
    settings: Settings, app: CanastaApp
) -> None:
    """Every lobby write is a "set" that an older event would undo (a stopped game back to
    playing, a seat freed again): an event delivered again, even after newer ones, must be
    skipped, alone or inside a batch."""
    table_ids = play_games(app)
    ours = lobby_notifications(app)
    with read_models(settings, app) as rm:
        rm.catch_up()
        before, positions = rm.dump(), rm.positions()
        assert len(before[LOBBY]) == len(table_ids)
        worker = rm.workers["lobby"]
        for n in reversed(ours):  # oldest last: the most harmful order
            worker.projection.process_event(app.mapper.to_domain_event(n), Tracking(app.name, n.id))
        with worker.view.batch():
            for n in ours:
                event = app.mapper.to_domain_event(n)
                worker.projection.process_event(event, Tracking(app.name, n.id))
        assert worker.catch_up() == 0
        assert rm.dump() == before
        assert rm.positions() == positions
        assert_read_models_match(app, rm, table_ids)

    # Two runners of the lobby alone, from scratch, at the same time.
    with (
        read_models(settings, app, projections=(LobbyProjection,), batch_size=3) as first,
        read_models(settings, app, projections=(LobbyProjection,), batch_size=5) as second,
    ):
        first.workers["lobby"].reset()
        assert first.dump()[LOBBY] == []
        all_at_once(ReadModels.catch_up, (first, second))
        assert first.dump()[LOBBY] == before[LOBBY]
        assert first.positions() == {"lobby": positions["lobby"]} == {"lobby": ours[-1].id}


@pytest.mark.parametrize(("batch_size", "kept"), [(1, 20), (8, 16)])
def test_a_crash_in_the_lobby_projection_keeps_whole_batches_only_and_a_new_runner_resumes(
    settings: Settings, app: CanastaApp, batch_size: int, kept: int
) -> None:
    """The 21st lobby write fails after its row and position were written, before the
    commit: its batch is rolled back whole (with batches of 8: writes 17 to 21)."""
    table_ids = play_games(app)
    ours = lobby_notifications(app)
    assert len(ours) > 21
    crashing = {
        "postgres_view": crashing_view(PostgresReadModelRecorder, after=20),
        "sqlite_view": crashing_view(SQLiteReadModelRecorder, after=20),
    }
    with read_models(
        settings, app, projections=(LobbyProjection,), batch_size=batch_size, **crashing
    ) as rm:
        with pytest.raises(Crash):
            rm.catch_up()
        assert type(rm.views["lobby"]).crashed_at == ours[20].id  # type: ignore[attr-defined]
        assert rm.positions() == {"lobby": ours[kept - 1].id}
        # The rows are those of the first ``kept`` events: one per table created by then.
        created = {
            str(app.mapper.to_domain_event(n).originator_id)
            for n in ours[:kept]
            if n.topic == get_topic(Table.Created)
        }
        assert {row["table_id"] for row in rm.dump()[LOBBY]} == created

    with read_models(settings, app) as rm:
        assert rm.workers["lobby"].catch_up() == len(ours) - kept
        rm.catch_up()
        assert_read_models_match(app, rm, table_ids)


def test_rebuilding_the_lobby_from_scratch_gives_identical_rows(
    settings: Settings, app: CanastaApp
) -> None:
    table_ids = play_games(app)
    open_table = app.create_table("hal", "classic", 3)
    app.join_table(open_table, "ann", 1)
    with read_models(settings, app, batch_size=7) as rm:
        rm.catch_up()
        before, positions = rm.dump(), rm.positions()
        assert len(before[LOBBY]) == len(table_ids) + 1
        reported: list[tuple[str, int, int]] = []
        rm.rebuild(progress=lambda name, count, position: reported.append((name, count, position)))
        assert rm.dump() == before
        assert rm.positions() == positions
        assert_read_models_match(app, rm, [*table_ids, open_table])
        # Progress: projection after projection; the lobby's after each batch of 7.
        names = [name for name, _, _ in reported]
        assert names == sorted(names, key=list(rm.workers).index)
        total = len(lobby_notifications(app))
        lobby = [(count, position) for name, count, position in reported if name == "lobby"]
        assert [count for count, _ in lobby] == [
            min(k * 7, total) for k in range(1, -(-total // 7) + 1)
        ]
        assert lobby[-1][1] == positions["lobby"]
