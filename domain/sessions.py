"""Browser sessions (R-CMD-2): a signed-in browser's cookie, as an aggregate.

A web page signs a player in with his bearer token once (``POST /sessions``); the browser then
holds a random session key in an HttpOnly cookie instead of the token. The store keeps only
the key's SHA-256 hash (the session's id is derived from it, as a token's is), the account it
signs in, and when it expires; signing out records ``Closed``. Every server process sharing
the store reads the same sessions, so a session opened on one is known to all, and one closed
on one is closed for all.

Pure: the clock is read by the caller and handed in (``signs_in(now)``).
"""

from __future__ import annotations

from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate, event


def session_id(hashed: str) -> UUID:
    return uuid5(NAMESPACE_URL, f"canasta-ledger:session:{hashed}")


def unexpired(expires: float, now: float) -> bool:
    """Whether a session that ends at ``expires`` (seconds since the epoch) still runs at
    ``now``."""
    return now < expires


class Session(Aggregate):
    """A browser session, known by its key's hash; it signs ``name`` in until ``expires``
    (seconds since the epoch) unless it is closed first."""

    @event("Opened")
    def __init__(self, hashed: str, name: str, expires: int) -> None:
        self.name = name
        self.expires = expires
        self.closed = False

    @classmethod
    def create_id(cls, hashed: str, name: str, expires: int) -> UUID:
        return session_id(hashed)

    @event("Closed")
    def close(self) -> None:
        self.closed = True

    def signs_in(self, now: float) -> bool:
        return not self.closed and unexpired(self.expires, now)
