"""``canasta keys``: the server's signing keys (docs/operations.md, "Signing keys").

- ``canasta keys new --out FILE``: a new key file (0600), never over an existing one;
- ``canasta keys public FILE``: the public half of a key file, as a retired-key file;
- ``canasta keys rotate``: the configured key file's public half goes into the retired-keys
  directory (with ``until``, now), and a new key takes its place in the key file;
- ``canasta keys list``: the keys the configured server publishes (the well-known route's).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def _new(args: argparse.Namespace) -> int:
    from app.signing import new_key_document, write_new_file

    out = Path(args.out)
    document = new_key_document()
    if not write_new_file(out, document):
        print(f"{out} exists: a key file is never overwritten", file=sys.stderr)
        return 2
    print(f"new signing key {document['key_id']} in {out} (permissions 0600)")
    return 0


def _public_of(path: Path) -> dict[str, Any]:
    from app.signing import read_public

    return read_public(path.read_text(), str(path)).document()


def _public(args: argparse.Namespace) -> int:
    from app.signing import SigningKeyError

    try:
        public = _public_of(Path(args.file))
    except (OSError, SigningKeyError) as exc:
        print(f"cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    # Printed outside: a reader that went away (``| head``) is no fault of the file's
    # (``main`` takes its BrokenPipeError for the end it is).
    print(json.dumps(public, indent=2))
    return 0


def _replace(
    path: Path, document: dict[str, Any], owner: tuple[int, int], *, mode: int = 0o600
) -> None:
    """Write ``document`` to ``path`` atomically (a new file renamed over it), owned by
    ``owner`` (uid, gid) when this process may give files away (root)."""
    from app.signing import write_new_file

    tmp = path.with_name(path.name + ".new")
    tmp.unlink(missing_ok=True)
    write_new_file(tmp, document, mode=mode)
    _give(tmp, owner)
    tmp.replace(path)


def _give(path: Path, owner: tuple[int, int]) -> None:
    """Run as root (docs/deployment.md), hand ``path`` to the key file's owner, the servers'
    user: they read the new files at once, with no chown to remember."""
    if os.geteuid() == 0 and (path.stat().st_uid, path.stat().st_gid) != owner:
        os.chown(path, *owner)


def _rotate(args: argparse.Namespace) -> int:
    from app.settings import Settings
    from app.signing import RETIRED_DIRNAME, SigningKeyError, key_file, new_key_document

    settings = Settings()
    path = Path(args.key_file) if args.key_file else key_file(settings)
    if path is None:
        given = settings.signing_key is not None  # the key itself, not a file
        print(
            "no key file to rotate: "
            + (
                "the key is given in CANASTA_SIGNING_KEY: rotate it by hand and restart "
                'every process (docs/operations.md, "Signing keys"), or give --key-file'
                if given
                else "set CANASTA_SIGNING_KEY_FILE, or give --key-file"
            ),
            file=sys.stderr,
        )
        return 2
    # beside the key file rotated (--key-file's, not the environment's), as --help says
    retired = Path(args.retired_dir or settings.retired_keys_dir or path.parent / RETIRED_DIRNAME)
    try:
        old = _public_of(path)
    except (OSError, SigningKeyError) as exc:
        print(f"cannot read the key file {path}: {exc}", file=sys.stderr)
        return 2
    old["until"] = datetime.now(UTC).isoformat(timespec="seconds")
    owner = (path.stat().st_uid, path.stat().st_gid)  # the new files are the servers' too
    made = not retired.exists()
    retired.mkdir(parents=True, exist_ok=True)
    if made:
        _give(retired, owner)
    kept = retired / f"{str(old['key_id']).replace(':', '-')}.json"
    # each file written whole under another name, then renamed into place: a running process
    # never reads half of one
    _replace(kept, old, owner, mode=0o644)
    document = new_key_document()
    _replace(path, document, owner)  # the key file holds the old key or the new, never neither
    print(f"retired {old['key_id']}: its public key is in {kept}")
    print(f"new signing key {document['key_id']} in {path}")
    print(
        "the servers and `canasta bots` processes that read this key file sign with it, and "
        "publish it, from their next use of a key, without a restart (a process given its key "
        "in CANASTA_SIGNING_KEY keeps the old one until it is restarted)"
    )
    return 0


def _list(args: argparse.Namespace) -> int:
    from app.cli_store import wrong_url
    from app.settings import Settings
    from app.signing import SigningKeyError, load_keyring

    settings = Settings()
    if wrong_url(settings):  # the keys of no server: say so, not "no signing key"
        return 2
    try:
        keyring = load_keyring(settings, signing=False)
    except SigningKeyError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    published = keyring.published()
    print(json.dumps(published, indent=2))
    if not published:  # not an error: a new SQLite store is like this until its first start
        print(
            "no signing key is configured: a PostgreSQL server refuses to start without one "
            '(CANASTA_SIGNING_KEY_FILE: docs/operations.md, "Signing keys"); an SQLite '
            "server makes its own in CANASTA_DATA_DIR on its first start",
            file=sys.stderr,
        )
    return 0


def add_parser(sub: Any) -> None:
    """``canasta keys ...`` on the command line's subparsers."""
    keys = sub.add_parser(
        "keys",
        help="the server's signing keys: new, public, rotate, list (docs/operations.md)",
        description="Make and rotate the Ed25519 key that signs each table's record of a "
        "finished deal. The key lives outside the database (CANASTA_SIGNING_KEY_FILE); "
        "retired keys' public halves (CANASTA_RETIRED_KEYS_DIR) keep old signatures "
        "verifiable.",
    )
    # the metavar names the commands in the error when none is given (else "keys_command")
    commands = keys.add_subparsers(
        dest="keys_command", required=True, metavar="{new,public,rotate,list}"
    )
    p = commands.add_parser(
        "new",
        help="write a new key file (0600); never overwrites",
        description="Write a new Ed25519 signing key to FILE (permissions 0600), making its "
        "folder if needed; an existing file is never overwritten (exit 2). Point "
        "CANASTA_SIGNING_KEY_FILE at it, and keep a copy apart from the database backups.",
    )
    p.add_argument("--out", required=True, metavar="FILE", help="the new key file")
    p.set_defaults(func=_new)
    p = commands.add_parser(
        "public",
        help="print a key file's public half (JSON)",
        description="Print the public half of a key file as JSON (its key id, the public key "
        "and since when), never the private key: what a retired key leaves in "
        "CANASTA_RETIRED_KEYS_DIR so that its signatures still verify.",
    )
    p.add_argument("file", metavar="FILE", help="a key file, or a retired key's public file")
    p.set_defaults(func=_public)
    p = commands.add_parser(
        "rotate",
        help="retire the configured key (its public half kept) and write a new one in its place",
        description="Retire the configured signing key, its public half kept in the retired "
        "keys' folder, and write a new key in the key file's place (replaced atomically). "
        "Running servers and `canasta bots` processes that read the key file sign with the new "
        "key from their next signature, without a restart.",
    )
    p.add_argument(
        "--key-file",
        metavar="FILE",
        help="default: CANASTA_SIGNING_KEY_FILE, or on SQLite signing-key.json in CANASTA_DATA_DIR",
    )
    p.add_argument(
        "--retired-dir",
        metavar="DIR",
        help="default: CANASTA_RETIRED_KEYS_DIR, or retired-keys/ beside the key file",
    )
    p.set_defaults(func=_rotate)
    p = commands.add_parser(
        "list",
        help="print the keys the configured server publishes",
        description="Print, as JSON, the keys a server configured by this environment "
        "publishes at /.well-known/canasta-keys: its current key first, then the retired "
        "ones whose public files it finds.",
    )
    p.set_defaults(func=_list)
