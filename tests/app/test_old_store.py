"""A store written by an older version keeps loading (issue 14: stored events keep their
topics and fields).

``tests/fixtures/store_v1/`` holds a SQLite store recorded by the code of 1 December 2026
(see its ``make_store.py``; never regenerated) and a manifest of its tables, deals, bearer
tokens and each player's last sequence number. A copy of it is opened by the server, and
every deal is read, replayed step by step and audited; the running games are continued with
legal commands to the end of their deal and the next deal is started; the read models
still answer.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from domain.commands import Draw
from tests.support.http import Game, state_reader

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "store_v1"
MANIFEST: dict[str, Any] = json.loads((FIXTURE / "manifest.json").read_text())
TABLES: list[dict[str, Any]] = MANIFEST["tables"]


@pytest.fixture
def http(tmp_path: Path) -> Iterator[TestClient]:
    shutil.copy(FIXTURE / "canasta.sqlite", tmp_path / "canasta.sqlite")
    settings = Settings(database_url=None, data_dir=tmp_path, auditors=["audrey"])
    with TestClient(create_app(settings)) as client:
        yield client


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": token}


def _host(table: dict[str, Any]) -> dict[str, str]:
    return _auth(table["tokens"][table["names"][0]])


def _deal_ids(http: TestClient, table: dict[str, Any]) -> list[str]:
    canasta = http.app.state.canasta  # type: ignore[attr-defined]
    deals = list(canasta.get_table(UUID(table["table"])).deals)
    assert deals and deals[-1] == table["deal"]
    return deals


def _game(http: TestClient, table: dict[str, Any]) -> Game:
    return Game(
        http=http,
        table=table["table"],
        names=list(table["names"]),
        headers={name: _auth(token) for name, token in table["tokens"].items()},
        deal=table["deal"],
        seqs=dict(table["seqs"]),
    )


def test_the_fixture_holds_what_the_manifest_says(http: TestClient) -> None:
    entries = sorted({t["entry"] for t in TABLES})
    assert entries == ["classic", "extra_six", "modern_american", "ponytail"]
    for table in TABLES:
        response = http.get(f"/tables/{table['table']}", headers=_host(table))
        assert response.status_code == 200, response.text
        assert response.json()["entry"] == table["entry"]


@pytest.mark.parametrize("table", TABLES, ids=[f"{t['entry']}-{t['note']}" for t in TABLES])
def test_every_deal_reads_and_replays(http: TestClient, table: dict[str, Any]) -> None:
    """(a) each player's view of every deal, and its replay at several steps."""
    for deal in _deal_ids(http, table):
        for name in table["names"]:
            headers = _auth(table["tokens"][name])
            view = http.get(f"/deals/{deal}", headers=headers)
            assert view.status_code == 200, view.text
            last = view.json()["step"]
            assert last > 2
            steps = sorted({1, 2, 3, last // 2, last - 1, last})
            for step in steps:
                replay = http.get(f"/deals/{deal}/replay", params={"step": step}, headers=headers)
                assert replay.status_code == 200, replay.text
                assert replay.json()["step"] == step
            assert replay.json()["phase"] == view.json()["phase"]
            events = http.get(f"/deals/{deal}/events", headers=headers)
            assert events.status_code == 200, events.text


@pytest.mark.parametrize("table", TABLES, ids=[f"{t['entry']}-{t['note']}" for t in TABLES])
def test_every_deal_and_table_audits_clean(http: TestClient, table: dict[str, Any]) -> None:
    """(b) the hash chains, the commitments and every re-decided command agree; the deals,
    recorded before the server signed its records, read as unsigned."""
    auditor = _auth(MANIFEST["auditor"])
    for deal in _deal_ids(http, table):
        response = http.get(f"/audit/deals/{deal}", headers=auditor)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["audit"]["ok"], body["audit"]
        # recorded before signing existed: unsigned, not forged (docs/api.md)
        assert body["audit"]["signature"] in ("unsigned", "not_recorded"), body["audit"]
        assert body["fold_error"] is None
        step = body["step"]
        replay = http.get(f"/audit/deals/{deal}/replay", params={"step": step}, headers=auditor)
        assert replay.status_code == 200, replay.text
    report = http.get(f"/audit/tables/{table['table']}", headers=auditor)
    assert report.status_code == 200, report.text
    assert report.json()["ok"], report.json()


@pytest.mark.parametrize("table", TABLES, ids=[f"{t['entry']}-{t['note']}" for t in TABLES])
def test_running_games_continue(http: TestClient, table: dict[str, Any]) -> None:
    """(c) the running deals are played to their end with legal commands (the players'
    sequence numbers go on from the manifest's), the next deal starts where the game goes
    on, and (d) the read models answer for the whole table."""
    canasta = http.app.state.canasta  # type: ignore[attr-defined]
    state_of = state_reader(canasta)
    game = _game(http, table)
    status = http.get(f"/tables/{table['table']}", headers=game.host).json()["status"]
    if status == "playing":
        rng = random.Random(f"old-store-{table['table']}")
        sent = game.play_deal(state_of, rng)
        assert sent > 0
        assert state_of(table["deal"]).phase == "over"
        status = http.get(f"/tables/{table['table']}", headers=game.host).json()["status"]
        if status == "playing":
            new_deal = game.next_deal()
            assert new_deal != table["deal"]
            view = http.get(f"/deals/{new_deal}", headers=game.host)
            assert view.status_code == 200, view.text
            assert view.json()["number"] == len(_deal_ids(http, {**table, "deal": new_deal}))
    else:
        assert table["note"].startswith("stopped")
        response = game.send(game.names[0], Draw())
        assert response.status_code >= 400
    # (d) read models
    scores = http.get(f"/tables/{table['table']}/scores", headers=game.host)
    assert scores.status_code == 200, scores.text
    lobby = http.get("/tables", headers=game.host)
    assert lobby.status_code == 200, lobby.text
    for deal in _deal_ids(http, {**table, "deal": game.deal}):
        log = http.get(f"/deals/{deal}/discard-log", headers=game.host)
        assert log.status_code == 200, log.text
    auditor = _auth(MANIFEST["auditor"])
    report = http.get(f"/audit/tables/{table['table']}", headers=auditor)
    assert report.status_code == 200, report.text
    assert report.json()["ok"], report.json()
