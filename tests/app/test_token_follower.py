"""How a server process learns that a bearer token was revoked by another one (docs/api.md,
"Replacing a token"): its follower of the store (``app.fanout.EventHub``) reads the
revocation and the process forgets the token, with no store read per request; and if the
follower lags (stopped here: its thread ended, as a stuck one would be), the process stops
trusting the tokens it remembers once its last complete read is ``TOKEN_BOUND`` old, and reads
each token from the store instead. Two applications over one real store, SQLite or PostgreSQL.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.application import CanastaApp
from app.fanout import TOKEN_BOUND, EventHub
from app.settings import Settings, eventsourcing_env
from domain.accounts import Account, NameClaim, Token, token_hash


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
    new, revoked = other.replace_tokens("ann", "operator")
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
    new, revoked = here.replace_tokens("old", "operator")
    assert revoked == 1
    assert here.authenticate(token) is None and other.authenticate(token) is None
    assert other.authenticate(new) == "old"
    assert here.account("old").tokens is not None  # recorded from now on
