"""The shuffle (R-DEAL-3): Fisher–Yates over a deterministic stream derived from a
secret 256-bit seed, with rejection sampling so that no index is favoured.

The seed comes from a cryptographic source outside the domain and is recorded in the
shuffle event; replaying the event recomputes the same order without any randomness.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

SEED_BYTES = 32
_COMMITMENT_TAG = b"canasta-ledger/deal-commitment/v1\x00"


class _Stream:
    """SHA-256 in counter mode: an unbounded byte stream keyed by the seed."""

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._counter = 0
        self._buffer = b""

    def u32(self) -> int:
        if len(self._buffer) < 4:
            block = hashlib.sha256(self._seed + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
            self._buffer += block
        word, self._buffer = self._buffer[:4], self._buffer[4:]
        return int.from_bytes(word, "big")

    def below(self, n: int) -> int:
        """A uniform integer in ``range(n)`` (rejection sampling, no modulo bias)."""
        limit = (1 << 32) - ((1 << 32) % n)
        while True:
            x = self.u32()
            if x < limit:
                return x % n


def shuffled(cards: Sequence[str], seed: bytes) -> list[str]:
    """``cards`` in the order the seed determines (top of the deck first)."""
    if len(seed) != SEED_BYTES:
        raise ValueError("the shuffle seed must be 256 bits")
    order = list(cards)
    stream = _Stream(seed)
    for i in range(len(order) - 1, 0, -1):
        j = stream.below(i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def commitment(deal_id: str, seed: bytes) -> str:
    """The public commitment to a deal's seed: SHA-256 over a tag, the deal id and the seed."""
    return hashlib.sha256(_COMMITMENT_TAG + deal_id.encode() + b"\x00" + seed).hexdigest()


def stacked_commitment(deal_id: str, order: Sequence[str]) -> str:
    """Commitment for a stacked deck (tests and scenarios only)."""
    data = "\x00".join(order).encode()
    return hashlib.sha256(
        _COMMITMENT_TAG + deal_id.encode() + b"\x00stacked\x00" + data
    ).hexdigest()
