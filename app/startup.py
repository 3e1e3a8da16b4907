"""What a server checks before it starts, and how it says that it cannot, in one line of its
log (docs/operations.md, "When the server refuses to start"):

- its settings (``settings_from_environment``): a value the settings refuse names the
  variable and what it should be, never the value (a URL may hold a password);
- its PostgreSQL store (``check_store``): that the database answers (else the driver's
  reason, e.g. "Connection refused", at once instead of the pool's 30 s wait and a
  traceback), and that its schema is the one this code was written for (the alembic revision
  of ``alembic/versions``' head), else which revision it has and the command that migrates it.

``StartupRefusal`` is what ``app.main.StartupRefusals`` turns into the line
"canasta cannot start: ..."."""

from __future__ import annotations

from functools import lru_cache

import psycopg
from pydantic import ValidationError

from app.settings import Settings, is_postgres

#: Seconds to wait for the database at start-up before saying it does not answer.
CONNECT_TIMEOUT_SECONDS = 10
MIGRATE = "run the migrations: `alembic upgrade head` (`make migrate`; docs/operations.md)"


class StartupRefusal(RuntimeError):
    """A reason not to start that the operator fixes from its message alone."""


def variable(field: str) -> str:
    """The environment variable(s) of a setting."""
    if field == "database_url":
        return "CANASTA_DATABASE_URL (or DATABASE_URL)"
    return "CANASTA_" + field.upper()


def describe(exc: ValidationError) -> str:
    """One line for the settings' refusals: each variable and what is wrong with it."""
    parts = []
    for error in exc.errors():
        message = str(error["msg"]).removeprefix("Value error, ")
        loc = error.get("loc") or ()
        parts.append(f"{variable(str(loc[0]))}: {message}" if loc else message)
    return "bad setting: " + "; ".join(parts)


def settings_from_environment() -> Settings:
    """``Settings()`` from the environment, or ``StartupRefusal`` saying what is wrong."""
    try:
        return Settings()
    except ValidationError as exc:
        raise StartupRefusal(describe(exc)) from None


@lru_cache(maxsize=1)
def schema_revisions() -> tuple[str, frozenset[str]] | None:
    """The alembic revision this code needs (the head of ``alembic/versions``) and every
    revision it knows; None when the migrations are not installed beside it."""
    from alembic.script import ScriptDirectory

    from app.migrations import ALEMBIC_INI, alembic_config

    if not ALEMBIC_INI.exists():
        return None
    scripts = ScriptDirectory.from_config(alembic_config("postgresql://localhost/none"))
    head = scripts.get_current_head()
    if head is None:
        return None
    return head, frozenset(script.revision for script in scripts.walk_revisions())


def where(settings: Settings) -> str:
    """The database named by the settings, without the user and password."""
    from app.cli_store import store_name

    return store_name(settings)


def _revision(url: str, what: str, advice: str = "") -> str | None:
    """The alembic revision of the database at ``url`` (None: no schema); a refusal naming
    ``what`` if it does not answer."""
    try:
        with (
            psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_SECONDS) as conn,
            conn.cursor() as cursor,
        ):
            cursor.execute("SELECT to_regclass('alembic_version') IS NOT NULL")
            row = cursor.fetchone()
            if row is None or not row[0]:
                return None
            cursor.execute("SELECT version_num FROM alembic_version")
            found = cursor.fetchone()
            return None if found is None else str(found[0])
    except psycopg.Error as exc:
        reason = " ".join(str(exc).split())  # the driver's reason, on one line
        raise StartupRefusal(f"{what} does not answer: {reason}{advice}") from None


def check_replica(settings: Settings) -> None:
    """For a read replica (``CANASTA_READ_DATABASE_URL``): it answers, with the schema (the
    read models' tables are looked up on it at start-up: ``app.replica``)."""
    url = settings.read_database_url
    if not is_postgres(url):
        return
    assert url is not None
    name = where(settings.model_copy(update={"database_url": url}))
    what = f"the read replica {name} (CANASTA_READ_DATABASE_URL)"
    unset = "or unset CANASTA_READ_DATABASE_URL, and the primary serves every read"
    advice = f"start it, {unset}; docs/scaling.md"
    if _revision(url, what, f" ({advice})") is None:
        raise StartupRefusal(
            f"{what} has no schema: it is not a streaming replica of the migrated primary "
            f"{where(settings)}, or has not replayed the migrations yet (make it with "
            f"pg_basebackup -R from the primary, {unset}; docs/scaling.md)"
        )


def check_store(settings: Settings) -> None:
    """For a PostgreSQL store: it answers, and its schema is at this code's revision."""
    url = settings.database_url
    if not is_postgres(url):
        return
    assert url is not None
    revision = _revision(url, f"the database {where(settings)}")
    if revision is None:
        raise StartupRefusal(f"the database {where(settings)} has no schema yet: {MIGRATE}")
    revisions = schema_revisions()
    if revisions is None or revision == revisions[0]:
        return
    head, known = revisions
    if revision in known:
        raise StartupRefusal(
            f"the database {where(settings)} has the schema of revision {revision}, and this "
            f"server needs revision {head}: {MIGRATE}"
        )
    raise StartupRefusal(
        f"the database {where(settings)} has the schema of revision {revision}, which this "
        f"server (revision {head}) does not know: a newer version migrated it; run that one"
    )
