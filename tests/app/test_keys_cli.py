"""``canasta keys``: its answers as an operator meets them (docs/operations.md, "Signing
keys"): printed to a reader that went away, and a rotation by ``--key-file``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main


@pytest.mark.parametrize("unbuffered", [True, False])
@pytest.mark.parametrize("command", [["keys", "public", "KEY"], ["keys", "list"]])
def test_a_short_answer_to_a_reader_gone_is_no_error(
    tmp_path: Path, command: list[str], unbuffered: bool
) -> None:
    """``canasta keys public FILE | head``, the reader gone before it printed: it said
    "cannot read FILE: [Errno 32] Broken pipe", exit 2, as if the key file were bad (with
    PYTHONUNBUFFERED, as under systemd); without, every short answer (``keys list``) ended
    with Python's "Exception ignored ... BrokenPipeError", exit 120."""
    key = tmp_path / "key.json"
    assert main(["keys", "new", "--out", str(key)]) == 0
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["CANASTA_SIGNING_KEY_FILE"] = str(key)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    read, write = os.pipe()
    os.close(read)  # every write to the pipe fails: the reader has gone
    try:
        done = subprocess.run(
            [sys.executable, "-m", "app.cli", *[str(key) if w == "KEY" else w for w in command]],
            cwd=Path(__file__).resolve().parents[2],
            env=env,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


@pytest.mark.parametrize("store", ["postgresql", "sqlite"])
def test_keys_rotate_key_file_keeps_the_old_key_beside_that_file(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    store: str,
) -> None:
    """``canasta keys rotate --key-file FILE``: the old public half goes to retired-keys/
    beside FILE, as --help says. It was refused on PostgreSQL ("set ... CANASTA_RETIRED_KEYS_DIR
    (or --retired-dir)"), and on SQLite went beside the data folder's key, where no server
    using FILE looks: the old signatures would have read unknown_key."""
    for name in ("DATABASE_URL", "CANASTA_SIGNING_KEY_FILE", "CANASTA_RETIRED_KEYS_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CANASTA_DATA_DIR", str(tmp_path / "data"))
    if store == "postgresql":
        monkeypatch.setenv("CANASTA_DATABASE_URL", "postgresql://canasta@127.0.0.1:1/canasta")
    else:
        monkeypatch.delenv("CANASTA_DATABASE_URL", raising=False)
    key = tmp_path / "etc" / "signing-key.json"
    assert main(["keys", "new", "--out", str(key)]) == 0
    old = json.loads(key.read_text())["key_id"]
    assert main(["keys", "rotate", "--key-file", str(key)]) == 0, capsys.readouterr().err
    (kept,) = (tmp_path / "etc" / "retired-keys").glob("*.json")
    assert json.loads(kept.read_text())["key_id"] == old != json.loads(key.read_text())["key_id"]
    assert not (tmp_path / "data").exists()


def test_keys_rotate_of_a_key_given_in_the_environment_says_to_rotate_it_by_hand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("DATABASE_URL", "CANASTA_SIGNING_KEY_FILE", "CANASTA_RETIRED_KEYS_DIR"):
        monkeypatch.delenv(name, raising=False)
    key = tmp_path / "signing-key.json"
    assert main(["keys", "new", "--out", str(key)]) == 0
    monkeypatch.setenv("CANASTA_DATABASE_URL", "postgresql://canasta@127.0.0.1:1/canasta")
    monkeypatch.setenv("CANASTA_SIGNING_KEY", key.read_text())
    capsys.readouterr()
    assert main(["keys", "rotate"]) == 2
    err = capsys.readouterr().err
    assert "the key is given in CANASTA_SIGNING_KEY: rotate it by hand" in err, err


@pytest.mark.parametrize(
    ("variable", "url", "said"),
    [
        ("CANASTA_DATABASE_URL", "mysql://user:secret@db.example/canasta", "scheme 'mysql'"),
        ("DATABASE_URL", "mysql://user:secret@db.example/canasta", "scheme 'mysql'"),
        ("DATABASE_URL", "postgresql://user:secret@db.example", "has no database name"),
    ],
)
def test_keys_list_refuses_a_database_url_of_the_wrong_kind(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    url: str,
    said: str,
) -> None:
    """``canasta keys list`` with a ``mysql://`` URL printed ``[]`` and "no signing key is
    configured", exit 0, as if the URL were right and the key missing; the other commands
    refuse such a URL, exit 2: so does it, and prints no key list."""
    for name in ("DATABASE_URL", "CANASTA_DATABASE_URL", "CANASTA_SIGNING_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, url)
    assert main(["keys", "list"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("cannot open the store (") and said in err
    assert "secret" not in err  # the URL's password
    assert "no signing key" not in err
