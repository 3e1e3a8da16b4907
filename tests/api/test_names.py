"""Account names (R-CMD-2, docs/rules/common.md "Names"): unique without regard to case
(``ann`` and ``ANN`` are one name), kept in the spelling they were registered with, found in
any case by the operator's command line and ``CANASTA_AUDITORS``; ``.``, ``..`` and names
that do not start with a letter or a digit are refused. The uniqueness holds across
application processes sharing one PostgreSQL, and an older store that already holds two
spellings of one name keeps both accounts working while no new clash can be made."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.application import CanastaApp
from app.main import create_app
from app.settings import Settings, eventsourcing_env
from domain.accounts import Account, Token, token_hash
from tests.api.test_audit import run_cli

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "store_v1"


def _taken(response: Any, same_as: Any) -> None:
    """Refused as the name being taken: the answer a second ``ann`` gets."""
    assert response.status_code == same_as.status_code == 409, response.text
    assert response.json()["error"]["code"] == same_as.json()["error"]["code"]
    assert "taken" in response.json()["error"]["message"]


def test_a_name_in_another_case_is_taken(client: TestClient) -> None:
    first = client.post("/players", json={"name": "Ann"})
    assert first.status_code == 201
    again = client.post("/players", json={"name": "Ann"})
    for spelling in ["ann", "ANN", "aNn"]:
        _taken(client.post("/players", json={"name": spelling}), again)
    # the account keeps its spelling
    token = first.json()["token"]
    me = client.get("/me", headers={"Authorization": f"Bearer {token}"})
    assert me.json()["name"] == "Ann"


@pytest.mark.parametrize("name", [".", "..", ".ann", "-ann", "_ann", "...", "-"])
def test_names_that_do_not_start_with_a_letter_or_digit_are_refused(
    client: TestClient, name: str
) -> None:
    response = client.post("/players", json={"name": name})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "R-CMD-2"
    assert "starting with a letter or a digit" in response.json()["error"]["message"]
    assert client.post("/players", json={"name": "9lives"}).status_code == 201


def test_auditors_in_the_settings_are_named_in_any_case(
    make_client: Callable[..., TestClient], register: Any
) -> None:
    client = make_client(auditors=["AUDREY"])
    audrey = register(client, "audrey")
    assert "auditor" in client.get("/me", headers=audrey).json()["roles"]
    olga = register(client, "olga")
    assert "auditor" not in client.get("/me", headers=olga).json()["roles"]


def _old_store(data_dir: Path, names: list[str]) -> dict[str, str]:
    """A store as the versions before name claims wrote it: accounts and tokens only (two
    spellings of one name were then two accounts); returns each name's token."""
    settings = Settings(database_url=None, data_dir=data_dir)
    canasta = CanastaApp(env=eventsourcing_env(settings))
    tokens = {}
    try:
        for name in names:
            tokens[name] = f"token-of-{name}"
            issued = Token(hashed=token_hash(tokens[name]), name=name)
            canasta._commit(Account(name=name), issued)
    finally:
        canasta.close()
    return tokens


def test_an_old_store_with_two_spellings_keeps_both_and_allows_no_new_clash(
    tmp_path: Path,
) -> None:
    tokens = _old_store(tmp_path, ["ann", "ANN", "Bob"])
    settings = Settings(database_url=None, data_dir=tmp_path, auditors=["bob"])
    with TestClient(create_app(settings)) as client:
        for name, token in tokens.items():
            me = client.get("/me", headers={"Authorization": f"Bearer {token}"})
            assert me.status_code == 200, me.text
            assert me.json()["name"] == name  # each account, in its own spelling
        again = client.post("/players", json={"name": "ann"})
        for spelling in ["Ann", "aNN", "bob", "BOB"]:
            _taken(client.post("/players", json={"name": spelling}), again)
        # CANASTA_AUDITORS=bob names the old account Bob
        bob = client.get("/me", headers={"Authorization": f"Bearer {tokens['Bob']}"})
        assert "auditor" in bob.json()["roles"]
        canasta = client.app.state.canasta  # type: ignore[attr-defined]
        assert canasta.account("ANN").name == "ANN"  # the exact spelling first
        assert canasta.account("ann").name == "ann"
        assert canasta.account("Ann").name == "ann"  # else the claim: the first registered
        assert canasta.account("BOB").name == "Bob"
    # a second start finds the claims made (and reads one aggregate to know it)
    again_app = CanastaApp(env=eventsourcing_env(settings))
    try:
        assert again_app.claim_names() == 0
    finally:
        again_app.close()


def test_the_command_line_finds_a_name_in_any_case_on_an_old_store(tmp_path: Path) -> None:
    """``canasta grant-auditor`` claims an old store's names itself (no server has opened it
    yet) and names the account in its own spelling."""
    tokens = _old_store(tmp_path, ["ann", "ANN", "Bob"])
    env = {"CANASTA_DATA_DIR": str(tmp_path)}
    done = run_cli("grant-auditor", "BOB", env=env)
    assert done.returncode == 0, done.stderr
    assert "granted the auditor role to Bob" in done.stdout
    done = run_cli("grant-auditor", "aNn", env=env)  # the claim: the first registered
    assert "granted the auditor role to ann" in done.stdout, done.stdout + done.stderr
    with TestClient(create_app(Settings(database_url=None, data_dir=tmp_path))) as client:
        roles = {
            name: client.get("/me", headers={"Authorization": f"Bearer {token}"}).json()["roles"]
            for name, token in tokens.items()
        }
    assert roles == {"ann": ["auditor"], "ANN": [], "Bob": ["auditor"]}


def test_the_old_fixture_store_claims_its_names(tmp_path: Path) -> None:
    manifest = json.loads((FIXTURE / "manifest.json").read_text())
    shutil.copy(FIXTURE / "canasta.sqlite", tmp_path / "canasta.sqlite")
    table = manifest["tables"][0]
    name = table["names"][0]
    with TestClient(create_app(Settings(database_url=None, data_dir=tmp_path))) as client:
        exact = client.post("/players", json={"name": name})
        _taken(client.post("/players", json={"name": name.upper()}), exact)
        me = client.get("/me", headers={"Authorization": table["tokens"][name]})
        assert me.json()["name"] == name


@pytest.mark.postgres
def test_two_processes_cannot_register_one_name_in_two_cases(migrated_postgres_url: str) -> None:
    """Two application services on one PostgreSQL (as two server processes), released
    together: ``ann`` and ``ANN``, many times over; exactly one of each pair is registered."""
    settings = Settings(database_url=migrated_postgres_url)
    apps = [CanastaApp(env=eventsourcing_env(settings)) for _ in range(2)]
    try:
        for round_ in range(20):
            spellings = [f"racer{round_}", f"RACER{round_}"]
            barrier = threading.Barrier(2)
            results: list[str] = []

            def register(
                app: CanastaApp, name: str, barrier: threading.Barrier, results: list[str]
            ) -> None:
                barrier.wait(timeout=10)
                try:
                    app.register(name)
                    results.append("ok")
                except Exception as exc:  # the refusal: a taken name
                    results.append(type(exc).__name__)

            threads = [
                threading.Thread(target=register, args=(app, name, barrier, results))
                for app, name in zip(apps, spellings, strict=True)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert sorted(results) == ["Conflict", "ok"], results
        # a server starting on this store finds every name claimed (and records it once)
        assert apps[0].claim_names() == 0
        assert apps[1].claim_names() == 0
    finally:
        for app in apps:
            app.close()
