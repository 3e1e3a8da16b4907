"""Accounts: registering a name, bearer tokens, roles."""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from typing import Any

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError

from app.services.core import AppCore
from domain.accounts import Account, Token, account_id, check_name, token_hash, token_id
from domain.errors import NAME_TAKEN, Conflict, NotFound

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
        issued = Token(hashed=token_hash(token), name=name)
        try:
            self._commit(account, issued)
        except IntegrityError:
            raise Conflict(f"the name {name!r} is taken", code=NAME_TAKEN) from None
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
        """The account as the store has it now (roles included)."""
        try:
            account = self._read(account_id(name))
        except AggregateNotFoundError:
            raise NotFound(f"no account {name!r}") from None
        if not isinstance(account, Account):
            raise NotFound(f"no account {name!r}")
        return account

    def set_role(self, name: str, role: str, *, granted: bool) -> None:
        """Operator only (command line): grant or revoke a role such as ``auditor``."""
        account = self.account(name)
        if granted:
            account.grant(role=role)
        else:
            account.revoke(role=role)
        self._save(account)
