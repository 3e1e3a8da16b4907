"""Player accounts and their bearer tokens (R-CMD-2), as aggregates.

An account's id is derived from its name and a token's id from the token's hash, so a
name is unique and a token is found without any index: the store itself refuses a second
account of the same name. Only a SHA-256 hash of a token is ever stored.
"""

from __future__ import annotations

import hashlib
import re
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate, event

from domain.errors import SetupError

AUDITOR = "auditor"
NAME_PATTERN = re.compile(r"[A-Za-z0-9._-]{1,32}")


def check_name(name: str) -> None:
    """R-CMD-2: an account name is 1 to 32 letters, digits, '.', '_' or '-'."""
    if not NAME_PATTERN.fullmatch(name):
        raise SetupError("R-CMD-2", "a name is 1 to 32 letters, digits, '.', '_' or '-'")


def account_id(name: str) -> UUID:
    return uuid5(NAMESPACE_URL, f"canasta-ledger:account:{name}")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_id(hashed: str) -> UUID:
    return uuid5(NAMESPACE_URL, f"canasta-ledger:token:{hashed}")


class Account(Aggregate):
    @event("Registered")
    def __init__(self, name: str) -> None:
        self.name = name
        self.roles: list[str] = []

    @classmethod
    def create_id(cls, name: str) -> UUID:
        return account_id(name)

    @event("RoleGranted")
    def grant(self, role: str) -> None:
        if role not in self.roles:
            self.roles.append(role)

    @event("RoleRevoked")
    def revoke(self, role: str) -> None:
        if role in self.roles:
            self.roles.remove(role)


class Token(Aggregate):
    """A bearer token, known by its hash; it names the account it authenticates."""

    @event("Issued")
    def __init__(self, hashed: str, name: str) -> None:
        self.name = name

    @classmethod
    def create_id(cls, hashed: str, name: str) -> UUID:
        return token_id(hashed)
