"""Browser sessions (R-CMD-2): open one for an account, find who a session key signs in,
close it, and close every session of an account (``domain.sessions``).

Sessions are read from the store on every use, never from a process's memory or from the
aggregate cache: a session closed by one process is closed for every process at once, and
sessions never push deals out of the cache. The process also remembers the sessions it knows
closed (``closed_here``, no I/O): those it closed itself, and those the store's follower read
closed by another process (``sessions_closed``, ``app.fanout``), so that its live streams
signed in by one stop before they send anything recorded after the closure
(``app.routes.stream``).

The account records the sessions opened with it (``Account.open_session``, in the session's
own transaction), so that replacing its tokens finds and closes them
(``AccountService.replace_tokens``); an account registered before it recorded them has its
sessions found in the store's log instead, once.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any
from uuid import UUID

from eventsourcing.persistence import IntegrityError
from eventsourcing.utils import get_topic

from app.infra.group_commit import Pending
from app.services.core import AppCore, _fold, remember
from domain.accounts import Account, account_id, open_sessions, token_hash, token_id
from domain.errors import NotFound
from domain.sessions import Session, session_id, unexpired

#: Sessions known closed by this process that it remembers (the oldest forgotten first).
CLOSED_REMEMBERED = 10_000

#: Tries of a session's opening that meets another write to its account at the same moment.
OPEN_TRIES = 5

#: The topic of a session's closing in the store's log (the follower looks for it).
SESSION_CLOSED_TOPIC = get_topic(Session.Closed)  # type: ignore[attr-defined]


class TokenRevoked(Exception):
    """The token (or session) a request was signed in with is no longer good in the store,
    though this process let the request in a moment earlier (``open_session``,
    ``replace_tokens``)."""


class SessionService(AppCore):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._closed_here: OrderedDict[UUID, None] = OrderedDict()  # session ids
        self._closed_lock = threading.Lock()

    def open_session(
        self, name: str, lifetime_seconds: int, token: str | None = None
    ) -> tuple[str, int]:
        """A new session of account ``name`` (its exact spelling); returns its key (only its
        hash is stored) and when it expires (seconds since the epoch). Recorded on the account
        in the same transaction. ``token``: the bearer token that asked; if the account's
        tokens were replaced meanwhile (it is not among them), raises ``TokenRevoked`` and
        opens nothing: a session must not outlive the token that opened it."""
        tid = None if token is None else str(token_id(token_hash(token)))
        for attempt in range(OPEN_TRIES):
            account = self._account_of(name)
            if tid is not None and account.tokens is not None and tid not in account.tokens:
                raise TokenRevoked
            key = secrets.token_urlsafe(32)
            now = int(time.time())
            expires = now + lifetime_seconds
            session = Session(hashed=token_hash(key), name=name, expires=expires)
            account.open_session(session=str(session.id), expires=expires, now=now)
            events = [*account.collect_events(), *session.collect_events()]
            try:
                # The session is saved without its aggregate: it is not put in the cache.
                self.save_pending(Pending(events, {account.id: account}))
            except IntegrityError:  # another session, or a replacement, of the account
                if attempt + 1 == OPEN_TRIES:
                    raise
                continue
            return key, expires
        raise AssertionError("unreachable")  # pragma: no cover

    def session_name(self, key: str) -> str | None:
        """The account name an open, unexpired session signs in, or None."""
        session = self._session(session_id(token_hash(key)))
        if session is None or not session.signs_in(time.time()):
            return None
        return str(session.name)

    def close_session(self, key: str) -> None:
        """Sign out: the session signs nobody in any more (nothing happens if it is
        unknown or already closed)."""
        sid = session_id(token_hash(key))
        self.sessions_closed([sid])
        session = self._session(sid)
        if session is not None and not session.closed:
            session.close()
            # Closed meanwhile by another request: signed out all the same.
            with contextlib.suppress(IntegrityError):
                self._save_session(session)

    def close_other_sessions(self, key: str) -> int:
        """Sign out everywhere else: close every session of the account that ``key`` signs in
        but that one, in one transaction (``Session.Closed`` on each, ``Account.SessionsClosed``
        by ``player``); the tokens are not touched. Returns how many were closed; raises
        ``TokenRevoked`` if ``key`` no longer signs anybody in."""
        for attempt in range(OPEN_TRIES):
            name = self.session_name(key)
            if name is None:
                raise TokenRevoked
            account = self._account_of(name)
            closing = self._closing_sessions(account, key, "player")
            pending = self._pending_closing(closing, account)
            try:
                if pending.events:
                    self.save_pending(pending)
            except IntegrityError:  # a session opened, or the tokens replaced, meanwhile
                if attempt + 1 == OPEN_TRIES:
                    raise
                continue
            self.sessions_closed(s.id for s in closing)
            return len(closing)
        raise AssertionError("unreachable")  # pragma: no cover

    def closed_here(self, key: str) -> bool:
        """Whether this process knows the session of ``key`` closed (no I/O): closed here,
        or read closed by the follower; a session closed by another process that the follower
        has not read yet, or expired, is found by ``session_name``."""
        sid = session_id(token_hash(key))
        with self._closed_lock:
            return sid in self._closed_here

    def sessions_closed(self, ids: Iterable[UUID]) -> None:
        """Remember these sessions closed (here, or as the follower read)."""
        with self._closed_lock:
            for sid in ids:
                remember(self._closed_here, sid, CLOSED_REMEMBERED)

    def _closing_sessions(self, account: Account, keep: str | None, by: str) -> list[Session]:
        """Close, on ``account`` and on each session, every session of the account that may
        still sign it in, but the one of the key ``keep`` (the caller's own); returns the
        sessions closed (to save with the account, in one transaction). Raises
        ``TokenRevoked`` if ``keep`` is given and no longer signs the account in."""
        now = time.time()
        kept: list[list[Any]] = []
        closing: list[Session] = []
        keep_id = None if keep is None else str(session_id(token_hash(keep)))
        for sid, expires in self._sessions_of(account, now):
            session = self._session(UUID(sid))
            if session is None or not session.signs_in(now):
                continue
            if sid == keep_id:
                kept.append([sid, expires])
                continue
            session.close()
            closing.append(session)
        if keep_id is not None and not kept:
            raise TokenRevoked  # and if it is closed meanwhile, the account's commit fails
        closed = [str(session.id) for session in closing]
        if closing or account.sessions is None or account.sessions != kept:
            account.close_sessions(closed=closed, kept=kept, by=by)
        return closing

    def _pending_closing(self, closing: list[Session], *aggregates: Any) -> Pending:
        """The aggregates' new events and the closing sessions', to save in one transaction;
        the sessions without their aggregates, so that they are not put in the cache."""
        pending = self._pending(*aggregates)
        pending.events.extend(event for s in closing for event in s.collect_events())
        return pending

    def _sessions_of(self, account: Account, now: float) -> list[list[Any]]:
        """The ``[id, expires]`` of the account's sessions not yet expired: as recorded on
        it, or, for an account registered before they were, as found in the store's log."""
        if account.sessions is not None:
            return open_sessions(account.sessions, now)
        opened = self._recorded(Session.Opened)  # type: ignore[attr-defined]
        return [
            [str(event.originator_id), event.expires]
            for event in opened
            if event.name == account.name and unexpired(event.expires, now)
        ]

    def _account_of(self, name: str) -> Account:
        """The account of this exact spelling, as the store has it now."""
        account = self._stored(account_id(name), Account)
        if account is None:
            raise NotFound("account.not_found", name=name)
        return account

    def _session(self, sid: UUID) -> Session | None:
        events = list(self.events.get(sid))
        if not events:
            return None
        session = _fold(None, events)
        return session if isinstance(session, Session) else None

    def _save_session(self, session: Session) -> None:
        # Saved without the aggregate, so that it is not put in the aggregate cache.
        self.save_pending(Pending(list(session.collect_events()), {}))
