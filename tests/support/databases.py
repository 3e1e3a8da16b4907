"""Databases of a test's own on the test PostgreSQL server, made through the connection of
the ``postgres_url`` fixture: a unique name (a uuid), dropped afterwards whatever happened,
so that tests running at once (pytest-xdist) never share one."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit
from uuid import uuid4

import psycopg
from psycopg import sql


def database_url(url: str, name: str) -> str:
    """``url`` with its database name replaced by ``name``."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


def drop_database(url: str, name: str) -> None:
    """Drop ``name`` (its open connections are ended first: ``WITH (FORCE)``)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@contextmanager
def own_database(url: str, prefix: str = "canasta_test") -> Iterator[tuple[str, str]]:
    """A new empty database on ``url``'s server: yields its URL and its name; dropped after."""
    name = f"{prefix}_{uuid4().hex}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield database_url(url, name), name
    finally:
        drop_database(url, name)


@contextmanager
def schema_made_by(url: str, schema: str, statements: Iterable[str]) -> Iterator[str]:
    """A schema ``schema`` of the database at ``url`` made by running ``statements`` (DDL
    that names it), dropped afterwards: what a description of tables creates, to compare with
    what the migrations created in ``public``. Yields the schema's name."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        for statement in statements:
            conn.execute(statement)
    try:
        yield schema
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
