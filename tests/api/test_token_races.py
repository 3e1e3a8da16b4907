"""A leaked token's holder against the player who replaces it (docs/api.md, "Replacing a
token"), through two real uvicorn processes sharing one store, on SQLite and PostgreSQL.

The old token may still be remembered by the other process for up to ``TOKEN_BOUND``
seconds: it must not be able to turn those seconds into a token of its own (a replacement
that revokes the player's new one), and two replacements at the same moment leave exactly
one good token. Once the bound has passed, no route answers the old token anything but 401.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from app.application import CanastaApp
from app.services.accounts import TokenRevoked
from app.sessions import COOKIE
from app.settings import Settings, eventsourcing_env
from app.token_freshness import TOKEN_BOUND
from domain import commands as c
from domain.accounts import token_hash, token_id
from tests.api.test_token_replacement import Servers, _bearer, _me, servers
from tests.support.http import open_table
from tests.support.replica import Replica

__all__ = ["servers"]  # the fixture, shared with test_token_replacement


def test_two_replacements_at_once_on_two_processes_leave_one_good_token(
    servers: Servers,
) -> None:
    here, elsewhere = servers.here, servers.elsewhere
    old = _bearer(here.post("/players", json={"name": "ann"}).json()["token"])
    for http in (here, elsewhere):  # both remember it
        assert _me(http, old).status_code == 200
    answers: dict[str, httpx.Response] = {}
    go = threading.Barrier(2)

    def replace(name: str, http: httpx.Client) -> None:
        go.wait()
        answers[name] = http.post("/me/token", headers=old)

    threads = [
        threading.Thread(target=replace, args=(name, http))
        for name, http in (("here", here), ("elsewhere", elsewhere))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    made = [a for a in answers.values() if a.status_code == 201]
    assert len(made) == 1, {n: (a.status_code, a.text) for n, a in answers.items()}
    assert all(a.status_code in (201, 401) for a in answers.values())
    new = _bearer(made[0].json()["token"])
    time.sleep(TOKEN_BOUND + 0.5)
    for http in (here, elsewhere):
        assert _me(http, new).json()["name"] == "ann"
        assert _me(http, old).status_code == 401


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def settings(request: pytest.FixtureRequest, tmp_path: object) -> Settings:
    if request.param == "sqlite":
        return Settings(data_dir=tmp_path)
    return Settings(database_url=request.getfixturevalue("migrated_postgres_url"))


def test_a_token_still_remembered_elsewhere_cannot_replace_the_new_one(
    settings: Settings,
) -> None:
    """The window the bound leaves: the player replaced his leaked token on one process; the
    other has not heard yet (its follower is a moment behind: here, none at all) and still
    takes the old token. ``POST /me/token`` with it there would revoke the player's new
    token and hand the leak's holder one of his own, for good. The replacement checks the
    token it was asked with in the store, in its own transaction."""
    player = CanastaApp(env=eventsourcing_env(settings))
    lagging = CanastaApp(env=eventsourcing_env(settings))
    try:
        old = player.register("ann")
        assert lagging.authenticate(old) == "ann"
        new, revoked, _closed = player.replace_tokens("ann", "player", old)
        assert revoked == 1
        assert lagging.known_token(old) == "ann"  # the window
        with pytest.raises(TokenRevoked):
            lagging.replace_tokens("ann", "player", old)
        assert lagging.authenticate(new) == "ann"
        assert lagging.account("ann").tokens == [str(token_id(token_hash(new)))]
    finally:
        player.close()
        lagging.close()


def test_a_revoked_token_reaches_nothing_on_either_process(servers: Servers) -> None:
    here, elsewhere = servers.here, servers.elsewhere
    game = open_table(here, ("ann", "bob"))
    old = dict(game.headers["ann"])
    deal, table = game.deal, game.table
    key = {"Idempotency-Key": "ann-table-before-the-leak-01"}
    body = {"entry": "classic", "players": 2}
    assert here.post("/tables", json=body, headers={**old, **key}).status_code == 201
    for http in (here, elsewhere):
        assert _me(http, old).status_code == 200
    new = _bearer(here.post("/me/token", headers=old).json()["token"])
    time.sleep(TOKEN_BOUND + 0.5)
    routes = [
        ("GET", "/me"),
        ("GET", f"/deals/{deal}"),
        ("GET", f"/deals/{deal}/events"),
        ("GET", f"/deals/{deal}/moves"),
        ("GET", f"/deals/{deal}/replay"),
        ("GET", f"/deals/{deal}/stream"),
        ("GET", f"/tables/{table}"),
        ("GET", f"/tables/{table}/stream"),
        ("GET", f"/audit/deals/{deal}"),
        ("GET", "/sessions/current"),
        ("POST", "/sessions"),
        ("POST", "/me/token"),
        ("POST", "/tables"),
        ("POST", f"/tables/{table}/leave"),
    ]
    for http in (here, elsewhere):
        for method, path in routes:
            answer = http.request(method, path, headers=old, json=body)
            assert answer.status_code == 401, (method, path, answer.status_code, answer.text)
            assert (
                "set-cookie" not in answer.headers
                or "canasta_session=;" in answer.headers["set-cookie"]
            ), (method, path)
        # a command, by the command lane or the route
        game.http, game.headers["ann"] = http, new  # a well-made command ...
        command = game.request("ann", c.Cut(20), 1)
        sent = http.post(f"/deals/{deal}/commands", json=command, headers=old)  # ... old token
        assert sent.status_code == 401, sent.text
        # the Idempotency-Key of a table made before: not replayed to the old token
        assert http.post("/tables", json=body, headers={**old, **key}).status_code == 401
    for http in (here, elsewhere):
        assert _me(http, new).json()["name"] == "ann"


@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_in_the_window_the_old_token_gets_neither_a_session_nor_a_new_token(
    store: str, request: pytest.FixtureRequest, make_client: Callable[..., TestClient]
) -> None:
    """A process that has not yet heard of the revocation (its follower a moment behind:
    held here, and trusted) takes the old token for a request, as the bound allows, but not
    for what outlives it: a browser session (``POST /sessions``, open for days) or a new
    token (``POST /me/token``). Both check the store."""
    url = request.getfixturevalue("migrated_postgres_url") if store == "postgres" else None
    http = make_client(database_url=url)
    canasta: CanastaApp = http.app.state.canasta  # type: ignore[attr-defined]
    old = _bearer(http.post("/players", json={"name": "ann"}).json()["token"])
    assert _me(http, old).status_code == 200  # remembered
    http.app.state.hub.close()  # type: ignore[attr-defined]
    canasta.follow_tokens(lambda: True)  # ... and trusted: the follower has not read it yet
    operator = CanastaApp(env=eventsourcing_env(http.app.state.settings))  # type: ignore[attr-defined]
    try:
        new, _revoked, _closed = operator.replace_tokens("ann", "operator")
    finally:
        operator.close()
    assert _me(http, old).status_code == 200  # the window
    unknown = _me(http, _bearer("made-up-token"))
    for path in ("/sessions", "/me/token"):
        answer = http.post(path, headers=old)
        assert answer.status_code == 401, (path, answer.text)
        assert answer.json() == unknown.json()
        assert COOKIE not in answer.headers.get("set-cookie", "")  # no session
    assert _me(http, _bearer(new)).json()["name"] == "ann"  # the operator's token stands


def test_a_command_racing_the_replacement_lands_whole_or_is_refused(servers: Servers) -> None:
    """The cutter's command sent with his old token on one process while he replaces the
    token on the other: answered 200 and recorded, or 401 and nothing recorded."""
    here, elsewhere = servers.here, servers.elsewhere
    game = open_table(here, ("ann", "bob"))
    cutter = game.names[here.get(f"/deals/{game.deal_id}").json()["cutter"]]
    old = dict(game.headers[cutter])
    assert _me(elsewhere, old).status_code == 200  # remembered there
    command = game.request(cutter, c.Cut(20), 1)
    step = here.get(f"/deals/{game.deal_id}").json()["step"]
    answers: dict[str, httpx.Response] = {}
    go = threading.Barrier(2)

    def send(what: str, call: Callable[[], httpx.Response]) -> None:
        go.wait()
        answers[what] = call()

    threads = [
        threading.Thread(
            target=send,
            args=(
                "command",
                lambda: elsewhere.post(
                    f"/deals/{game.deal_id}/commands", json=command, headers=old
                ),
            ),
        ),
        threading.Thread(
            target=send, args=("replace", lambda: here.post("/me/token", headers=old))
        ),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers["replace"].status_code == 201, answers["replace"].text
    sent = answers["command"]
    assert sent.status_code in (200, 401), sent.text
    now = here.get(f"/deals/{game.deal_id}").json()["step"]
    assert (now > step) == (sent.status_code == 200), (sent.status_code, step, now)
    time.sleep(TOKEN_BOUND + 0.5)
    again = elsewhere.post(f"/deals/{game.deal_id}/commands", json=command, headers=old)
    assert again.status_code == 401  # not even the replay of an answer it got


@pytest.mark.postgres
def test_a_lagging_replica_does_not_bring_a_revoked_token_back(
    uvicorn_server: Callable[..., Any], migrated_postgres_url: str, replica: Replica
) -> None:
    """Two processes reading through a read replica that stops replaying (a stream open on
    the other, so that its follower reads the replica): the token replaced on the first is
    refused by both within the bound, while the replica still holds it good."""
    env = {"CANASTA_READ_DATABASE_URL": replica.url, "CANASTA_RUN_BOTS": "false"}
    first = uvicorn_server(database_url=migrated_postgres_url, env=env)
    second = uvicorn_server(database_url=migrated_postgres_url, env=env)
    with (
        httpx.Client(base_url=first.url, timeout=30) as here,
        httpx.Client(base_url=second.url, timeout=30) as elsewhere,
    ):
        game = open_table(here, ("ann", "bob"))
        old = dict(game.headers["ann"])
        for http in (here, elsewhere):
            assert _me(http, old).status_code == 200
        with (
            elsewhere.stream("GET", f"/deals/{game.deal_id}/stream", headers=game.headers["bob"]),
            replica.paused(),
        ):
            new = _bearer(here.post("/me/token", headers=old).json()["token"])
            time.sleep(TOKEN_BOUND + 0.5)
            for http in (here, elsewhere):
                assert _me(http, old).status_code == 401
                assert http.get(f"/deals/{game.deal_id}", headers=old).status_code == 401
                assert _me(http, new).json()["name"] == "ann"
