"""Accounts: registering a name, bearer tokens, roles."""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError
from eventsourcing.utils import get_topic

from app.services.core import remember
from app.services.sessions import SessionService, TokenRevoked
from domain.accounts import (
    NAMES_CLAIMED_ID,
    Account,
    NameClaim,
    NamesClaimed,
    Token,
    account_id,
    check_name,
    name_claim_id,
    token_hash,
    token_id,
)
from domain.errors import NAME_TAKEN, Conflict, NotFound

#: Tokens whose account name is remembered per process (least recently used dropped).
TOKEN_CACHE_SIZE = 100_000

#: Revoked tokens remembered per process (the newest), for the live streams they opened and
#: so that a token read from the store just before its revocation is not remembered as good.
REVOKED_SIZE = 100_000

#: Tries of a token replacement that meets another one of the same account at the same moment.
REPLACE_TRIES = 3

#: The topic of a token's revocation in the store's log (the follower looks for it).
TOKEN_REVOKED_TOPIC = get_topic(Token.Revoked)  # type: ignore[attr-defined]


class AccountService(SessionService):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Token hash -> account name, and the token's id -> its hash (to forget it by the id
        # its revocation is recorded under). Remembering a token is right only as long as
        # this process learns of its revocation: a revocation made here forgets it at once,
        # one made by another process is read by the store's follower (``app.fanout``), which
        # calls ``tokens_revoked``; ``follow_tokens`` says whether the follower is up to date,
        # and while it is not, tokens are read from the store (docs/api.md, "Replacing a
        # token"). Roles are not kept: ``account(name)`` reads them from the store each time.
        self._token_names: OrderedDict[str, str] = OrderedDict()
        self._token_ids: dict[UUID, str] = {}
        self._revoked: OrderedDict[UUID, None] = OrderedDict()
        self._token_names_lock = threading.Lock()
        self._tokens_fresh: Callable[[], bool] | None = None

    def follow_tokens(self, fresh: Callable[[], bool]) -> None:
        """The server's follower of the store tells revocations made by other processes
        (``tokens_revoked``); ``fresh()``: whether it has read every event recorded up to
        the bound ago. Without a follower (the command line, one process alone) the tokens
        remembered are trusted: only this process revokes them."""
        self._tokens_fresh = fresh

    def register(self, name: str) -> str:
        """A new account; returns its bearer token (only its hash is stored)."""
        check_name(name)
        token = secrets.token_urlsafe(32)
        hashed = token_hash(token)
        account = Account(name=name, token=str(token_id(hashed)), records_sessions=True)
        claim = NameClaim(name=name)  # refused by the store if the name is taken in any case
        issued = Token(hashed=hashed, name=name)
        try:
            self._commit(account, claim, issued)
        except IntegrityError:
            raise Conflict(NAME_TAKEN, "name.taken", name=name) from None
        return token

    def authenticate(self, token: str) -> str | None:
        """The name of the account a bearer token belongs to, or None (unknown or revoked).

        Known tokens are remembered in the process until they are revoked (see
        ``__init__``); roles are not: ``account(name)`` reads them from the store each time."""
        name = self.known_token(token)
        if name is not None:
            return name
        return self.stored_token(token)

    def stored_token(self, token: str) -> str | None:
        """As ``authenticate``, but read from the store even if this process remembers the
        token: for what outlives the request (``POST /sessions``), which a token revoked a
        moment ago by another process must not get while this one still remembers it."""
        hashed = token_hash(token)
        tid = token_id(hashed)
        try:
            issued = self._read(tid)
        except AggregateNotFoundError:
            return None
        if not isinstance(issued, Token) or getattr(issued, "revoked", False):
            return None
        with self._token_names_lock:
            # revoked since the read, as the follower already told: answer, but forget it
            if tid not in self._revoked:
                self._token_names[hashed] = issued.name
                self._token_ids[tid] = hashed
                if len(self._token_names) > TOKEN_CACHE_SIZE:
                    old, _name = self._token_names.popitem(last=False)
                    self._token_ids.pop(token_id(old), None)
        return str(issued.name)

    def known_token(self, token: str) -> str | None:
        """The account name of a token this process has already authenticated and not seen
        revoked (no I/O); None also while the store's follower lags (``follow_tokens``)."""
        fresh = self._tokens_fresh
        if fresh is not None and not fresh():
            return None
        hashed = token_hash(token)
        with self._token_names_lock:
            name = self._token_names.get(hashed)
            if name is not None:
                self._token_names.move_to_end(hashed)
            return name

    def tokens_revoked(self, ids: Iterable[UUID]) -> None:
        """Forget the tokens of these ids: they were revoked (here, or as the follower read)."""
        with self._token_names_lock:
            for tid in ids:
                remember(self._revoked, tid, REVOKED_SIZE)
                hashed = self._token_ids.pop(tid, None)
                if hashed is not None:
                    self._token_names.pop(hashed, None)

    def revoked_here(self, tid: UUID) -> bool:
        """Whether this process knows the token of this id revoked (no I/O)."""
        with self._token_names_lock:
            return tid in self._revoked

    def token_signs_in(self, token: str, name: str) -> bool:
        """Whether the token still signs ``name`` in: in memory while the follower is up to
        date, else read from the store (a live stream asks every few seconds)."""
        tid = token_id(token_hash(token))
        if self.revoked_here(tid):
            return False
        fresh = self._tokens_fresh
        if fresh is None or fresh():
            return True
        return self.authenticate(token) == name

    def replace_tokens(
        self, name: str, by: str, token: str | None = None, session: str | None = None
    ) -> tuple[str, int, int]:
        """Revoke every token of the account ``name``, issue a new one and close every browser
        session of the account but the caller's own (``session``, its key, when he asked
        through it), in one transaction (``Token.Revoked`` for each token, ``Session.Closed``
        for each session, ``Account.TokensReplaced`` and ``Account.SessionsClosed``, a new
        ``Token``); returns the new token, how many tokens were revoked and how many sessions
        closed. ``by``: ``player``
        or ``operator``. Two replacements of one account at the same moment: one is recorded
        first, the other is made again on top of it.

        ``token``: the bearer token the player asked with, if he did; ``session``: the
        session key he asked with, if he did. It must still be good in the store, in the same
        transaction (raises ``TokenRevoked`` otherwise): another process may remember a token
        for up to ``TOKEN_BOUND`` after its revocation, a session check may pass a moment
        before another replacement closes it, and a leak's holder must not turn that moment
        into a new token that revokes the player's."""
        for attempt in range(REPLACE_TRIES):
            account = self.account(name)
            ids = account.tokens if account.tokens is not None else self._issued_to(account.name)
            revoked = []
            for tid in ids:
                issued = self._stored(UUID(tid), Token)
                if issued is not None and not getattr(issued, "revoked", False):
                    issued.revoke(by=by)
                    revoked.append(issued)
            if token is not None and token_id(token_hash(token)) not in {t.id for t in revoked}:
                raise TokenRevoked  # and if it is revoked meanwhile, the commit below fails
            closing = self._closing_sessions(account, session, by)
            new_token = secrets.token_urlsafe(32)
            new = Token(hashed=token_hash(new_token), name=account.name)
            account.replace_tokens(issued=str(new.id), revoked=[str(t.id) for t in revoked], by=by)
            try:
                self.save_pending(self._pending_closing(closing, account, *revoked, new))
            except IntegrityError:
                if attempt + 1 == REPLACE_TRIES:
                    raise
                continue
            self.tokens_revoked(t.id for t in revoked)
            self.sessions_closed(s.id for s in closing)
            return new_token, len(revoked), len(closing)
        raise AssertionError("unreachable")  # pragma: no cover

    def _issued_to(self, name: str) -> list[str]:
        """The ids of the tokens issued to ``name`` (exact spelling), read from the store's
        log: an account registered before its tokens were recorded on it."""
        issued = self._recorded(Token.Issued)  # type: ignore[attr-defined]
        return [str(event.originator_id) for event in issued if event.name == name]

    def account(self, name: str) -> Account:
        """The account as the store has it now (roles included), found by its name in any
        case: the account of that exact spelling first (an older store may hold ``ann`` and
        ``ANN``, two accounts), else the one that holds the name's claim."""
        account = self._stored(account_id(name), Account)
        if account is None:
            claim = self._stored(name_claim_id(name), NameClaim)
            if claim is not None:
                account = self._stored(account_id(claim.name), Account)
        if account is None:
            raise NotFound("account.not_found", name=name)
        return account

    def claim_names(self) -> int:
        """Claims the name of every account registered before names were claimed (a store of
        an older version); returns how many claims it saved. The server runs it at start-up,
        before it answers requests; it is recorded as done (``NamesClaimed``) the first time
        it finds accounts, so that later starts read one aggregate only.

        An older store may hold two accounts whose names differ only in case (``ann`` and
        ``ANN``): the one registered first gets the claim, both keep working (tokens and
        lookups by their exact spelling), and no new account of that name can be made.
        Processes that start together may both claim: the store keeps one of each claim."""
        if self._stored(NAMES_CLAIMED_ID, NamesClaimed) is not None:
            return 0
        seen = claimed = 0
        for registered in self._recorded(Account.Registered):  # type: ignore[attr-defined]
            name = str(registered.name)
            seen += 1
            if self._stored(name_claim_id(name), NameClaim) is None:
                try:
                    self._commit(NameClaim(name=name))
                    claimed += 1
                except IntegrityError:  # claimed at the same moment by another process
                    pass
        if seen:
            with contextlib.suppress(IntegrityError):  # another process got there first
                self._commit(NamesClaimed())
        return claimed

    def set_role(self, name: str, role: str, *, granted: bool) -> None:
        """Operator only (command line): grant or revoke a role such as ``auditor``."""
        account = self.account(name)
        if granted:
            account.grant(role=role)
        else:
            account.revoke(role=role)
        self._save(account)
