"""Backends for the read-model tests: SQLite in tmp_path, and PostgreSQL (marker
``postgres``, database migrated to alembic's head by ``migrated_postgres_url``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.application import CanastaApp
from app.settings import Settings, eventsourcing_env


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def settings(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    if request.param == "postgres":
        url = request.getfixturevalue("migrated_postgres_url")
        return Settings(database_url=url, postgres_pool_size=4)
    return Settings(data_dir=tmp_path_factory.mktemp("data"))


@pytest.fixture
def app(settings: Settings) -> Iterator[CanastaApp]:
    application = CanastaApp(eventsourcing_env(settings))
    try:
        yield application
    finally:
        application.close()
