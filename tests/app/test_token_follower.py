"""How a server process learns that a bearer token was revoked by another one (docs/api.md,
"Replacing a token"): its follower of the store (``app.fanout.EventHub``) reads the
revocation and the process forgets the token, with no store read per request; and if the
follower lags (stopped here: its thread ended, as a stuck one would be), the process stops
trusting the tokens it remembers once its last complete read is ``TOKEN_BOUND`` old, and reads
each token from the store instead. Two applications over one real store, SQLite or PostgreSQL.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from app.application import CanastaApp
from app.fanout import SLOW_READ, EventHub
from app.settings import Settings, eventsourcing_env
from app.token_freshness import TOKEN_BOUND
from domain.accounts import Account, NameClaim, Token, token_hash, token_id

#: How long a test waits for the follower to do what it must (not a bound it asserts).
PATIENCE = 30.0


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    if request.param == "sqlite":
        return Settings(data_dir=tmp_path, stream_poll_seconds=0.05)
    url = request.getfixturevalue("migrated_postgres_url")
    return Settings(database_url=url, postgres_pool_size=4, stream_poll_seconds=0.05)


@pytest.fixture
def apps(settings: Settings) -> Iterator[tuple[CanastaApp, EventHub, CanastaApp]]:
    """This process (its application and follower) and another process on the same store."""
    here = CanastaApp(env=eventsourcing_env(settings))
    other = CanastaApp(env=eventsourcing_env(settings))
    hub = EventHub.for_settings(here, settings)
    hub.start()
    try:
        yield here, hub, other
    finally:
        hub.close()
        here.close()
        other.close()


def test_the_follower_tells_the_process_of_a_revocation_made_elsewhere(
    apps: tuple[CanastaApp, EventHub, CanastaApp],
) -> None:
    here, hub, other = apps
    token = other.register("ann")
    assert here.authenticate(token) == "ann"
    assert here.known_token(token) == "ann"  # remembered: no store read from now on
    other.replace_tokens("ann", "player")
    time.sleep(TOKEN_BOUND)
    assert hub.tokens_fresh()  # the follower keeps up: memory is trusted ...
    assert here.known_token(token) is None  # ... and no longer holds the old token
    assert here.authenticate(token) is None


def test_a_process_whose_follower_lags_reads_tokens_from_the_store(
    apps: tuple[CanastaApp, EventHub, CanastaApp],
) -> None:
    here, hub, other = apps
    token = other.register("ann")
    bob = other.register("bob")
    assert here.authenticate(token) == "ann" and here.authenticate(bob) == "bob"
    hub.close()  # the follower stops reading: it will never see the revocation
    new, revoked, _closed = other.replace_tokens("ann", "operator")
    assert revoked == 1
    time.sleep(TOKEN_BOUND + 0.5)
    assert not hub.tokens_fresh()
    assert here.known_token(token) is None  # memory is not trusted any more
    assert here.authenticate(token) is None  # the store says it is revoked
    assert here.authenticate(new) == "ann"
    assert here.authenticate(bob) == "bob"  # still served, from the store


def test_an_account_of_an_older_store_has_its_token_found_and_revoked(
    apps: tuple[CanastaApp, EventHub, CanastaApp],
) -> None:
    """Accounts registered before their tokens were recorded on them (``Account.Registered``
    without ``token``): the token is found among the tokens issued, by the account's name."""
    here, _hub, other = apps
    token = "an-older-stores-token-0123456789"
    other._commit(  # as the older version registered: no token id on the account
        Account(name="old"),
        NameClaim(name="old"),
        Token(hashed=token_hash(token), name="old"),
    )
    other.register("olde")  # another account's token is not revoked with it
    assert here.authenticate(token) == "old"
    new, revoked, _closed = here.replace_tokens("old", "operator")
    assert revoked == 1
    assert here.authenticate(token) is None and other.authenticate(token) is None
    assert other.authenticate(new) == "old"
    assert here.account("old").tokens is not None  # recorded from now on


def _until(done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + PATIENCE
    while not done():
        assert time.monotonic() < deadline, "the follower never got there"
        time.sleep(0.01)


def test_a_token_read_just_before_its_revocation_elsewhere_is_not_remembered(
    apps: tuple[CanastaApp, EventHub, CanastaApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race ``AccountService.authenticate`` guards: this process reads the token from the
    store (good), another process revokes it, this process's follower reads the revocation,
    and only then does the first request remember the token. Were it remembered, this process
    would accept it for ever: the follower has already passed the revocation. The steps are
    ordered by a hook on the store read, not by sleeps."""
    here, _hub, other = apps
    token = other.register("ann")
    tid = token_id(token_hash(token))
    read = here._read

    def read_then_revoked_elsewhere(aggregate_id: object, *args: object, **kw: object) -> object:
        found = read(aggregate_id, *args, **kw)  # type: ignore[arg-type]
        if aggregate_id == tid:
            other.replace_tokens("ann", "operator")
            _until(lambda: here.revoked_here(tid))  # the follower has told this process
        return found

    monkeypatch.setattr(here, "_read", read_then_revoked_elsewhere)
    assert here.authenticate(token) == "ann"  # good when it was read: answered once
    monkeypatch.undo()
    assert here.known_token(token) is None  # but not remembered
    assert here.authenticate(token) is None
    assert other.authenticate(token) is None


def test_a_follower_that_lags_is_logged_once_and_counted_then_caught_up(
    apps: tuple[CanastaApp, EventHub, CanastaApp],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An operator sees when a process stops trusting the tokens it remembers (its follower
    lags past ``TOKEN_BOUND``: every request then reads its token from the store): one
    warning, ``canasta_token_follower_lagging`` 1 and ``canasta_token_follower_lags_total``
    one more; when it catches up, one line more and the gauge back to 0."""
    here, hub, other = apps
    token = other.register("ann")
    assert here.authenticate(token) == "ann"
    gate = threading.Event()
    read_to_head = hub._read_to_head

    def stuck() -> bool:  # the database slow, say: the follower's reads wait
        gate.wait()
        return read_to_head()

    # From a follower up to date (on a loaded machine a read of its own may have lagged).
    _until(lambda: hub.tokens_fresh() and not hub._freshness.lagging)
    lags = REGISTRY.get_sample_value("canasta_token_follower_lags_total") or 0.0
    caplog.set_level(logging.INFO, logger="app.fanout")
    monkeypatch.setattr(hub, "_read_to_head", stuck)
    try:
        _until(lambda: not hub.tokens_fresh())
        for _ in range(5):  # every request asks: one line all the same
            assert here.known_token(token) is None
            assert here.authenticate(token) == "ann"
        lagging = [r for r in caplog.records if "tokens are read from the store" in r.message]
        assert len(lagging) == 1 and lagging[0].levelno == logging.WARNING
        assert REGISTRY.get_sample_value("canasta_token_follower_lagging") == 1
        assert REGISTRY.get_sample_value("canasta_token_follower_lags_total") == lags + 1
    finally:
        gate.set()
    _until(hub.tokens_fresh)
    _until(lambda: any("caught up" in r.message for r in caplog.records))
    assert here.known_token(token) == "ann"  # memory trusted again
    assert REGISTRY.get_sample_value("canasta_token_follower_lagging") == 0
    assert REGISTRY.get_sample_value("canasta_token_follower_lags_total") == lags + 1
    assert len([r for r in caplog.records if "caught up" in r.message]) == 1


def test_a_slow_poll_setting_still_keeps_the_tokens_remembered(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """``CANASTA_STREAM_POLL_SECONDS`` may be up to 10 s, longer than ``TOKEN_BOUND``: a quiet
    store's follower then read only every 10 s, and between two reads the process trusted no
    token it remembered (every request read its token from the store, and the lag was
    logged as one). The follower looks at least every quarter of the bound."""
    slow = settings.model_copy(update={"stream_poll_seconds": 10.0})
    here = CanastaApp(env=eventsourcing_env(slow))
    hub = EventHub.for_settings(here, slow)
    try:
        token = here.register("ann")
        hub.start()
        assert here.authenticate(token) == "ann"
        caplog.set_level(logging.INFO, logger="app.fanout")
        time.sleep(TOKEN_BOUND + 1)  # nothing written meanwhile
        assert hub.tokens_fresh()
        assert here.known_token(token) == "ann"
        assert not [r for r in caplog.records if "tokens are read from the store" in r.message]
    finally:
        hub.close()
        here.close()


def test_a_slow_read_is_followed_by_another_at_once(
    apps: tuple[CanastaApp, EventHub, CanastaApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read that took long vouches only for what was committed when it began, a moment short
    of ``TOKEN_BOUND`` after a stall: the follower reads once more at once. It waited for its
    next wake-up, and the tokens went stale again meanwhile: a second lag logged and counted
    for one stall (CI, 5 December)."""
    _, hub, _ = apps
    test_thread = threading.get_ident()
    parked, release = threading.Event(), threading.Event()
    read_to_head = hub._read_to_head
    reads: list[float] = []

    def timed_read() -> bool:
        if threading.get_ident() != test_thread:  # the follower's own thread waits aside
            parked.set()
            release.wait()
            return read_to_head()
        reads.append(time.monotonic())
        if len(reads) == 1:
            time.sleep(SLOW_READ * 1.5)  # the database slow, say
        return read_to_head()

    monkeypatch.setattr(hub, "_read_to_head", timed_read)
    try:
        assert parked.wait(10)
        hub._read_new()
        assert len(reads) == 2, reads  # read again at once
        assert hub._freshness._fresh_at >= reads[0] + SLOW_READ  # fresh as of the second
    finally:
        release.set()
