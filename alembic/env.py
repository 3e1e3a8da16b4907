"""Alembic environment for the PostgreSQL event store.

The URL comes from ``sqlalchemy.url`` when a caller set it (``app.migrations``), otherwise from
the application settings (``CANASTA_DATABASE_URL`` or ``DATABASE_URL``). Migrations are plain SQL
(``op.execute``): there is no SQLAlchemy model metadata, so autogenerate is not used.
"""

from __future__ import annotations

from logging.config import fileConfig

from alembic import context
from sqlalchemy import engine_from_config, pool

from app.migrations import sqlalchemy_url
from app.settings import Settings

config = context.config

if config.config_file_name is not None and config.attributes.get("configure_logging", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = None


def database_url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    settings_url = Settings().database_url
    if not settings_url:
        raise SystemExit(
            "alembic: no database URL; set DATABASE_URL (or CANASTA_DATABASE_URL) to a "
            "postgresql://user@host:port/dbname URL"
        )
    try:
        return sqlalchemy_url(settings_url)
    except ValueError as exc:
        raise SystemExit(f"alembic: {exc}") from None


def run_migrations_offline() -> None:
    """Emit the SQL to stdout (``alembic upgrade head --sql``)."""
    context.configure(
        url=database_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    section = config.get_section(config.config_ini_section, {})
    section["sqlalchemy.url"] = database_url()
    connectable = engine_from_config(section, prefix="sqlalchemy.", poolclass=pool.NullPool)
    with connectable.connect() as connection:
        context.configure(connection=connection, target_metadata=target_metadata)
        with context.begin_transaction():
            context.run_migrations()
    connectable.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
