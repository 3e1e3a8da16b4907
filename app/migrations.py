"""Run the alembic migrations (alembic/) from Python, e.g. from tests or the CLI."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

REPO_ROOT = Path(__file__).resolve().parent.parent
ALEMBIC_INI = REPO_ROOT / "alembic.ini"

_POSTGRES_PREFIXES = ("postgresql://", "postgres://", "postgresql+psycopg://")


def sqlalchemy_url(database_url: str) -> str:
    """Return ``database_url`` with SQLAlchemy's psycopg 3 driver (``postgresql+psycopg://``)."""
    for prefix in _POSTGRES_PREFIXES:
        if database_url.startswith(prefix):
            return "postgresql+psycopg://" + database_url[len(prefix) :]
    raise ValueError(
        "alembic migrations are for PostgreSQL only (the SQLite and in-memory stores create "
        f"their own tables); got {database_url!r}"
    )


def alembic_config(database_url: str, *, configure_logging: bool = False) -> Config:
    """An alembic ``Config`` for ``alembic.ini`` pointed at ``database_url``."""
    config = Config(str(ALEMBIC_INI))
    # Config values go through configparser interpolation: escape "%" (URL-encoded passwords).
    config.set_main_option("sqlalchemy.url", sqlalchemy_url(database_url).replace("%", "%%"))
    config.attributes["configure_logging"] = configure_logging
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    """Migrate the database at ``database_url`` up to ``revision``."""
    command.upgrade(alembic_config(database_url), revision)


def downgrade(database_url: str, revision: str = "base") -> None:
    """Migrate the database at ``database_url`` down to ``revision``."""
    command.downgrade(alembic_config(database_url), revision)
