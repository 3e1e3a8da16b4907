"""app.settings: environment parsing and the eventsourcing env it produces."""

from __future__ import annotations

from pathlib import Path

import pytest
from eventsourcing.application import Application

from app.settings import Settings, eventsourcing_env
from tests.infra.probe import CanastaProbe


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DATABASE_URL", "CANASTA_DATABASE_URL", "CANASTA_AGGREGATE_CACHE_MAXSIZE"):
        monkeypatch.delenv(name, raising=False)


def test_defaults() -> None:
    settings = Settings()
    assert settings.database_url is None
    assert settings.data_dir == Path("data")
    assert settings.allow_stacked_decks is False
    assert settings.postgres_pool_size == 10
    assert settings.aggregate_cache_maxsize == 1000


def test_database_url_from_plain_or_prefixed_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://a@h/plain")
    assert Settings().database_url == "postgresql://a@h/plain"
    monkeypatch.setenv("CANASTA_DATABASE_URL", "postgresql://a@h/prefixed")
    assert Settings().database_url == "postgresql://a@h/prefixed"
    monkeypatch.setenv("CANASTA_DATABASE_URL", "")
    monkeypatch.setenv("DATABASE_URL", " ")
    assert Settings().database_url is None


def test_other_settings_use_the_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANASTA_ALLOW_STACKED_DECKS", "true")
    monkeypatch.setenv("CANASTA_POSTGRES_POOL_SIZE", "3")
    settings = Settings()
    assert settings.allow_stacked_decks is True
    assert settings.postgres_pool_size == 3


def test_postgres_env_from_url() -> None:
    env = eventsourcing_env(
        Settings(
            database_url="postgresql://bob:s%40cret@db.example:6543/games", postgres_pool_size=7
        )
    )
    expected = {
        "PERSISTENCE_MODULE": "app.infra.persistence:PrimaryFactory",
        "POSTGRES_CONNECT_TIMEOUT": "3",
        "POSTGRES_DBNAME": "games",
        "POSTGRES_HOST": "db.example",
        "POSTGRES_PORT": "6543",
        "POSTGRES_USER": "bob",
        "POSTGRES_PASSWORD": "s@cret",
        "POSTGRES_POOL_SIZE": "7",
        "POSTGRES_LOCK_TIMEOUT": "5",
        "POSTGRES_ENABLE_DB_FUNCTIONS": "n",
        "CREATE_TABLE": "n",
        "APPLICATION_RECORDER_TOPIC": "app.infra.persistence:PostgresRecorder",
        "AGGREGATE_CACHE_MAXSIZE": "1000",
        "COMMIT_BATCH_MAX": "64",
        "COMMIT_LINGER_MS": "2.0",
    }
    assert env == {**expected, **{"CANASTA_" + k: v for k, v in expected.items()}}


def test_postgres_url_defaults() -> None:
    env = eventsourcing_env(Settings(database_url="postgres://u@h/db"))
    assert (env["POSTGRES_PORT"], env["POSTGRES_PASSWORD"]) == ("5432", "")


@pytest.mark.parametrize("url", ["mysql://u@h/db", "postgresql://u@h/", "sqlite:///x.db"])
def test_bad_urls_are_rejected(url: str) -> None:
    with pytest.raises(ValueError):
        eventsourcing_env(Settings(database_url=url))


def test_prefixed_keys_beat_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # CANASTA_* variables are also read by the library (as the prefixed spelling of its keys).
    monkeypatch.setenv("CANASTA_AGGREGATE_CACHE_MAXSIZE", "0")  # library: unbounded cache
    monkeypatch.setenv("PERSISTENCE_MODULE", "eventsourcing.sqlite")
    settings = Settings(database_url="memory")
    assert settings.aggregate_cache_maxsize == 0
    app = CanastaProbe(env=eventsourcing_env(settings))
    try:
        assert app.factory.__module__ == "eventsourcing.popo"
        assert app.repository.cache is None  # 0 means no cache here
    finally:
        app.close()


def test_memory_store() -> None:
    app = CanastaProbe(env=eventsourcing_env(Settings(database_url="memory")))
    counter_id = app.create_counter("m", increments=1)
    assert app.get_counter(counter_id).count == 1


def test_sqlite_store_in_data_dir(tmp_path: Path) -> None:
    data_dir = tmp_path / "nested" / "data"
    settings = Settings(data_dir=data_dir)
    env = eventsourcing_env(settings)
    assert env["PERSISTENCE_MODULE"] == "eventsourcing.sqlite"
    assert env["SQLITE_DBNAME"] == str(data_dir / "canasta.sqlite")
    assert data_dir.is_dir()

    app = CanastaProbe(env=env)
    try:
        counter_id = app.create_counter("s", increments=3)
        assert app.get_counter(counter_id).count == 3
        app.take_snapshot(counter_id)
    finally:
        app.close()
    assert (data_dir / "canasta.sqlite").is_file()

    # Survives a restart, and the notification log lists the events.
    app = CanastaProbe(env=eventsourcing_env(settings))
    try:
        assert app.get_counter(counter_id).count == 3
        notifications = app.notification_log.select(start=1, limit=10)
        assert [n.originator_version for n in notifications] == [1, 2, 3, 4]
    finally:
        app.close()


def test_app_name_sets_the_prefix() -> None:
    env = eventsourcing_env(Settings(database_url="memory"), app_name="lobby")
    assert env["LOBBY_PERSISTENCE_MODULE"] == "eventsourcing.popo"
    assert isinstance(Application(env=env), Application)


def test_commit_batch_max_of_one_saves_each_command_in_its_own_transaction(
    tmp_path: Path,
) -> None:
    from app.application import CanastaApp

    grouped = CanastaApp(env=eventsourcing_env(Settings(data_dir=tmp_path)))
    alone = CanastaApp(env=eventsourcing_env(Settings(data_dir=tmp_path, commit_batch_max=1)))
    try:
        assert grouped.group_commit is not None and grouped.group_commit.max_batch == 64
        assert alone.group_commit is None
        alone.register("solo")  # saved in the calling thread
        assert grouped.authenticate("not a token") is None
    finally:
        grouped.close()
        alone.close()
