"""``canasta bots``: the bots in a process of their own, in the foreground (docs/bots.md). One
process per database leads (the bots lease); a second waits, and takes over when the first
stops on SIGTERM (exit 0, "stopping" then "stopped"); the in-memory store is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest

from app.application import CanastaApp
from app.settings import Settings, eventsourcing_env
from tests.projections.test_project_cli import Projector
from tests.projections.test_rebuild_cli import store_env
from tests.support.bots import bot_table, deal_over
from tests.support.waiting import wait_for

BOTS = ("bots", "--retry-seconds", "0.1")


@pytest.fixture
def sqlite_app(tmp_path: Path) -> Iterator[tuple[CanastaApp, Settings]]:
    settings = Settings(database_url=None, data_dir=tmp_path / "data")
    app = CanastaApp(
        env=eventsourcing_env(settings.model_copy(update={"aggregate_cache_maxsize": 0}))
    )
    yield app, settings
    app.close()


def test_one_canasta_bots_leads_the_second_waits_and_takes_over(
    sqlite_app: tuple[CanastaApp, Settings],
) -> None:
    app, settings = sqlite_app
    first = Projector(store_env(settings), BOTS)
    second: Projector | None = None
    try:
        wait_for(lambda: first.printed("leading:"), 30, "the first did not lead")
        second = Projector(store_env(settings), BOTS)
        wait_for(lambda: second.printed("waiting for the lease"), 30, "the second did not start")
        table_id = bot_table(app, "classic", 2, level="random")
        deal_id = UUID(app.get_table(table_id).deals[-1])
        wait_for(lambda: app.get_deal(deal_id).version > 10, 30, "the bots did not play")
        assert not second.printed("leading:")  # it waits while the first plays
        code, stderr = first.terminate()
        assert code == 0, stderr
        assert "Traceback" not in stderr
        # as `canasta project` says it: it was asked, and it let go of the lease
        assert first.lines[-2:] == ["stopping", "stopped"], first.lines
        wait_for(lambda: second.printed("leading:"), 30, "the second did not take over")
        wait_for(lambda: deal_over(app, deal_id), 120, "the deal did not end")
        code, stderr = second.terminate()
        assert code == 0 and "Traceback" not in stderr, stderr
    finally:
        first.kill()
        if second is not None:
            second.kill()


def test_canasta_bots_refuses_the_in_memory_store() -> None:
    bots = Projector({"DATABASE_URL": "memory"}, BOTS)
    try:
        code, stderr = bots.wait()
        assert code == 2 and "in-memory store" in stderr
    finally:
        bots.kill()
