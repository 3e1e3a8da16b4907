"""The store the operator's commands work on (``DATABASE_URL`` / ``CANASTA_*``), shared by
the ``canasta`` command line's modules."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from app.application import CanastaApp
    from app.settings import Settings


def store_name(settings: Settings) -> str:
    """Where the settings point, without credentials."""
    from app.settings import MEMORY, is_postgres

    url = settings.database_url
    if url is None:
        return f"SQLite {settings.sqlite_path}"
    if url == MEMORY:
        return "memory"
    parts = urlsplit(url)
    if not is_postgres(url):  # refused when opened: say what it is, not what it is not
        port = f":{parts.port}" if parts.port else ""
        where = f"{parts.hostname or ''}{port}{parts.path}"
        return f"{parts.scheme}://{where}" if parts.scheme else "a database URL without a scheme"
    return f"PostgreSQL {parts.hostname or 'localhost'}:{parts.port or 5432}{parts.path}"


def in_memory(settings: Settings) -> bool:
    """The operator's commands work on a server's store, which the in-memory one never is
    (it belongs to one process): True, with the reason on stderr, if it is that one."""
    from app.settings import MEMORY

    if settings.database_url != MEMORY:
        return False
    print(
        "the in-memory store belongs to one process: set DATABASE_URL (PostgreSQL) or "
        "CANASTA_DATA_DIR (SQLite) to the server's store",
        file=sys.stderr,
    )
    return True


def no_sqlite_store(settings: Settings) -> bool:
    """The operator's commands work on a server's store and never make one: True, with the
    reason on stderr, if the settings name an SQLite file that is not there (a mistyped
    ``CANASTA_DATA_DIR`` would otherwise be audited as an empty store, "all ok", rebuilt
    "from 0 events", or projected and played for ever with nothing in it)."""
    if settings.database_url is not None or settings.sqlite_path.exists():
        return False
    print(
        f"no store at {store_name(settings)}: set CANASTA_DATA_DIR to the server's data "
        "folder (or DATABASE_URL to its PostgreSQL); the server makes it on its first start",
        file=sys.stderr,
    )
    return True


def wrong_url(settings: Settings) -> bool:
    """True, with the reason on stderr (as ``open_store`` says it), if the database URL is of
    a kind no store is (``mysql://...``) or names no database: the commands that open no
    store (``canasta keys list``) would otherwise answer as if nothing were configured."""
    from app.settings import MEMORY, eventsourcing_env

    url = settings.database_url
    if url is None or url == MEMORY:  # SQLite's folder is made, not checked, by the call below
        return False
    try:
        eventsourcing_env(settings)  # a URL's environment: read, nothing made
    except ValueError as exc:
        print(f"cannot open the store ({store_name(settings)}): {exc}", file=sys.stderr)
        return True
    return False


def store_answers(settings: Settings) -> bool:
    """PostgreSQL: the database answers, with this code's schema, as a server checks it at
    start-up; else False, said in one line on stderr (the driver's reason, or the migration
    to run), rather than a pool's timeout or a missing table's error."""
    from app.startup import StartupRefusal, check_store

    try:
        check_store(settings)
    except StartupRefusal as exc:  # its message names the database
        print(f"cannot open the store: {exc}", file=sys.stderr)
        return False
    return True


def open_store(
    *, signing: bool = False, existing: bool = False
) -> tuple[Settings, CanastaApp] | None:
    """The application on the configured store (``DATABASE_URL`` / ``CANASTA_*``) and its
    keys (``app.signing``; ``signing``: it signs what it records, and needs the key).
    ``existing``: an SQLite file that is not there is refused rather than made
    (``no_sqlite_store``)."""
    from app.application import CanastaApp
    from app.settings import Settings, eventsourcing_env
    from app.signing import load_keyring
    from app.startup import StartupRefusal, check_store

    settings = Settings()
    if in_memory(settings):
        return None
    if existing and no_sqlite_store(settings):
        return None
    try:
        keys = load_keyring(settings, signing=signing) or None  # none: signatures unchecked
        # PostgreSQL: it answers, with this code's schema (else "has no schema yet: run the
        # migrations", as a server says it, not a traceback from the first query).
        check_store(settings)
        canasta = CanastaApp(
            env=eventsourcing_env(settings), keys=keys, outage_seconds=settings.outage_seconds
        )
        return settings, canasta
    except StartupRefusal as exc:  # its message names the database
        print(f"cannot open the store: {exc}", file=sys.stderr)
        return None
    except Exception as exc:  # a bad URL, a database that is down, no signing key
        print(f"cannot open the store ({store_name(settings)}): {exc}", file=sys.stderr)
        return None


def seconds(text: str) -> float:
    """An argparse type: a number of seconds above 0 (0 or less would try for a lease, or
    print, without pause)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:  # NaN too
        raise argparse.ArgumentTypeError(f"must be above 0 seconds, not {text}")
    return value


def count(text: str) -> int:
    """An argparse type: a whole number of at least 1 (``--max-deals 0`` would play nothing
    and exit 0, as if a game had been played)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {text}")
    return value


def add_retry_argument(parser: argparse.ArgumentParser) -> None:
    """``--retry-seconds`` of the commands that wait for a lease (project, bots)."""
    parser.add_argument(
        "--retry-seconds",
        type=seconds,
        default=1.0,
        metavar="S",
        help="how often to try for the lease while another process holds it (default 1)",
    )
