"""The service's sign of life in the store (``app.infra.liveness``; docs/operations.md,
"Restarts and crashes"): one row, written by every serving process; a silence longer than an
outage opens a new period, whichever process comes back first; processes beating together
keep the period open. On the in-memory store, SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.application import CanastaApp
from app.settings import Settings, eventsourcing_env

OUTAGE = 10.0


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def apps(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[CanastaApp]]:
    """Two applications on one store, as two server processes (one for the memory store)."""
    if request.param == "postgres":
        url = request.getfixturevalue("migrated_postgres_url")
        settings = Settings(database_url=url, postgres_pool_size=2)
    else:
        url = "memory" if request.param == "memory" else None
        settings = Settings(database_url=url, data_dir=tmp_path / "data")
    count = 1 if request.param == "memory" else 2
    opened = [
        CanastaApp(env=eventsourcing_env(settings), outage_seconds=OUTAGE) for _ in range(count)
    ]
    yield opened
    for app in opened:
        app.close()


def test_a_silence_longer_than_an_outage_opens_a_new_period(apps: list[CanastaApp]) -> None:
    first, second = apps[0].liveness, apps[-1].liveness
    assert first.read() is None  # nobody ever served
    start = datetime(2026, 12, 3, 20, 0, tzinfo=UTC)
    alive = first.beat(start)
    assert (alive.alive_at, alive.up_since, alive.down_since) == (start, start, None)
    assert second.read() == alive

    # Beats within the outage's length, from either process, keep the period open; a
    # process whose clock is a little behind does not move the sign of life back.
    later = start + timedelta(seconds=OUTAGE - 1)
    assert second.beat(later).up_since == start
    kept = first.beat(later - timedelta(seconds=0.5))
    assert (kept.alive_at, kept.up_since) == (later, start)
    assert not kept.out_of_service(later + timedelta(seconds=OUTAGE), OUTAGE)
    assert kept.out_of_service(later + timedelta(seconds=OUTAGE + 0.1), OUTAGE)

    # Every process down for longer: the first beat after opens a new period, and says
    # when the service was last alive; the next beats find it open.
    back = later + timedelta(minutes=5)
    reopened = second.beat(back)
    assert (reopened.alive_at, reopened.up_since, reopened.down_since) == (back, back, later)
    also = first.beat(back + timedelta(seconds=1))
    assert (also.up_since, also.down_since) == (back, later)
    assert first.read() == second.read() == also
