"""The audit over HTTP (R-VIEW-4, R-DEAL-3, R-HIST-1/2) and the operator's role tool.

Only an auditor may audit: an account named in ``Settings.auditors`` or given the role with
``canasta grant-auditor NAME`` (run here as a real subprocess on the same SQLite store, or on
PostgreSQL); anonymous requests get 401 and other accounts 403 (R-VIEW-4). The auditor sees
the seed, the deck, every hand and the stock, and the report of ``domain.audit``. Tampering
is done the way an intruder would: an UPDATE of the stored event row in the database file
(SQLite) or table (PostgreSQL); the audit then names that row's step as the first broken link.

Games are played through the real ASGI app (TestClient): players register, sit, start and send
every command over HTTP; a seeded random legal player chooses the commands.
"""

from __future__ import annotations

import json
import logging
import random
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import pytest
from fastapi.testclient import TestClient

from app.autoplay import SeededRandom
from app.main import create_app
from app.settings import Settings
from domain.cards import full_deck
from domain.shuffle import commitment, shuffled
from tests.support import cli
from tests.support.cli import STORE_VARIABLES
from tests.support.http import Game, canasta_of, open_table, register_player, state_reader
from tests.support.keys import key_file
from tests.support.store import sqlite_row, sqlite_tamper

PLAYERS = ["ann", "bob", "cid", "dan"]
AUDITOR = "audra"


def new_game(http: TestClient, seed: int = 1) -> Game:
    """A 4-player classic table of ``PLAYERS`` (the first hosts) with deal 1 played to its end
    over HTTP; the auditor and an outsider are registered too.

    The server's chance (the first dealer, the shuffle's seed) is drawn from ``seed`` as well,
    so that the deal is the same every run: the tests tamper with its third discard, its second
    draw or its first meld, and compare its scores with a forged deal's, which a deal shuffled
    anew each run need not have or may equal. It is still a shuffle by the server, with a seed
    and a commitment for the audit (R-DEAL-3)."""
    canasta_of(http).random = SeededRandom(random.Random(f"audit chance:{seed}"))
    game = open_table(http, PLAYERS)
    for name in (AUDITOR, "olga"):
        game.headers[name] = register_player(http, name)
    game.play_deal(state_reader(canasta_of(http)), random.Random(seed))
    return game


@pytest.fixture
def sqlite_client(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """TestClients over the SQLite store in ``tmp_path`` (the CLI's CANASTA_DATA_DIR)."""
    clients: list[TestClient] = []

    def make(**settings: Any) -> TestClient:
        client = TestClient(create_app(Settings(data_dir=tmp_path, **settings)))
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``canasta ARGS`` on the store ``env`` names, with no auditors of the test's own."""
    return cli.run_cli(*args, env=env, without=(*STORE_VARIABLES, "CANASTA_AUDITORS"))


# --- who may audit -------------------------------------------------------------------------


def test_without_a_token_the_audit_is_401_and_for_others_403_r_view_4(
    sqlite_client: Callable[..., TestClient],
) -> None:
    http = sqlite_client(auditors=[AUDITOR])
    game = new_game(http)
    urls = [
        f"/audit/deals/{game.deal_id}",
        f"/audit/deals/{game.deal_id}/replay?step=5",
        f"/audit/tables/{game.table}",
    ]
    for url in urls:
        r = http.get(url)
        assert r.status_code == 401 and r.json()["error"]["code"] == "R-CMD-2", url
        assert "seed" not in r.text
        r = http.get(url, headers={"Authorization": "Bearer nonsense"})
        assert r.status_code == 401, url
        for name in (PLAYERS[0], PLAYERS[1], "olga"):  # the host, a player, an outsider
            r = http.get(url, headers=game.headers[name])
            assert r.status_code == 403 and r.json()["error"]["code"] == "R-VIEW-4", (url, name)
            assert "seed" not in r.text and "hands" not in r.text
        assert http.get(url, headers=game.headers[AUDITOR]).status_code == 200, url


def test_an_unknown_deal_or_table_is_404_for_the_auditor(
    sqlite_client: Callable[..., TestClient],
) -> None:
    http = sqlite_client(auditors=[AUDITOR])
    game = new_game(http)
    auditor = game.headers[AUDITOR]
    nowhere = "00000000-0000-0000-0000-000000000000"
    assert http.get(f"/audit/deals/{nowhere}", headers=auditor).status_code == 404
    assert http.get(f"/audit/tables/{nowhere}", headers=auditor).status_code == 404
    # a table id is not a deal, nor a deal id a table
    assert http.get(f"/audit/deals/{game.table}", headers=auditor).status_code == 404
    assert http.get(f"/audit/tables/{game.deal_id}", headers=auditor).status_code == 404
    assert http.get("/audit/deals/not-a-uuid", headers=auditor).status_code == 422


# --- what the auditor sees -----------------------------------------------------------------


def test_the_auditor_sees_the_seed_every_hand_the_stock_and_a_clean_report_r_view_4(
    sqlite_client: Callable[..., TestClient],
) -> None:
    http = sqlite_client(auditors=[AUDITOR])
    game = new_game(http, seed=2)
    auditor = game.headers[AUDITOR]
    live = canasta_of(game.http).get_deal(UUID(game.deal_id))
    r = http.get(f"/audit/deals/{game.deal_id}", headers=auditor)
    assert r.status_code == 200, r.text
    out = r.json()

    report = out["audit"]
    assert report["ok"] is True, report
    assert report["chain_ok"] and report["commitment_ok"] and report["rules_ok"]
    assert report["first_broken_step"] is None and report["first_mismatch_step"] is None
    assert report["complete"] is True and report["events"] == live.version == out["step"]
    assert live.state.scores is not None
    assert report["final_scores"] == {s: b["total"] for s, b in live.state.scores.items()}

    # the seed matches the commitment everybody saw at the deal's start (R-DEAL-3)
    public = http.get(f"/deals/{game.deal_id}").json()
    assert public["commitment"] == out["commitment"]
    seed = bytes.fromhex(out["seed"])
    assert commitment(game.deal_id, seed) == out["commitment"]
    assert out["deck"] == shuffled(full_deck(2), seed)
    assert sorted(out["stock_after_cut"]) == sorted(full_deck(2))

    # every hand: as dealt, and at the end
    assert {seat: len(cards) for seat, cards in out["dealt"].items()} == {
        str(s): 11 for s in range(4)
    }
    dealt_in_order = [
        card
        for event in out["events"]
        if event["kind"] == "CardsDealt"
        for _s, card in event["cards"]
    ]
    assert dealt_in_order == out["stock_after_cut"][: len(dealt_in_order)]
    assert out["hands"] == {str(s): live.state.hands[s] for s in live.state.order}
    assert out["final"]["scores"] == live.state.scores

    # every event, with all its fields, the chain link and the time it covers
    assert [e["step"] for e in out["events"]] == list(range(1, live.version + 1))
    assert all(len(e["chain"]) == 64 and e["at"] for e in out["events"])
    assert out["events"][1]["kind"] == "DeckShuffled" and out["events"][1]["seed"] == out["seed"]

    # replay: the full state at any step (R-HIST-2)
    for step in (3, 4, live.version // 2, live.version):
        r = http.get(f"/audit/deals/{game.deal_id}/replay", params={"step": step}, headers=auditor)
        assert r.status_code == 200, r.text
        view = r.json()
        then = canasta_of(game.http).get_deal(UUID(game.deal_id), version=step).state
        assert view["step"] == step and view["event"]["step"] == step
        assert view["hands"] == {str(s): then.hands[s] for s in then.order}
        assert view["stock"] == list(reversed(then.stock))
        assert view["pile_cards"] == then.pile and view["phase"] == then.phase
    r = http.get(f"/audit/deals/{game.deal_id}/replay", params={"step": 10**6}, headers=auditor)
    assert r.status_code == 200 and r.json()["step"] == live.version

    # the table: every deal's report, and the table's record of the scores
    r = http.get(f"/audit/tables/{game.table}", headers=auditor)
    assert r.status_code == 200, r.text
    table = r.json()
    assert table["ok"] is True and table["table_ok"] is True and table["problems"] == []
    assert [d["deal"] for d in table["deals"]] == [game.deal_id]


# --- the operator's tool -------------------------------------------------------------------


def test_a_configured_auditor_name_no_account_holds_is_warned_of_at_each_start(
    sqlite_client: Callable[..., TestClient], caplog: pytest.LogCaptureFixture
) -> None:
    """``CANASTA_AUDITORS`` names accounts: a name nobody has registered yet goes to the first
    visitor who registers it (every hand, the stock). The operator is warned at each start
    until the account exists."""
    caplog.set_level(logging.WARNING, logger="app.main")
    http = sqlite_client(auditors=[AUDITOR, "ann"])
    register_player(http, "ann")
    warned = [r.getMessage() for r in caplog.records if "CANASTA_AUDITORS" in r.getMessage()]
    assert len(warned) == 2 and repr(AUDITOR) in warned[0] and "'ann'" in warned[1], warned
    visitor = register_player(http, AUDITOR)  # what the warning is about
    assert http.get("/me", headers=visitor).json()["roles"] == ["auditor"]
    caplog.clear()
    sqlite_client(auditors=[AUDITOR, "ANN"])  # both registered now (any case)
    assert not [r for r in caplog.records if "CANASTA_AUDITORS" in r.getMessage()]


def test_grant_auditor_on_the_command_line_gives_the_role_to_a_running_server(
    tmp_path: Path, sqlite_client: Callable[..., TestClient]
) -> None:
    http = sqlite_client()  # nobody is an auditor through the settings
    game = new_game(http, seed=3)
    olga = game.headers["olga"]
    url = f"/audit/deals/{game.deal_id}"
    assert http.get(url, headers=olga).status_code == 403
    env = {"CANASTA_DATA_DIR": str(tmp_path)}

    done = run_cli("grant-auditor", "olga", env=env)
    assert done.returncode == 0, done.stderr
    assert "granted the auditor role to olga" in done.stdout and "SQLite" in done.stdout
    r = http.get(url, headers=olga)  # the same server process, no restart
    assert r.status_code == 200 and r.json()["audit"]["ok"] is True
    # a second server process on the same store agrees
    other = sqlite_client()
    assert other.get(url, headers=olga).status_code == 200

    again = run_cli("grant-auditor", "olga", env=env)
    assert again.returncode == 0 and "already holds" in again.stdout

    audited = run_cli("audit", game.deal_id, env=env)
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert f"deal {game.deal_id}: ok" in audited.stdout
    as_json = run_cli("audit", "--json", game.table, env=env)
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["ok"] is True

    done = run_cli("revoke-auditor", "olga", env=env)
    assert done.returncode == 0 and "revoked the auditor role of olga" in done.stdout
    assert http.get(url, headers=olga).status_code == 403

    unknown = run_cli("grant-auditor", "nobody", env=env)
    assert unknown.returncode == 1 and "no account 'nobody'" in unknown.stderr
    assert unknown.stdout == ""
    missing = run_cli("audit", "00000000-0000-0000-0000-000000000000", env=env)
    assert missing.returncode == 2 and "no deal or table" in missing.stderr
    # the API itself never grants a role: there is no such route
    assert http.post("/players/olga/roles", json={"role": "auditor"}, headers=olga).status_code in (
        404,
        405,
    )


def test_the_cli_refuses_an_in_memory_store() -> None:
    done = run_cli("grant-auditor", "olga", env={"DATABASE_URL": "memory"})
    assert done.returncode == 2 and "in-memory store" in done.stderr


# --- tampering with the store itself --------------------------------------------------------


def test_an_update_of_a_stored_row_in_sqlite_is_the_first_broken_link(
    tmp_path: Path, sqlite_client: Callable[..., TestClient]
) -> None:
    http = sqlite_client(auditors=[AUDITOR])
    game = new_game(http, seed=4)
    auditor = game.headers[AUDITOR]
    db = Settings(data_dir=tmp_path).sqlite_path
    version, state = sqlite_row(db, game.deal_id, "CardDiscarded", 3)
    before = http.get(
        f"/audit/deals/{game.deal_id}/replay", params={"step": version - 1}, headers=auditor
    ).json()
    other = next(
        card for s, hand in before["hands"].items() if int(s) != state["seat"] for card in hand
    )
    sqlite_tamper(db, game.deal_id, version, json.dumps({**state, "card": other}).encode())

    out = http.get(f"/audit/deals/{game.deal_id}", headers=auditor).json()
    report = out["audit"]
    assert report["ok"] is False and report["chain_ok"] is False
    assert report["first_broken_step"] == version
    assert report["commitment_ok"] is True  # the seed was not touched
    assert report["rules_ok"] is False and report["first_mismatch_step"] == version
    assert "R-CMD-3" in report["message"]
    tampered = next(e for e in out["events"] if e["step"] == version)
    assert tampered["card"] == other  # the history shows what the store now holds
    # the stored events fold only up to the step before: the replay says so past it
    assert out["folded_to"] == version - 1 and "does not fold" in out["fold_error"]
    replay = f"/audit/deals/{game.deal_id}/replay"
    assert http.get(replay, params={"step": version - 1}, headers=auditor).status_code == 200
    r = http.get(replay, params={"step": version}, headers=auditor)
    assert r.status_code == 409 and r.json()["error"]["code"] == "R-HIST-1"

    table = http.get(f"/audit/tables/{game.table}", headers=auditor).json()
    assert table["ok"] is False and table["deals"][0]["first_broken_step"] == version

    cli = run_cli("audit", game.deal_id, env={"CANASTA_DATA_DIR": str(tmp_path)})
    assert cli.returncode == 1
    assert f"hash chain BROKEN at step {version}" in cli.stdout
    # The whole store's audit (after a restore, say) finds it too, and says where.
    cli = run_cli("audit", "--all", env={"CANASTA_DATA_DIR": str(tmp_path)})
    assert cli.returncode == 1
    assert f"table {game.table}: PROBLEMS" in cli.stdout
    assert f"hash chain BROKEN at step {version}" in cli.stdout
    assert cli.stdout.rstrip().endswith("1 tables, 1 deals audited: PROBLEMS in 1 of them")


def test_an_unreadable_stored_row_is_reported_not_a_server_error(
    tmp_path: Path, sqlite_client: Callable[..., TestClient]
) -> None:
    http = sqlite_client(auditors=[AUDITOR])
    game = new_game(http, seed=5)
    db = Settings(data_dir=tmp_path).sqlite_path
    version, _state = sqlite_row(db, game.deal_id, "CardsDrawn", 2)
    sqlite_tamper(db, game.deal_id, version, b"{not json")
    r = http.get(f"/audit/deals/{game.deal_id}", headers=game.headers[AUDITOR])
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["unreadable_step"] == version
    assert out["audit"]["ok"] is False and out["audit"]["first_broken_step"] == version
    assert len(out["events"]) == version - 1


@pytest.mark.postgres
def test_an_update_of_a_stored_row_in_postgresql_is_the_first_broken_link(
    migrated_postgres_url: str, tmp_path: Path
) -> None:
    settings = Settings(
        database_url=migrated_postgres_url, auditors=[AUDITOR], signing_key_file=key_file(tmp_path)
    )
    with TestClient(create_app(settings)) as http:
        game = new_game(http, seed=6)
        auditor = game.headers[AUDITOR]
        assert http.get(f"/audit/deals/{game.deal_id}", headers=auditor).json()["audit"]["ok"]

        # the operator's tool works on PostgreSQL too
        done = run_cli("grant-auditor", "olga", env={"DATABASE_URL": migrated_postgres_url})
        assert done.returncode == 0 and "PostgreSQL" in done.stdout, done.stderr
        assert (
            http.get(f"/audit/deals/{game.deal_id}", headers=game.headers["olga"]).status_code
            == 200
        )

        with psycopg.connect(migrated_postgres_url, autocommit=True) as db:
            row = db.execute(
                "SELECT originator_version, state FROM canasta_events WHERE originator_id = %s "
                "AND topic = 'domain.events:MeldLaid' ORDER BY originator_version LIMIT 1",
                (UUID(game.deal_id),),
            ).fetchone()
            assert row is not None
            version, raw = row
            state = json.loads(bytes(raw))
            state["cards"] = list(reversed(state["cards"]))
            updated = db.execute(
                "UPDATE canasta_events SET state = %s "
                "WHERE originator_id = %s AND originator_version = %s",
                (json.dumps(state).encode(), UUID(game.deal_id), version),
            )
            assert updated.rowcount == 1

        report = http.get(f"/audit/deals/{game.deal_id}", headers=auditor).json()["audit"]
        assert report["ok"] is False and report["chain_ok"] is False
        assert report["first_broken_step"] == version
        cli = run_cli("audit", game.deal_id, env={"DATABASE_URL": migrated_postgres_url})
        assert cli.returncode == 1 and f"BROKEN at step {version}" in cli.stdout
