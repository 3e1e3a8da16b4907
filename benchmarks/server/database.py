"""The benchmark's own PostgreSQL database."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

from app.migrations import upgrade

# --- the database ---------------------------------------------------------------------------


def with_dbname(url: str, dbname: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + dbname))


def fresh_database(base_url: str, dbname: str) -> str:
    """Drop and re-create ``dbname`` in the cluster of ``base_url``; migrate it to head."""
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", dbname):
        raise SystemExit(f"--db-name must be a plain lowercase identifier, not {dbname!r}")
    if dbname == urlsplit(base_url).path.lstrip("/"):
        raise SystemExit("--db-name must differ from DATABASE_URL's database (it is dropped)")
    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {dbname}")
    url = with_dbname(base_url, dbname)
    upgrade(url)
    return url


def postmaster_pid(url: str) -> int | None:
    """The PostgreSQL server process behind ``url``, if this machine can see it."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SHOW data_directory").fetchone()
    assert row is not None
    try:
        return int(Path(row[0], "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
