"""The keys of ``Idempotency-Key`` (``app.idempotency``): what a header may hold, how a
request's body is compared between a key's uses, the row's id and the answer's encryption,
and how a key's earlier use decides a new request (``claim``) over the keys' store
(``app.infra.idempotency_store``). No HTTP here: the middleware is ``app.idempotency``."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import uuid
from dataclasses import dataclass

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from app.infra.idempotency_store import IdempotencyStore

HEADER = "Idempotency-Key"
#: A key's length: long enough to be unguessable (a UUID is 36 characters).
MIN_KEY, MAX_KEY = 16, 255
#: Its characters: visible ASCII but the quote and the backslash (``parse_key``).
KEY_PATTERN = r"^[!#-\[\]-~]+$"
#: A request that holds its key this long without answering is taken for dead.
STALE_CLAIM_SECONDS = 60.0


class BadKey(ValueError):
    """A header that is not a key (422 ``malformed``)."""


def parse_key(raw: str) -> str:
    """The key of a header value: a string of ``MIN_KEY`` to ``MAX_KEY`` visible ASCII
    characters, bare or quoted (the draft's Structured Field string, ``"..."``)."""
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    if not MIN_KEY <= len(value) <= MAX_KEY:
        raise BadKey(f"{HEADER}: {MIN_KEY} to {MAX_KEY} characters (a UUID will do)")
    if not all(33 <= ord(c) <= 126 and c not in '"\\' for c in value):
        raise BadKey(f"{HEADER}: visible ASCII characters only, no quote or backslash")
    return value


def fingerprint(body: bytes) -> str:
    """The request's body, as compared between a key's uses: JSON read and written again
    (spacing and key order do not matter), other bytes as they are."""
    try:
        canonical = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":"))
        data = b"json\0" + canonical.encode()
    except ValueError:
        data = b"raw\0" + body
    return hashlib.sha256(data).hexdigest()


def derive(caller: str, method: str, path: str, key: str) -> tuple[str, bytes]:
    """The row's id and the answer's encryption key, both from the caller, route and key."""
    material = "\0".join(("canasta-ledger idempotency/1", caller, method, path, key)).encode()
    key_id = hashlib.sha256(b"id\0" + material).hexdigest()
    secret = hashlib.sha256(b"answer\0" + material).digest()
    return key_id, secret


def seal(secret: bytes, key_id: str, status: int, content_type: str, body: bytes) -> str:
    plain = json.dumps(
        {"status": status, "type": content_type, "body": base64.b64encode(body).decode()}
    ).encode()
    nonce = os.urandom(12)
    return base64.b64encode(nonce + AESGCM(secret).encrypt(nonce, plain, key_id.encode())).decode()


def unseal(secret: bytes, key_id: str, sealed: str) -> tuple[int, str, bytes]:
    data = base64.b64decode(sealed)
    plain = json.loads(AESGCM(secret).decrypt(data[:12], data[12:], key_id.encode()))
    return int(plain["status"]), str(plain["type"]), base64.b64decode(plain["body"])


@dataclass(frozen=True)
class Claimed:
    claim: str


@dataclass(frozen=True)
class Replay:
    sealed: str


class Reused:
    pass


class InProgress:
    pass


Outcome = Claimed | Replay | Reused | InProgress


def claim(store: IdempotencyStore, key_id: str, digest: str, now: float, ttl: float) -> Outcome:
    """Take the key for this request, or say what its earlier use decides."""
    mine = uuid.uuid4().hex
    for _ in range(3):  # each turn loses only to a request that changed the row meanwhile
        if store.insert(key_id, digest, mine, now, ttl):
            return Claimed(mine)
        row = store.get(key_id)
        if row is None:
            continue  # freed meanwhile
        dead = row.status is None and row.created_at < now - STALE_CLAIM_SECONDS
        if row.expires_at <= now or dead:
            if store.take_over(key_id, digest, mine, row.claim, now, ttl):
                return Claimed(mine)
            continue
        if row.fingerprint != digest:
            return Reused()
        if row.status is None or row.answer is None:
            return InProgress()
        return Replay(row.answer)
    return InProgress()
