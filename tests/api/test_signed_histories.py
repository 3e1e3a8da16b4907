"""Signed histories (docs/operations.md, "Signing keys"; docs/api.md, the audit).

The server signs each table's record of a finished deal (its last chain link, scores and
totals) with a key kept outside the database, and publishes the public keys at
``GET /.well-known/canasta-keys``. An intruder who rewrites a finished deal *and* recomputes
its chain, its commitment and the table's record (``tests/support/forgery.py``) passes every
other check of the audit; the signature names the deal as forged. Rotating the key keeps the
old signatures verifiable; a PostgreSQL server without a key refuses to start.
"""

from __future__ import annotations

import base64
import json
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from app.signing import RACY_NS, SigningKeyError
from tests.api.test_audit import AUDITOR, canasta_of, new_game, run_cli
from tests.support.forgery import forge_postgres, forge_sqlite
from tests.support.http import free_port, open_table, state_reader
from tests.support.keys import key_file

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def clients(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    """Started TestClients over ``create_app(Settings(data_dir=tmp_path, **settings))``
    (the SQLite store in ``tmp_path``), closed after the test or by ``close(client)``."""
    opened: list[TestClient] = []

    def make(**settings: Any) -> TestClient:
        client = TestClient(create_app(Settings(data_dir=tmp_path, **settings)))
        client.__enter__()
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.__exit__(None, None, None)


def audit_of(http: TestClient, game: Any, deal: str) -> tuple[dict[str, Any], dict[str, Any]]:
    auditor = game.headers[AUDITOR]
    report = http.get(f"/audit/deals/{deal}", headers=auditor).json()["audit"]
    table = http.get(f"/audit/tables/{game.table}", headers=auditor).json()
    return report, table


def check_forged(report: dict[str, Any], table: dict[str, Any]) -> None:
    # the rewrite is consistent: the chain, the commitment and the rules all pass
    assert report["chain_ok"] and report["commitment_ok"] and report["rules_ok"], report
    assert report["signature"] == "forged" and report["ok"] is False
    assert "signature" in report["signature_message"]
    # the table's arithmetic agrees with the forged deal: only the signature tells
    assert table["table_ok"] is True, table["problems"]
    assert table["ok"] is False
    assert [d["signature"] for d in table["deals"]] == ["forged"]


def test_a_rewritten_deal_with_its_chain_recomputed_is_named_forged_sqlite(
    tmp_path: Path, clients: Callable[..., TestClient]
) -> None:
    http = clients(auditors=[AUDITOR])
    game = new_game(http, seed=7)
    before, _ = audit_of(http, game, game.deal_id)
    assert before["ok"] is True and before["signature"] == "valid"
    key_id = before["signature_key_id"]
    assert key_id in [k["key_id"] for k in http.get("/.well-known/canasta-keys").json()["keys"]]

    db = Settings(data_dir=tmp_path).sqlite_path
    forge_sqlite(canasta_of(http), db, UUID(game.table), UUID(game.deal_id), seed=8)

    report, table = audit_of(http, game, game.deal_id)
    check_forged(report, table)
    assert report["final_scores"] != before["final_scores"]  # another deal altogether

    cli = run_cli("audit", game.deal_id, env={"CANASTA_DATA_DIR": str(tmp_path)})
    assert cli.returncode == 1, cli.stderr
    assert "signature forged" in cli.stdout


@pytest.mark.postgres
def test_a_rewritten_deal_with_its_chain_recomputed_is_named_forged_postgresql(
    migrated_postgres_url: str, tmp_path: Path, clients: Callable[..., TestClient]
) -> None:
    keys = key_file(tmp_path)
    http = clients(database_url=migrated_postgres_url, auditors=[AUDITOR], signing_key_file=keys)
    game = new_game(http, seed=9)
    assert audit_of(http, game, game.deal_id)[0]["signature"] == "valid"

    forge_postgres(
        canasta_of(http), migrated_postgres_url, UUID(game.table), UUID(game.deal_id), seed=10
    )

    check_forged(*audit_of(http, game, game.deal_id))
    env = {"DATABASE_URL": migrated_postgres_url, "CANASTA_SIGNING_KEY_FILE": str(keys)}
    cli = run_cli("audit", game.table, env=env)
    assert cli.returncode == 1, cli.stderr
    assert "signature forged" in cli.stdout


def test_the_published_key_verifies_a_record_outside_the_server(
    clients: Callable[..., TestClient],
) -> None:
    """Anyone may fetch the keys (no token) and check a record with any Ed25519 library."""
    http = clients(auditors=[AUDITOR])
    game = new_game(http, seed=11)
    r = http.get("/.well-known/canasta-keys")
    assert r.status_code == 200, r.text
    published = r.json()
    assert published["format"] == "canasta-ledger/deal-record/1"
    (key,) = published["keys"]
    assert key["algorithm"] == "Ed25519" and key["current"] is True and key["until"] is None
    assert key["since"] and "BEGIN PUBLIC KEY" in key["public_key_pem"]

    # the auditor's report shows the signed record; the message is rebuilt as docs/api.md says
    audit = http.get(f"/audit/tables/{game.table}", headers=game.headers[AUDITOR]).json()
    (deal,) = audit["deals"]
    record = deal["signed_record"]
    assert deal["signature"] == "valid" and record["key_id"] == key["key_id"]
    message = json.dumps(
        {
            "format": published["format"],
            "table": game.table,
            "deal": game.deal_id,
            "number": record["number"],
            "final_link": record["final_link"],
            "scores": record["scores"],
            "totals": record["totals"],
        },
        sort_keys=True,
        separators=(",", ":"),
    ).encode()
    public = Ed25519PublicKey.from_public_bytes(base64.b64decode(key["public_key"]))
    public.verify(base64.b64decode(record["signature"]), message)  # raises if it does not
    forged = message.replace(b'"number":1', b'"number":2')
    with pytest.raises(InvalidSignature):
        public.verify(base64.b64decode(record["signature"]), forged)


def test_after_a_rotation_old_deals_still_verify_and_new_ones_use_the_new_key(
    tmp_path: Path, clients: Callable[..., TestClient]
) -> None:
    keys = tmp_path / "keys" / "signing-key.json"
    retired = tmp_path / "keys" / "retired"
    made = run_cli("keys", "new", "--out", str(keys), env={})
    assert made.returncode == 0, made.stderr
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600
    again = run_cli("keys", "new", "--out", str(keys), env={})
    assert again.returncode == 2 and "never overwritten" in again.stderr
    public = run_cli("keys", "public", str(keys), env={})
    assert public.returncode == 0, public.stderr
    assert "private_key" not in public.stdout
    assert json.loads(public.stdout)["key_id"] == json.loads(keys.read_text())["key_id"]

    settings = {"auditors": [AUDITOR], "signing_key_file": keys, "retired_keys_dir": retired}
    first = clients(**settings)
    game = new_game(first, seed=12)
    first_key = audit_of(first, game, game.deal_id)[0]["signature_key_id"]
    first.__exit__(None, None, None)

    rotated = run_cli(
        "keys", "rotate", "--key-file", str(keys), "--retired-dir", str(retired), env={}
    )
    assert rotated.returncode == 0, rotated.stderr
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600

    second = clients(**settings)
    game.http = second
    game.next_deal()
    game.play_deal(state_reader(canasta_of(second)), random.Random(13))
    table = second.get(f"/audit/tables/{game.table}", headers=game.headers[AUDITOR]).json()
    assert table["ok"] is True, table
    (old, new) = table["deals"]
    assert old["signature"] == new["signature"] == "valid"
    assert old["signature_key_id"] == first_key != new["signature_key_id"]

    published = {k["key_id"]: k for k in second.get("/.well-known/canasta-keys").json()["keys"]}
    assert published[first_key]["current"] is False and published[first_key]["until"]
    assert published[new["signature_key_id"]]["current"] is True
    env = {"CANASTA_SIGNING_KEY_FILE": str(keys), "CANASTA_RETIRED_KEYS_DIR": str(retired)}
    listed = run_cli("keys", "list", env=env)
    assert listed.returncode == 0, listed.stderr
    assert {k["key_id"] for k in json.loads(listed.stdout)} == set(published)
    second.__exit__(None, None, None)

    # without the retired key, the old deal's key is unknown: the audit fails, it does not pass
    forgetful = clients(auditors=[AUDITOR], signing_key_file=keys, retired_keys_dir=tmp_path)
    table = forgetful.get(f"/audit/tables/{game.table}", headers=game.headers[AUDITOR]).json()
    assert [d["signature"] for d in table["deals"]] == ["unknown_key", "valid"]
    assert table["ok"] is False


def test_the_embedded_store_makes_its_key_on_first_run_and_keeps_it(
    tmp_path: Path, clients: Callable[..., TestClient], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level("WARNING", logger="app.signing"):
        first = clients()
        ids = [k["key_id"] for k in first.get("/.well-known/canasta-keys").json()["keys"]]
    made = tmp_path / "signing-key.json"
    assert stat.S_IMODE(made.stat().st_mode) == 0o600
    assert any(str(made) in r.getMessage() for r in caplog.records)
    first.__exit__(None, None, None)
    again = clients()
    assert [k["key_id"] for k in again.get("/.well-known/canasta-keys").json()["keys"]] == ids


def test_a_postgresql_server_without_a_key_refuses_to_start(tmp_path: Path) -> None:
    url = "postgresql://nobody@127.0.0.1:1/nothing"  # never reached: the key is checked first
    settings = Settings(database_url=url, data_dir=tmp_path)
    with (
        pytest.raises(SigningKeyError, match="CANASTA_SIGNING_KEY_FILE"),
        TestClient(create_app(settings)),
    ):
        pass
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANASTA_")}
    env.update(DATABASE_URL=url, CANASTA_DATA_DIR=str(tmp_path))
    server = subprocess.run(
        [sys.executable, "-m", "uvicorn", "app.main:app", "--port", str(free_port())],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert server.returncode != 0
    assert "needs a signing key" in server.stderr and "canasta keys new" in server.stderr
    # canasta bots records deals too: refused the same way; the audit needs no private key
    bots = run_cli("bots", env={"DATABASE_URL": url})
    assert bots.returncode == 2 and "needs a signing key" in bots.stderr


def test_a_malformed_key_file_is_refused_with_its_path(tmp_path: Path) -> None:
    bad = tmp_path / "key.json"
    bad.write_text(json.dumps({"algorithm": "Ed25519", "private_key": "not base64!"}))
    settings = Settings(data_dir=tmp_path, signing_key_file=bad)
    with pytest.raises(SigningKeyError, match=str(bad)), TestClient(create_app(settings)):
        pass


def test_a_retired_key_written_or_edited_in_place_is_published_by_the_running_server(
    tmp_path: Path, clients: Callable[..., TestClient]
) -> None:
    """A running server follows its retired keys' files, not only the folder: a file written
    by a shell's redirect (created empty, then filled: `canasta keys public OLD > DIR/old.json`,
    the rotation by hand) and a file edited in place later are both taken up without a
    restart. Before 4 December 2026 only the folder was looked at, which a file's content
    changes not: a server that looked while the file was empty never published the key, and
    an edit was never seen."""
    keys, retired = tmp_path / "signing-key.json", tmp_path / "retired"
    old = tmp_path / "old-key.json"
    for path in (keys, old):
        made = run_cli("keys", "new", "--out", str(path), env={})
        assert made.returncode == 0, made.stderr
    public = run_cli("keys", "public", str(old), env={})
    assert public.returncode == 0, public.stderr
    old_id = json.loads(public.stdout)["key_id"]
    retired.mkdir()
    http = clients(signing_key_file=keys, retired_keys_dir=retired)

    def published() -> dict[str, Any]:
        answer = http.get("/.well-known/canasta-keys")
        assert answer.status_code == 200
        return {k["key_id"]: k for k in answer.json()["keys"]}

    assert old_id not in published()
    with open(retired / "old.json", "w") as redirect:  # the shell opens it: empty
        assert old_id not in published()  # read empty: the keys as they were
        redirect.write(public.stdout)
    assert published()[old_id]["current"] is False

    # an operator corrects its `until` in an editor, a while later (past RACY_NS)
    time.sleep(RACY_NS / 1e9 + 0.2)
    document = json.loads(public.stdout)
    document["until"] = "2026-12-01T00:00:00+00:00"
    with open(retired / "old.json", "r+") as edited:
        edited.write(json.dumps(document))
        edited.truncate()
    assert published()[old_id]["until"] == "2026-12-01T00:00:00+00:00"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files away takes root")
def test_a_rotation_run_as_root_leaves_the_new_files_to_the_key_files_owner(
    tmp_path: Path,
) -> None:
    """docs/deployment.md: the key file belongs to the servers' user, and `canasta keys rotate`
    runs as root; the new key file (0600) and the retired key go to that user, or the running
    servers could not read them and would sign on with the old key."""
    keys, retired = tmp_path / "signing-key.json", tmp_path / "retired-keys"
    assert run_cli("keys", "new", "--out", str(keys), env={}).returncode == 0
    nobody = (65534, 65534)
    os.chown(keys, *nobody)
    rotated = run_cli("keys", "rotate", env={"CANASTA_SIGNING_KEY_FILE": str(keys)})
    assert rotated.returncode == 0, rotated.stderr
    (kept,) = retired.glob("*.json")
    for path in (keys, retired, kept):
        assert (path.stat().st_uid, path.stat().st_gid) == nobody, path
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600


@pytest.mark.skipif(os.geteuid() != 0, reason="another user's key file takes root to make")
@pytest.mark.parametrize("closed", ["file", "directory"])
def test_a_key_file_the_process_may_not_read_says_to_give_it_to_its_user(closed: str) -> None:
    """A key file made as root and not handed to the servers' user (or in a directory they
    may not enter): the refusal says so in one line (it said to make a new one, which `canasta
    keys new` refuses as the file exists; in a closed directory, a traceback)."""
    folder = Path(tempfile.mkdtemp(prefix="canasta-keys-", dir="/tmp"))
    try:
        keys = folder / "signing-key.json"
        assert run_cli("keys", "new", "--out", str(keys), env={}).returncode == 0
        os.chmod(folder, 0o700 if closed == "directory" else 0o755)
        listed = subprocess.run(
            [
                *("runuser", "-u", "nobody", "--", "env", f"CANASTA_SIGNING_KEY_FILE={keys}"),
                *(str(Path(sys.executable).parent / "canasta"), "keys", "list"),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        shutil.rmtree(folder)
    assert listed.returncode == 2, listed.stderr
    assert "Traceback" not in listed.stderr
    assert "Permission denied (give it to the user this process runs as" in listed.stderr
    assert "canasta keys new" not in listed.stderr


def test_an_audit_of_the_whole_store_without_the_key_says_the_signatures_went_unchecked(
    tmp_path: Path, clients: Callable[..., TestClient]
) -> None:
    """docs/operations.md, "Backup and restore": a restored store audited without the key
    file (forgotten on the command line) passes, but says that the signatures were not
    checked and how to check them, rather than a bare "all ok"."""
    http = clients(auditors=[AUDITOR])
    game = new_game(http, seed=7)
    assert audit_of(http, game, game.deal_id)[0]["signature"] == "valid"
    kept = tmp_path / "signing-key.json"
    assert kept.exists()
    kept.rename(tmp_path.parent / f"{tmp_path.name}-key.json")  # the audit finds no key
    cli = run_cli("audit", "--all", env={"CANASTA_DATA_DIR": str(tmp_path)})
    assert cli.returncode == 0, cli.stderr
    assert "1 tables, 1 deals audited: all ok" in cli.stdout
    assert "signatures of 1 deals unchecked" in cli.stdout
    assert "CANASTA_SIGNING_KEY_FILE" in cli.stdout


def test_a_deal_in_play_is_not_recorded_with_the_key_or_without_it(
    tmp_path: Path, clients: Callable[..., TestClient]
) -> None:
    """A deal still in play has no signature yet: ``canasta audit --all`` without the key
    counted it among the "signatures of N deals unchecked", as if a signature were there to
    check. It reads ``not_recorded``, with the key and without it; only the finished deal's
    signature goes unchecked without the key."""
    http = clients(auditors=[AUDITOR])
    finished = new_game(http, seed=7)
    in_play = open_table(http, ["eve", "fay"])
    key = tmp_path / "signing-key.json"
    with_key = {"CANASTA_DATA_DIR": str(tmp_path), "CANASTA_SIGNING_KEY_FILE": str(key)}
    kept = tmp_path.parent / f"{tmp_path.name}-key.json"
    key.rename(kept)  # the audit finds no key (and, not signing, makes none)
    without_key = {"CANASTA_DATA_DIR": str(tmp_path)}
    with_key["CANASTA_SIGNING_KEY_FILE"] = str(kept)

    verdicts = {}
    for name, env in (("with", with_key), ("without", without_key)):
        cli = run_cli("audit", "--all", "--json", env=env)
        assert cli.returncode == 0, cli.stderr
        tables = {t["table"]: t for t in json.loads(cli.stdout)["tables"]}
        verdicts[name] = [
            tables[game.table]["deals"][0]["signature"] for game in (finished, in_play)
        ]
        one = run_cli("audit", in_play.deal_id, env=env)
        assert one.returncode == 0, one.stderr
        assert "signature not_recorded" in one.stdout and "not over yet" in one.stdout
    assert verdicts == {"with": ["valid", "not_recorded"], "without": ["unchecked", "not_recorded"]}

    cli = run_cli("audit", "--all", env=without_key)
    assert cli.returncode == 0, cli.stderr
    assert "2 tables, 2 deals audited: all ok" in cli.stdout
    assert "signatures of 1 deals unchecked" in cli.stdout
    cli = run_cli("audit", "--all", env=with_key)
    assert cli.returncode == 0, cli.stderr
    assert "2 tables, 2 deals audited: all ok" in cli.stdout
    assert "unchecked" not in cli.stdout
