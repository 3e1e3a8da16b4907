"""Browser sessions (R-CMD-2): open one for an account, find who a session key signs in,
close it (``domain.sessions``).

Sessions are read from the store on every use, never from a process's memory or from the
aggregate cache: a session closed by one process is closed for every process at once, and
sessions never push deals out of the cache. The process also remembers the sessions it
closed itself (``closed_here``, no I/O), so that its live streams signed in by one stop at
once, before they send anything more (``app.routes.stream``).
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections import OrderedDict
from typing import Any

from eventsourcing.persistence import IntegrityError

from app.infra.group_commit import Pending
from app.services.core import AppCore, _fold
from domain.accounts import token_hash
from domain.sessions import Session, session_id

#: Sessions closed by this process that it remembers (the oldest forgotten first).
CLOSED_REMEMBERED = 10_000


class SessionService(AppCore):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._closed_here: OrderedDict[str, None] = OrderedDict()  # hashed keys
        self._closed_lock = threading.Lock()

    def open_session(self, name: str, lifetime_seconds: int) -> tuple[str, int]:
        """A new session of account ``name``; returns its key (only its hash is stored) and
        when it expires (seconds since the epoch)."""
        key = secrets.token_urlsafe(32)
        expires = int(time.time()) + lifetime_seconds
        session = Session(hashed=token_hash(key), name=name, expires=expires)
        self._save_session(session)
        return key, expires

    def session_name(self, key: str) -> str | None:
        """The account name an open, unexpired session signs in, or None."""
        session = self._session(key)
        if session is None or not session.signs_in(time.time()):
            return None
        return str(session.name)

    def close_session(self, key: str) -> None:
        """Sign out: the session signs nobody in any more (nothing happens if it is
        unknown or already closed)."""
        with self._closed_lock:
            self._closed_here[token_hash(key)] = None
            if len(self._closed_here) > CLOSED_REMEMBERED:
                self._closed_here.popitem(last=False)
        session = self._session(key)
        if session is not None and not session.closed:
            session.close()
            # Closed meanwhile by another request: signed out all the same.
            with contextlib.suppress(IntegrityError):
                self._save_session(session)

    def closed_here(self, key: str) -> bool:
        """Whether this process closed the session of ``key`` (no I/O; a session closed by
        another process, or expired, is found by ``session_name``)."""
        with self._closed_lock:
            return token_hash(key) in self._closed_here

    def _session(self, key: str) -> Session | None:
        events = list(self.events.get(session_id(token_hash(key))))
        if not events:
            return None
        session = _fold(None, events)
        return session if isinstance(session, Session) else None

    def _save_session(self, session: Session) -> None:
        # Saved without the aggregate, so that it is not put in the aggregate cache.
        self.save_pending(Pending(list(session.collect_events()), {}))
