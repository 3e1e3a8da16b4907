"""Where the signing key comes from (``app.signing``, docs/operations.md "Signing keys"): the
key file's content in ``CANASTA_SIGNING_KEY``, a key file, the embedded store's own, an
ephemeral one in memory; and the refusals, each naming what is wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.settings import Settings
from app.signing import SigningKeyError, load_keyring, new_key_document, write_new_file

POSTGRES = "postgresql://nobody@127.0.0.1:1/nothing"  # never connected to


def test_the_key_may_come_from_the_environment_as_the_key_files_content(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    document = new_key_document()
    monkeypatch.setenv("CANASTA_SIGNING_KEY", json.dumps(document))
    keyring = load_keyring(Settings(database_url=POSTGRES, data_dir=tmp_path))
    assert keyring.current is not None and keyring.current.key_id == document["key_id"]
    assert keyring.current.since == document["since"]
    key_id, signature = keyring.sign(b"message")
    assert keyring.verify(key_id, b"message", signature) is True
    assert keyring.verify(key_id, b"other message", signature) is False
    assert keyring.verify("ed25519:0000000000000000", b"message", signature) is None
    assert not (tmp_path / "signing-key.json").exists()


def test_memory_gets_an_ephemeral_key_and_an_audit_only_process_makes_none(
    tmp_path: Path,
) -> None:
    memory = Settings(database_url="memory", data_dir=tmp_path)
    first, second = load_keyring(memory), load_keyring(memory)
    assert first.current and second.current and first.current.key_id != second.current.key_id
    # canasta audit on an embedded store without a key: nothing made, nothing to check with
    sqlite = Settings(database_url=None, data_dir=tmp_path)
    assert len(load_keyring(sqlite, signing=False)) == 0
    assert not (tmp_path / "signing-key.json").exists()
    # an audit-only process on PostgreSQL is not refused either
    assert load_keyring(Settings(database_url=POSTGRES), signing=False).current is None


def test_retired_keys_are_read_from_their_directory(tmp_path: Path) -> None:
    old, current = new_key_document(), new_key_document()
    retired = tmp_path / "retired-keys"
    public = {k: v for k, v in old.items() if k != "private_key"}
    write_new_file(retired / "old.json", {**public, "until": "2026-12-01T00:00:00+00:00"})
    write_new_file(tmp_path / "key.json", current)
    keyring = load_keyring(Settings(database_url=POSTGRES, signing_key_file=tmp_path / "key.json"))
    published = keyring.published()
    assert [k["key_id"] for k in published] == [current["key_id"], old["key_id"]]
    assert [k["current"] for k in published] == [True, False]
    assert published[1]["until"] == "2026-12-01T00:00:00+00:00"


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"algorithm": "RSA"}, "not Ed25519"),
        ({"private_key": "c2hvcnQ="}, "not 32"),
        ({"key_id": "ed25519:0000000000000000"}, "key_id does not match"),
    ],
)
def test_a_bad_key_file_is_refused_with_its_path_and_what_is_wrong(
    tmp_path: Path, change: dict[str, str], complaint: str
) -> None:
    path = tmp_path / "key.json"
    write_new_file(path, {**new_key_document(), **change})
    with pytest.raises(SigningKeyError, match=complaint) as raised:
        load_keyring(Settings(database_url=POSTGRES, signing_key_file=path))
    assert str(path) in str(raised.value)


def test_a_missing_key_file_says_how_to_make_one(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.json"
    with pytest.raises(SigningKeyError, match="canasta keys new --out"):
        load_keyring(Settings(database_url=POSTGRES, signing_key_file=path))


def test_a_key_file_that_turns_bad_while_the_process_runs_leaves_its_keys_as_they_were(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A process follows its key file (a rotation needs no restart: tests/e2e/
    test_key_rotation.py), but a file an operator spoils by hand meanwhile (a public key
    file copied over it, say) does not take its signing key away: it signs on with the key
    it had, and the log says why; a good key written there is taken up at the next use."""
    path = tmp_path / "key.json"
    first = new_key_document()
    write_new_file(path, first)
    keyring = load_keyring(Settings(database_url=POSTGRES, signing_key_file=path))
    public = {k: v for k, v in new_key_document().items() if k != "private_key"}
    path.write_text(json.dumps(public))
    with caplog.at_level("WARNING", logger="app.signing"):
        assert keyring.sign(b"message")[0] == first["key_id"]
    assert any("kept the keys read before" in r.getMessage() for r in caplog.records)
    second = new_key_document()
    path.unlink()
    write_new_file(path, second)
    assert keyring.sign(b"message")[0] == second["key_id"]
    assert [k["key_id"] for k in keyring.published()] == [second["key_id"]]
