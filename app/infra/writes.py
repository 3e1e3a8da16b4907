"""Whether a request sent anything to be recorded: what an ``Idempotency-Key`` whose request
met a database outage may be freed by (``app.idempotency``).

``watched()`` opens a ``Writes`` for the request (a context variable: the request's threads
see it, as the threadpool copies the context); ``CanastaApp`` notes in it every save of
events, before the save begins (``note_write``). A request that failed with ``sent`` false
recorded nothing for certain; one that failed with ``sent`` true may have, if the database
went away during the commit (its outcome is unknown to this process)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class Writes:
    sent: bool = False


_CURRENT: ContextVar[Writes | None] = ContextVar("canasta_writes", default=None)


@contextmanager
def watched() -> Iterator[Writes]:
    writes = Writes()
    token = _CURRENT.set(writes)
    try:
        yield writes
    finally:
        _CURRENT.reset(token)


def note_write() -> None:
    """A save of events begins (in the request's context, if any)."""
    writes = _CURRENT.get()
    if writes is not None:
        writes.sent = True
