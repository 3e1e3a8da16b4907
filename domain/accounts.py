"""Player accounts and their bearer tokens (R-CMD-2), as aggregates.

An account's id is derived from its name and a token's id from the token's hash, so a token
is found without any index. Names are unique without regard to case (``ann`` and ``ANN`` are
one name): every account registered holds a ``NameClaim`` whose id is derived from the
name's key (its lower-case form), saved in the same transaction as the account, so the store
itself refuses a second account whose name differs only in case, across every process that
shares it. An account keeps the spelling it was registered with (the key is only used for
uniqueness and lookups). Only a SHA-256 hash of a token is ever stored.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate, event

from domain.errors import SetupError
from domain.sessions import unexpired

AUDITOR = "auditor"
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}", re.ASCII)


def check_name(name: str) -> None:
    """R-CMD-2: an account name is 1 to 32 ASCII letters, digits, '.', '_' or '-', and starts
    with a letter or a digit (so neither ``.`` nor ``..``, nor a name that looks like an
    option or a hidden file)."""
    if not NAME_PATTERN.fullmatch(name):
        raise SetupError("R-CMD-2", "name.invalid")


def name_key(name: str) -> str:
    """What makes two names the same: the name in lower case (names are ASCII, so this is
    their case folding)."""
    return name.lower()


def account_id(name: str) -> UUID:
    """The account of this exact spelling (ids of stored accounts: never change it)."""
    return uuid5(NAMESPACE_URL, f"canasta-ledger:account:{name}")


def name_claim_id(name: str) -> UUID:
    """The claim on a name, the same for every spelling of it."""
    return uuid5(NAMESPACE_URL, f"canasta-ledger:name:{name_key(name)}")


#: The aggregate whose existence says that every account of the store holds its claim (see
#: ``AccountService.claim_names``).
NAMES_CLAIMED_ID = uuid5(NAMESPACE_URL, "canasta-ledger:names-claimed")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_id(hashed: str) -> UUID:
    return uuid5(NAMESPACE_URL, f"canasta-ledger:token:{hashed}")


class Account(Aggregate):
    """A player's account. ``tokens``: the ids of the bearer tokens that sign it in, or None
    for an account registered before they were recorded on it (its token is then found by
    the account's name on the tokens issued: ``AccountService.replace_tokens``).

    ``sessions``: the browser sessions opened with it that may still sign it in, as pairs
    ``[session id, expires]`` (seconds since the epoch), the expired ones pruned whenever one
    is opened; None for an account registered before they were recorded on it, until its
    sessions are first closed (they are then found by the account's name on the sessions
    opened: ``AccountService.replace_tokens``)."""

    @event("Registered")
    def __init__(self, name: str, token: str | None = None, records_sessions: bool = False) -> None:
        self.name = name
        self.roles: list[str] = []
        self.tokens: list[str] | None = None if token is None else [token]
        self.sessions: list[list[Any]] | None = [] if records_sessions else None

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

    @event("TokensReplaced")
    def replace_tokens(self, issued: str, revoked: list[str], by: str) -> None:
        """Every token of the account (``revoked``, their ids) replaced by one new token
        (``issued``); ``by``: ``player`` (``POST /me/token``) or ``operator`` (the CLI)."""
        self.tokens = [issued]

    @event("SessionOpened")
    def open_session(self, session: str, expires: int, now: int) -> None:
        """A browser session (its id) signs the account in until ``expires``; the sessions
        expired by ``now`` are forgotten."""
        if self.sessions is not None:
            self.sessions = [*open_sessions(self.sessions, now), [session, expires]]

    @event("SessionsClosed")
    def close_sessions(self, closed: list[str], kept: list[list[Any]], by: str) -> None:
        """The sessions ``closed`` (their ids) sign nobody in any more; ``kept``: the account's
        sessions still open (``[id, expires]``: the one that asked, if it was a session).
        ``by``: ``player`` or ``operator``, as for ``replace_tokens``."""
        self.sessions = [list(pair) for pair in kept]


def open_sessions(sessions: list[list[Any]], now: float) -> list[list[Any]]:
    """The ``[session id, expires]`` pairs of an account that have not expired by ``now``."""
    return [list(pair) for pair in sessions if unexpired(pair[1], now)]


class NameClaim(Aggregate):
    """The one account a name (in any case) belongs to; ``name`` is that account's spelling."""

    @event("Claimed")
    def __init__(self, name: str) -> None:
        self.name = name

    @classmethod
    def create_id(cls, name: str) -> UUID:
        return name_claim_id(name)


class NamesClaimed(Aggregate):
    """Recorded once per store, when every account registered before names were claimed
    (stores of older versions) holds its claim or shares its name with an older account."""

    @event("Recorded")
    def __init__(self) -> None:
        pass

    @classmethod
    def create_id(cls) -> UUID:
        return NAMES_CLAIMED_ID


class Token(Aggregate):
    """A bearer token, known by its hash; it names the account it authenticates until it is
    revoked (replaced by a new one: ``Account.replace_tokens``)."""

    @event("Issued")
    def __init__(self, hashed: str, name: str) -> None:
        self.name = name
        self.revoked = False

    @classmethod
    def create_id(cls, hashed: str, name: str) -> UUID:
        return token_id(hashed)

    @event("Revoked")
    def revoke(self, by: str) -> None:
        self.revoked = True
