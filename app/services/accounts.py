"""Accounts: registering a name, bearer tokens, roles."""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections import OrderedDict
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError
from eventsourcing.utils import get_topic

from app.services.core import AppCore
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

A = TypeVar("A")

#: Registrations read per page when the names of an older store are claimed.
CLAIM_PAGE = 1000

#: Tokens whose account name is remembered per process (least recently used dropped).
TOKEN_CACHE_SIZE = 100_000


class AccountService(AppCore):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Token hash -> account name. A token's aggregate has one event (Issued) and is never
        # changed, so remembering it in the process is always right (roles are not kept).
        self._token_names: OrderedDict[str, str] = OrderedDict()
        self._token_names_lock = threading.Lock()

    def register(self, name: str) -> str:
        """A new account; returns its bearer token (only its hash is stored)."""
        check_name(name)
        token = secrets.token_urlsafe(32)
        account = Account(name=name)
        claim = NameClaim(name=name)  # refused by the store if the name is taken in any case
        issued = Token(hashed=token_hash(token), name=name)
        try:
            self._commit(account, claim, issued)
        except IntegrityError:
            raise Conflict(NAME_TAKEN, "name.taken", name=name) from None
        return token

    def authenticate(self, token: str) -> str | None:
        """The name of the account a bearer token belongs to, or None.

        Known tokens are remembered in the process (a token never changes); roles are not:
        ``account(name)`` reads them from the store each time."""
        name = self.known_token(token)
        if name is not None:
            return name
        hashed = token_hash(token)
        try:
            issued = self._read(token_id(hashed))
        except AggregateNotFoundError:
            return None
        if not isinstance(issued, Token):
            return None
        with self._token_names_lock:
            self._token_names[hashed] = issued.name
            if len(self._token_names) > TOKEN_CACHE_SIZE:
                self._token_names.popitem(last=False)
        return str(issued.name)

    def known_token(self, token: str) -> str | None:
        """The account name of a token this process has already authenticated (no I/O)."""
        hashed = token_hash(token)
        with self._token_names_lock:
            name = self._token_names.get(hashed)
            if name is not None:
                self._token_names.move_to_end(hashed)
            return name

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

    def _stored(self, aggregate_id: UUID, kind: type[A]) -> A | None:
        try:
            aggregate = self._read(aggregate_id)
        except AggregateNotFoundError:
            return None
        return aggregate if isinstance(aggregate, kind) else None

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
        topic = get_topic(Account.Registered)  # type: ignore[attr-defined]
        seen = claimed = 0
        start: int | None = None
        while True:
            page = self.recorder.select_notifications(
                start=start, limit=CLAIM_PAGE, topics=[topic], inclusive_of_start=start is None
            )
            for notification in page:
                registered: Any = self.mapper.to_domain_event(notification)
                name = str(registered.name)
                seen += 1
                if self._stored(name_claim_id(name), NameClaim) is None:
                    try:
                        self._commit(NameClaim(name=name))
                        claimed += 1
                    except IntegrityError:  # claimed at the same moment by another process
                        pass
            if len(page) < CLAIM_PAGE:
                break
            start = page[-1].id
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
