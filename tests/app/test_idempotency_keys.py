"""How a key's earlier use decides a request (``app.idempotency_keys.claim``) over the keys'
store (``app.infra.idempotency_store``): the times involved, which HTTP tests cannot wait
for (tests/api/test_idempotency.py plays the rest through HTTP)."""

from __future__ import annotations

from app.idempotency_keys import (
    STALE_CLAIM_SECONDS,
    Claimed,
    InProgress,
    Replay,
    Reused,
    claim,
    seal,
    unseal,
)
from app.infra.idempotency_store import IdempotencyStore

DAY = 24 * 3600.0


def test_a_key_holds_for_its_lifetime_and_no_longer() -> None:
    store = IdempotencyStore.in_memory()
    held = claim(store, "k", "body", now=1000.0, ttl=DAY)
    assert isinstance(held, Claimed)
    store.finish("k", held.claim, 201, "sealed answer")
    assert claim(store, "k", "body", now=1000.0 + DAY - 1, ttl=DAY) == Replay("sealed answer")
    assert isinstance(claim(store, "k", "other", now=1000.0 + DAY - 1, ttl=DAY), Reused)
    # expired: the key is free again, for any body
    again = claim(store, "k", "other", now=1000.0 + DAY + 1, ttl=DAY)
    assert isinstance(again, Claimed) and again != held


def test_expired_keys_are_purged() -> None:
    store = IdempotencyStore.in_memory()
    for name in ("old", "new"):
        assert isinstance(
            claim(store, name, "b", now=0.0 if name == "old" else DAY, ttl=DAY), Claimed
        )
    store.purge(DAY + 1)
    assert store.get("old") is None and store.get("new") is not None


def test_a_request_that_never_answered_is_taken_over_after_a_while() -> None:
    store = IdempotencyStore.in_memory()
    first = claim(store, "k", "b", now=0.0, ttl=DAY)
    assert isinstance(claim(store, "k", "b", now=STALE_CLAIM_SECONDS - 1, ttl=DAY), InProgress)
    second = claim(store, "k", "b", now=STALE_CLAIM_SECONDS + 1, ttl=DAY)
    assert isinstance(first, Claimed) and isinstance(second, Claimed)
    store.finish("k", first.claim, 201, "late")  # the first one's late answer is not kept
    store.finish("k", second.claim, 201, "kept")
    assert claim(store, "k", "b", now=STALE_CLAIM_SECONDS + 2, ttl=DAY) == Replay("kept")


def test_a_released_key_runs_afresh() -> None:
    store = IdempotencyStore.in_memory()
    first = claim(store, "k", "b", now=0.0, ttl=DAY)
    assert isinstance(first, Claimed)
    store.release("k", first.claim)
    assert isinstance(claim(store, "k", "another body", now=1.0, ttl=DAY), Claimed)


def test_a_sealed_answer_opens_only_with_its_key() -> None:
    secret, other = bytes(32), bytes([1]) * 32
    sealed = seal(secret, "id", 201, "application/json", b'{"token": "t0ps3cret"}')
    assert "t0ps3cret" not in sealed
    assert unseal(secret, "id", sealed) == (201, "application/json", b'{"token": "t0ps3cret"}')
    for wrong_secret, wrong_id in ((other, "id"), (secret, "another id")):
        try:
            unseal(wrong_secret, wrong_id, sealed)
        except Exception:
            continue
        raise AssertionError("opened with the wrong key")
