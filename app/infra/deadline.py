"""How long a query may still wait for a pool connection: the bound of
``CANASTA_DATABASE_WAIT_SECONDS`` (docs/operations.md, "When PostgreSQL goes away").

A query on the primary is tried again within the connect timeout since its first try
(``app.infra.library.within_wait``); each try waits for a pool connection, and without a
bound of its own a try begun near the end of that time waited the whole timeout again
(about twice the setting before the 503). The retrying wrapper sets, for its thread, the
moment by which it gives up (``until``); the pool (``app.infra.persistence``) waits for a
connection only ``remaining`` of it. A command queued for the group committer counts its
time from when it was queued (``since``), not from when its batch begins: queued behind a
batch that waited the whole time in vain, it would otherwise wait as long again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

#: The shortest wait for a connection a try is given (one begun at or past its deadline: the
#: first try of a command queued that long; a connection ready in the pool is taken at once).
MIN_WAIT_SECONDS = 0.1

_local = threading.local()


@contextmanager
def _earliest(name: str, value: float) -> Iterator[None]:
    """This thread's ``name`` is ``value`` meanwhile, or the earlier one it had."""
    previous: float | None = getattr(_local, name, None)
    setattr(_local, name, value if previous is None else min(previous, value))
    try:
        yield
    finally:
        setattr(_local, name, previous)


def since(started: float) -> AbstractContextManager[None]:
    """The queries this thread runs meanwhile count their time from ``started``
    (``time.monotonic()``), if it is earlier than their first try."""
    return _earliest("since", started)


def started(now: float) -> float:
    """When the query about to be tried first began to wait: ``now``, or an earlier
    ``since``."""
    earlier = getattr(_local, "since", None)
    return now if earlier is None else min(earlier, now)


def until(deadline: float) -> AbstractContextManager[None]:
    """The connection waits of this thread end by ``deadline`` (``time.monotonic()``)
    meanwhile (the earliest one, if they nest)."""
    return _earliest("deadline", deadline)


def remaining(timeout: float) -> float:
    """How long to wait for a pool connection: ``timeout``, or less if this thread's
    deadline comes sooner (at least ``MIN_WAIT_SECONDS``)."""
    deadline: float | None = getattr(_local, "deadline", None)
    if deadline is None:
        return timeout
    return min(timeout, max(deadline - time.monotonic(), MIN_WAIT_SECONDS))
