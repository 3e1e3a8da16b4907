"""Group commit: the events of concurrent commands saved in one transaction.

The library's PostgreSQL recorder serialises every writer of the events table with
``LOCK TABLE ... IN EXCLUSIVE MODE`` held until the commit (so that notification ids are
issued in commit order), and each transaction costs a commit (an fsync) while the lock is
held. One transaction per command therefore caps the whole server, whatever the number of
processes, at the rate of short transactions the table lock lets through, and each waits
behind the others. Saving the commands that arrive while a transaction is in flight together
in the next one keeps the per-command cost of the lock and the commit small under load, and
costs nothing when the server is quiet (a lone command is saved at once).

``GroupCommit.save_pending(pending)`` (or ``await save_async(pending)``) waits until its events are durable, or raises what
saving them alone would raise. A batch is one ``Application._record`` (one transaction). If
it fails on a version conflict (``IntegrityError``: another command changed one of the
aggregates first), each command of the batch is saved again on its own, so only the
commands that really conflict fail; a command's events are never split across transactions.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from eventsourcing.persistence import IntegrityError, InterfaceError, OperationalError

from app.infra import deadline

logger = logging.getLogger(__name__)

#: Records one batch (events of several commands, in order) in one transaction.
Record = Callable[[Sequence["Pending"]], None]


class Pending:
    """One command's events and aggregates, waiting to be saved."""

    __slots__ = ("aggregates", "done", "error", "events", "loop", "saved", "since")

    def __init__(self, events: list[Any], aggregates: dict[Any, Any]) -> None:
        self.events = events
        self.aggregates = aggregates
        self.since = time.monotonic()  # its wait for the database counts from here
        self.done = threading.Event()
        self.error: BaseException | None = None
        # An asynchronous waiter's event loop and future (``save_async``), resolved from the
        # committer's thread with one hand-off per loop and transaction (``finish``).
        self.loop: asyncio.AbstractEventLoop | None = None
        self.saved: asyncio.Future[None] | None = None


def _resolve(futures: list[asyncio.Future[None]]) -> None:
    """In a waiter's event loop: the saved commands' futures are done."""
    for future in futures:
        if not future.done():
            future.set_result(None)


def finish(batch: Sequence[Pending]) -> None:
    """Wake the waiters of ``batch`` (saved, or failed with their ``error``): the threads
    at once, the coroutines with one ``call_soon_threadsafe`` per event loop, not one per
    command (each is a write to the loop's self-pipe and, most often, a wake-up of it)."""
    by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
    for pending in batch:
        pending.done.set()
        if pending.loop is not None and pending.saved is not None:
            by_loop.setdefault(pending.loop, []).append(pending.saved)
    for loop, futures in by_loop.items():
        with contextlib.suppress(RuntimeError):  # the loop was closed meanwhile
            loop.call_soon_threadsafe(_resolve, futures)


class GroupCommit:
    """One committer thread per application; ``max_batch`` commands per transaction."""

    def __init__(
        self,
        record: Record,
        *,
        max_batch: int = 64,
        linger: float = 0.0,
        name: str = "group-commit",
        after: Callable[[Sequence[Pending]], None] | None = None,
    ) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        if linger < 0:
            raise ValueError("linger must not be negative")
        self._record = record
        # Called with the commands just saved, once their waiters are woken (work that
        # needs them durable but need not delay their answers); its errors are logged.
        self._after = after
        self.max_batch = max_batch
        self.linger = linger
        self._last_size = 0
        self._pending: list[Pending] = []
        self._writing = False  # a transaction is being written (by the thread or a caller)
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        # Figures for operators and the benchmark: transactions and commands saved.
        self.batches = 0
        self.commands = 0

    def save_pending(self, pending: Pending) -> None:
        """Save ``pending``; this thread blocks until it is saved. When no transaction is
        being written and nothing waits, this thread writes it itself (no hand-off to the
        committer thread: a lone writer, such as a script or a test, pays nothing);
        otherwise it is queued for the committer's next transaction."""
        if self._enqueue(pending, may_write=True):
            try:
                self._commit([pending])
            finally:
                self._done_writing()
        pending.done.wait()
        if pending.error is not None:
            raise pending.error

    async def save_async(self, pending: Pending) -> None:
        """Queue ``pending`` and wait (this coroutine, not the event loop) until it is
        saved."""
        loop = asyncio.get_running_loop()
        pending.loop = loop
        pending.saved = saved = loop.create_future()
        self._enqueue(pending)
        await saved
        if pending.error is not None:
            raise pending.error

    def _enqueue(self, pending: Pending, *, may_write: bool = False) -> bool:
        """Queue ``pending`` for the committer; or, if ``may_write`` and nothing is being
        written or waits, claim the writing for the caller instead: then True."""
        with self._cond:
            if self._closed:
                raise RuntimeError("the application is closed")
            if may_write and not self._writing and not self._pending:
                self._writing = True
                return True
            self._pending.append(pending)
            self._cond.notify()
            return False

    def _done_writing(self) -> None:
        with self._cond:
            self._writing = False
            self._cond.notify()

    def close(self) -> None:
        """Save what is queued, then stop the committer thread."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._cond:
                while (not self._pending or self._writing) and not (
                    self._closed and not self._writing
                ):
                    self._cond.wait()
                if not self._pending:
                    return
                self._writing = True  # one transaction at a time, this thread's or a caller's
                busy = self._last_size > 1 and len(self._pending) < self.max_batch
            if busy and self.linger and not self._closed:
                # Under load (the last transaction held several commands), wait a little for
                # more, as PostgreSQL's commit_delay does: fewer, larger transactions. A lone
                # command on a quiet server is saved at once.
                time.sleep(self.linger)
            with self._cond:
                batch = self._pending[: self.max_batch]
                del self._pending[: self.max_batch]
            self._last_size = len(batch)
            try:
                self._commit(batch)
            finally:
                self._done_writing()

    def _commit(self, batch: list[Pending]) -> None:
        try:
            # A command waits for the database within the connect timeout since it was
            # queued, not since its batch began (app.infra.deadline).
            with deadline.since(min(pending.since for pending in batch)):
                self._record(batch)
        except IntegrityError as exc:
            if len(batch) == 1:
                batch[0].error = exc
            else:
                # Some command conflicts: save each alone, so that only the conflicting fail.
                for pending in batch:
                    self._commit_alone(pending)
                    finish([pending])
                self._saved([pending for pending in batch if pending.error is None])
                return
        except (OperationalError, InterfaceError) as exc:
            # The database does not answer (docs/operations.md, "When PostgreSQL goes
            # away"): every command of the batch failed; one line, no traceback (each is
            # answered 503: app.outage). Its outcome may be unknown (the connection broke
            # during the commit): the sender's retry under the same sequence number is
            # answered from the store.
            logger.warning("saving %d commands failed: %s: %s", len(batch), type(exc).__name__, exc)
            for pending in batch:
                pending.error = exc
        except BaseException as exc:
            # Not a conflict (the store is down, ...): every command of the batch failed and
            # none of it is stored (one transaction).
            logger.exception("saving %d commands failed", len(batch))
            for pending in batch:
                pending.error = exc
        else:
            self.batches += 1
            self.commands += len(batch)
        finish(batch)
        self._saved([pending for pending in batch if pending.error is None])

    def _saved(self, saved: list[Pending]) -> None:
        if self._after is None or not saved:
            return
        try:
            self._after(saved)
        except Exception:
            logger.exception("after saving %d commands", len(saved))

    def _commit_alone(self, pending: Pending) -> None:
        try:
            self._record([pending])
        except BaseException as exc:
            pending.error = exc
        else:
            self.batches += 1
            self.commands += 1
