"""Signed records: what the server's key signs when a table records a deal's score.

The hash chain (``domain.chain``) shows where a stored history was altered, but whoever can
write the database can rewrite a deal *and* recompute its chain. The server therefore signs,
with a key kept outside the database (``app.signing``), the table's record of each finished
deal: the table, the deal, its number, its last chain link (which commits to every event of
the deal) and the scores and running totals the table records. The signature and the id of
the key that made it are stored in the table's ``DealRecorded`` event.

The domain only builds the message and records the result: signing and verifying are done by
the objects passed in (``Signer``, ``Verifier``), so the domain stays free of keys and
cryptography.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Protocol

#: The version of the signed message's layout (part of the message: a signature never
#: verifies under another layout).
RECORD_FORMAT = "canasta-ledger/deal-record/1"

#: The only algorithm used so far (the published keys name it).
ALGORITHM = "Ed25519"


def record_message(
    table_id: str,
    deal_id: str,
    number: int,
    final_link: str,
    scores: Mapping[str, int],
    totals: Mapping[str, int],
) -> bytes:
    """The bytes signed for a table's record of one deal: canonical JSON (sorted keys, no
    spaces, ASCII), so anyone can rebuild them from the stored record (docs/api.md)."""
    body = {
        "format": RECORD_FORMAT,
        "table": table_id,
        "deal": deal_id,
        "number": number,
        "final_link": final_link,
        "scores": {str(k): int(v) for k, v in scores.items()},
        "totals": {str(k): int(v) for k, v in totals.items()},
    }
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


class Signer(Protocol):
    """Signs a message with the server's current key."""

    def sign(self, message: bytes) -> tuple[str, str]:
        """(the key's id, the signature in base64)."""
        ...


class Verifier(Protocol):
    """Checks a signature against the public keys the server publishes."""

    def verify(self, key_id: str, message: bytes, signature: str) -> bool | None:
        """True if it verifies, False if not, None if no key of that id is known."""
        ...
