"""Replacing an account's tokens closes its browser sessions (docs/api.md, "Replacing a
token"): the account records the sessions opened with it, and a replacement closes them in
its own transaction; an account of an older store, whose sessions were not recorded on it,
has them found in the store's log. Two applications over one real store (SQLite or
PostgreSQL), one with its follower of the store, as a server process runs it."""

from __future__ import annotations

import time

import pytest

from app.application import CanastaApp
from app.fanout import EventHub
from app.services.sessions import TokenRevoked
from domain.accounts import Account, NameClaim, Token, token_hash
from domain.sessions import Session
from tests.app.test_token_follower import _until, apps, settings

__all__ = ["apps", "settings"]  # the fixtures, shared with test_token_follower

WEEK = 7 * 24 * 3600

Apps = tuple[CanastaApp, EventHub, CanastaApp]


def test_the_follower_tells_the_process_of_sessions_closed_elsewhere(apps: Apps) -> None:
    """What lets a live stream on this process end before it sends anything recorded after
    the closure (``SessionWatch.closed_here``, asked before every write, with no I/O)."""
    here, _hub, other = apps
    token = other.register("ann")
    leaked, _ = other.open_session("ann", WEEK, token)
    assert not here.closed_here(leaked)
    other.replace_tokens("ann", "player", token)
    _until(lambda: here.closed_here(leaked))
    assert here.session_name(leaked) is None


def test_sessions_of_an_older_store_are_found_and_closed(apps: Apps) -> None:
    """An account registered before it recorded its sessions (``Account.Registered`` without
    ``records_sessions``), signed in by sessions opened then (only ``Session.Opened``)."""
    here, _hub, other = apps
    token = "an-older-stores-token-0123456789"
    other._commit(  # as the older version registered: no sessions on the account
        Account(name="old"),
        NameClaim(name="old"),
        Token(hashed=token_hash(token), name="old"),
    )
    keys = [f"an-older-session-key-{n}-0123456789" for n in range(2)]
    now = int(time.time())
    for key in keys:  # as the older version opened them: nothing on the account
        other._save_session(Session(hashed=token_hash(key), name="old", expires=now + WEEK))
    ended = "an-older-session-expired-0123456789"
    other._save_session(Session(hashed=token_hash(ended), name="old", expires=now - 1))
    other_account = other.register("olde")  # another account's session stays open
    olde, _ = other.open_session("olde", WEEK, other_account)
    assert here.account("old").sessions is None
    for key in keys:
        assert here.session_name(key) == "old"

    _new, revoked, closed = here.replace_tokens("old", "operator")
    assert (revoked, closed) == (1, 2)
    for app in (here, other):
        for key in keys:
            assert app.session_name(key) is None
        assert app.session_name(olde) == "olde"
    assert here.account("old").sessions == []  # recorded from now on
    mine, _ = here.open_session("old", WEEK)
    assert [pair[0] for pair in here.account("old").sessions or []] == [
        str(Session.create_id(token_hash(mine), "old", 0))
    ]


def test_a_session_is_not_opened_with_a_token_replaced_meanwhile(apps: Apps) -> None:
    """``POST /sessions`` checks the token in the store, then opens the session: a
    replacement between the two must not leave the old token's holder a session that the
    replacement did not close. The opening checks the account's tokens in its own
    transaction."""
    here, _hub, other = apps
    old = other.register("ann")
    assert here.stored_token(old) == "ann"  # the route's check passed ...
    new, _revoked, _closed = other.replace_tokens("ann", "player", old)  # ... then this
    before = other.account("ann")
    with pytest.raises(TokenRevoked):
        here.open_session("ann", WEEK, old)
    after = other.account("ann")
    assert (after.version, after.sessions) == (before.version, before.sessions)  # nothing
    key, _ = here.open_session("ann", WEEK, new)
    assert other.session_name(key) == "ann"


def test_a_session_closed_meanwhile_cannot_replace_the_tokens(apps: Apps) -> None:
    """The leak's holder's session passed the session check a moment before the player's
    replacement closed it; his own replacement, through that session, must not revoke the
    player's new token and keep his session open."""
    here, _hub, other = apps
    old = other.register("ann")
    attacker, _ = here.open_session("ann", WEEK, old)
    player, _ = other.open_session("ann", WEEK, old)
    assert here.session_name(attacker) == "ann"  # the check passed ...
    new, _revoked, closed = other.replace_tokens("ann", "player", session=player)
    assert closed == 1
    with pytest.raises(TokenRevoked):  # ... then the replacement closed it
        here.replace_tokens("ann", "player", session=attacker)
    assert here.stored_token(new) == "ann"
    assert here.session_name(player) == "ann"
    assert here.session_name(attacker) is None


def test_expired_sessions_are_pruned_from_the_account(apps: Apps) -> None:
    here, _hub, other = apps
    token = other.register("ann")
    here.open_session("ann", 0, token)  # expired at once
    kept, _ = here.open_session("ann", WEEK, token)
    expected = str(Session.create_id(token_hash(kept), "ann", 0))
    assert [pair[0] for pair in other.account("ann").sessions or []] == [expected]
