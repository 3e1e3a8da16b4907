"""The server's signing keys (Ed25519): loading, generating, signing, verifying, publishing.

The key is kept outside the database (docs/operations.md, "Signing keys"): whoever can write
the database can rewrite a deal and recompute its hash chain, but cannot sign the table's
record of it (``domain.seal``) without the key.

Where the key comes from (``load_keyring``), in this order:

- ``CANASTA_SIGNING_KEY``: the content of a key file;
- ``CANASTA_SIGNING_KEY_FILE``: a key file (``canasta keys new``);
- otherwise, by store: the embedded SQLite store uses ``signing-key.json`` next to its file
  (made on first run, permissions 0600, logged); the in-memory store an ephemeral key of its
  own (it belongs to one process); a PostgreSQL URL (production) refuses to start.

A key file is JSON: ``{"algorithm": "Ed25519", "key_id", "private_key", "public_key",
"since"}``, the keys as base64 of their 32 raw bytes. A retired key's public file is the same
without ``private_key``, with ``until``; every ``*.json`` of the retired-keys directory
(``CANASTA_RETIRED_KEYS_DIR``, by default ``retired-keys`` next to the key file) is loaded,
so signatures made with a retired key still verify and the key is still published.

A running process follows its key file and retired-keys directory (``Keyring``, ``KeySource``):
at each signature, list of the published keys and check of a signature it looks whether
either changed (a ``stat`` of each) and reads them again if so. ``canasta keys rotate``
therefore takes effect in every server worker and ``canasta bots`` process at its next use of
a key, without a restart. A key given in ``CANASTA_SIGNING_KEY`` is the process's for its
life: changing it takes a restart.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from app.settings import MEMORY, Settings
from domain.seal import ALGORITHM

logger = logging.getLogger(__name__)

#: The key file of the embedded SQLite store, in its ``data_dir``.
DEFAULT_KEY_FILENAME = "signing-key.json"
#: The retired keys' directory, next to the key file unless configured.
RETIRED_DIRNAME = "retired-keys"


class SigningKeyError(RuntimeError):
    """The signing key is missing, unreadable or malformed: the server does not start."""


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _raw_public(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id_of(public: Ed25519PublicKey) -> str:
    """A key's id: derived from its public key (the first 16 hex digits of its SHA-256)."""
    return "ed25519:" + hashlib.sha256(_raw_public(public)).hexdigest()[:16]


@dataclass(frozen=True)
class PublicKey:
    key_id: str
    public: Ed25519PublicKey
    since: str | None = None  # when it began signing (ISO 8601), if known
    until: str | None = None  # when it was retired, if it was

    def published(self, *, current: bool) -> dict[str, Any]:
        pem = self.public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode()
        return {
            "key_id": self.key_id,
            "algorithm": ALGORITHM,
            "public_key": _b64(_raw_public(self.public)),
            "public_key_pem": pem,
            "since": self.since,
            "until": self.until,
            "current": current,
        }

    def document(self) -> dict[str, Any]:
        """The public key file of this key (for the retired-keys directory)."""
        return {
            "algorithm": ALGORITHM,
            "key_id": self.key_id,
            "public_key": _b64(_raw_public(self.public)),
            "since": self.since,
            "until": self.until,
        }


@dataclass(frozen=True)
class _Keys:
    """The keys as read once: the signing key (if any) and every public key that verifies."""

    private: Ed25519PrivateKey | None
    current: PublicKey | None
    keys: dict[str, PublicKey]


def _keys(current: Ed25519PrivateKey | None, since: str | None, retired: list[PublicKey]) -> _Keys:
    keys: dict[str, PublicKey] = {}
    public_key = None
    if current is not None:
        public = current.public_key()
        public_key = PublicKey(key_id_of(public), public, since)
        keys[public_key.key_id] = public_key
    for key in retired:
        keys.setdefault(key.key_id, key)
    return _Keys(current, public_key, keys)


#: What says that a file changed: its inode (a replaced file is a new one), its size and its
#: times (None: it is not there).
Stamp = tuple[int, int, int, int, int] | None
#: The retired keys' folder: its own stamp (a file added, removed or renamed) and each
#: ``*.json`` file's (a file rewritten in place changes its size or its times, not the
#: folder's).
FolderStamp = tuple[Stamp, tuple[tuple[str, Stamp], ...]] | None
#: A stamp whose newest time is this recent is not trusted to tell every later change: a
#: file rewritten in place with the same size within the file system's timestamp granularity
#: (a clock tick of a few ms on Linux, up to 2 s elsewhere) keeps its stamp. The files are
#: then read again at the next use too, until the stamp is older than this ("racy git").
RACY_NS = 2_000_000_000


def _stamp(path: Path | None) -> Stamp:
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _folder_stamp(path: Path | None) -> FolderStamp:
    if path is None:
        return None
    try:
        names = sorted(name for name in os.listdir(path) if name.endswith(".json"))
    except OSError:
        return None
    return _stamp(path), tuple((name, _stamp(path / name)) for name in names)


def _newest(stamps: tuple[Stamp, FolderStamp]) -> int:
    """The newest modification or change time (ns) among the stamps; 0 if none."""
    key, folder = stamps
    every = [key] + ([folder[0], *(stamp for _, stamp in folder[1])] if folder else [])
    return max((max(st[3], st[4]) for st in every if st is not None), default=0)


class KeySource:
    """Where a process's keys are read from, read again when they change: the key file (or
    the key given in ``CANASTA_SIGNING_KEY``, which cannot change while the process runs) and
    the retired keys' folder. ``stamp()`` costs a ``stat`` of the key file, the folder and
    each of its files (a few microseconds each)."""

    def __init__(self, key_file: Path | None, key_text: str | None, retired: Path | None) -> None:
        self.key_file = key_file
        self.key_text = key_text
        self.retired = retired

    def stamp(self) -> tuple[Stamp, FolderStamp]:
        return _stamp(self.key_file), _folder_stamp(self.retired)

    def read(self) -> _Keys:
        try:
            retired = read_retired(self.retired) if self.retired is not None else []
        except OSError as exc:
            raise SigningKeyError(
                f"cannot read the retired keys' directory {self.retired}: "
                f"{exc.strerror or exc} (give it to the user this process runs as)"
            ) from exc
        if self.key_text is not None:
            return _keys(*read_private(self.key_text, "CANASTA_SIGNING_KEY"), retired)
        if self.key_file is not None:
            return _keys(*read_private(_read_file(self.key_file), str(self.key_file)), retired)
        return _keys(None, None, retired)


def _trusted(stamp: tuple[Stamp, FolderStamp]) -> tuple[Stamp, FolderStamp] | None:
    """``stamp``, or None (read again at the next use) while it is too recent to tell a
    later rewrite of the same size (``RACY_NS``)."""
    return None if time.time_ns() - _newest(stamp) < RACY_NS else stamp


class Keyring:
    """The current key (which signs, if any) and every public key that verifies.

    A keyring with a ``KeySource`` follows its files: before each signature, each list of the
    published keys and each check of a signature it looks at the key file and the retired
    keys' folder (a ``stat`` of each) and reads them again if either changed, so that a
    ``canasta keys rotate`` takes effect in every running process at its next use, each
    process seeing the files for itself (nothing is told from one process to another). A key
    file that cannot be read meanwhile (or is not a key) leaves the keys as they were, with a
    warning in the log."""

    def __init__(
        self,
        current: Ed25519PrivateKey | None,
        since: str | None,
        retired: list[PublicKey],
        *,
        source: KeySource | None = None,
    ) -> None:
        self._state = _keys(current, since, retired)
        self._source = source
        self._stamp = _trusted(source.stamp()) if source is not None else None
        self._lock = threading.Lock()

    @classmethod
    def following(cls, source: KeySource) -> Keyring:
        """The keys of ``source`` as they are now, followed from then on."""
        keyring = cls(None, None, [], source=source)
        stamp = source.stamp()  # before reading: a change meanwhile is seen next time
        keyring._state = source.read()  # raises SigningKeyError: the process does not start
        keyring._stamp = _trusted(stamp)
        return keyring

    def _fresh(self) -> _Keys:
        source = self._source
        if source is None:
            return self._state
        stamp = source.stamp()
        if stamp == self._stamp:
            return self._state
        with self._lock:
            if stamp != self._stamp:
                self._stamp = _trusted(stamp)
                try:
                    state = source.read()
                except (OSError, SigningKeyError) as exc:
                    logger.warning("signing keys: kept the keys read before: %s", exc)
                else:
                    if state.current != self._state.current:
                        logger.warning(
                            "signing keys: now signing with %s",
                            state.current.key_id if state.current else None,
                        )
                    self._state = state
            return self._state

    @property
    def current(self) -> PublicKey | None:
        return self._fresh().current

    @property
    def keys(self) -> dict[str, PublicKey]:
        return self._fresh().keys

    def __len__(self) -> int:
        """The keys that verify (an empty keyring is false: it can check nothing)."""
        return len(self._fresh().keys)

    @classmethod
    def ephemeral(cls) -> Keyring:
        return cls(Ed25519PrivateKey.generate(), _now(), [])

    def sign(self, message: bytes) -> tuple[str, str]:
        state = self._fresh()
        if state.private is None or state.current is None:
            raise SigningKeyError("this process has no signing key")
        return state.current.key_id, _b64(state.private.sign(message))

    def verify(self, key_id: str, message: bytes, signature: str) -> bool | None:
        key = self._fresh().keys.get(key_id)
        if key is None:
            return None
        try:
            key.public.verify(base64.b64decode(signature, validate=True), message)
        except (InvalidSignature, binascii.Error, ValueError, TypeError):
            return False
        return True

    def published(self) -> list[dict[str, Any]]:
        """Every key, the current one first, then the others by id."""
        state = self._fresh()
        current = state.current.key_id if state.current else None
        ordered = sorted(state.keys.values(), key=lambda k: (k.key_id != current, k.key_id))
        return [k.published(current=k.key_id == current) for k in ordered]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --- key files ----------------------------------------------------------------------------


def new_key_document() -> dict[str, Any]:
    """A new key, as the content of a key file."""
    private = Ed25519PrivateKey.generate()
    raw = private.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    public = private.public_key()
    return {
        "algorithm": ALGORITHM,
        "key_id": key_id_of(public),
        "private_key": _b64(raw),
        "public_key": _b64(_raw_public(public)),
        "since": _now(),
    }


def write_new_file(path: Path, document: dict[str, Any], *, mode: int = 0o600) -> bool:
    """Write ``document`` as JSON to ``path`` with ``mode``, unless the file exists (never
    overwritten; two processes racing to create it keep one). True if written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".key-")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w") as out:
            json.dump(document, out, indent=2)
            out.write("\n")
        try:
            os.link(tmp, path)  # atomic, and fails if the file exists
        except FileExistsError:
            return False
        return True
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _decode_key(value: object, what: str, where: str) -> bytes:
    try:
        raw = base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise SigningKeyError(f"{where}: {what} is not base64") from exc
    if len(raw) != 32:
        raise SigningKeyError(f"{where}: {what} has {len(raw)} bytes, not 32")
    return raw


def _document(text: str, where: str) -> dict[str, Any]:
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise SigningKeyError(f"{where}: not a key file (JSON expected): {exc}") from exc
    if not isinstance(document, dict):
        raise SigningKeyError(f"{where}: not a key file (a JSON object expected)")
    if document.get("algorithm") != ALGORITHM:
        raise SigningKeyError(f"{where}: algorithm {document.get('algorithm')!r}, not Ed25519")
    return document


def read_private(text: str, where: str) -> tuple[Ed25519PrivateKey, str | None]:
    """The key of a key file's content, and since when it signs."""
    document = _document(text, where)
    if "private_key" not in document:
        raise SigningKeyError(f"{where}: a public key file, not a signing key")
    private = Ed25519PrivateKey.from_private_bytes(
        _decode_key(document["private_key"], "private_key", where)
    )
    if "key_id" in document and document["key_id"] != key_id_of(private.public_key()):
        raise SigningKeyError(f"{where}: key_id does not match the key")
    since = document.get("since")
    return private, str(since) if since else None


def read_public(text: str, where: str) -> PublicKey:
    """The public key of a key file's content (a retired key's, or a signing key's)."""
    document = _document(text, where)
    public = Ed25519PublicKey.from_public_bytes(
        _decode_key(document.get("public_key"), "public_key", where)
    )
    key_id = key_id_of(public)
    if document.get("key_id", key_id) != key_id:
        raise SigningKeyError(f"{where}: key_id does not match the key")
    since, until = document.get("since"), document.get("until")
    return PublicKey(key_id, public, str(since) if since else None, str(until) if until else None)


def read_retired(directory: Path) -> list[PublicKey]:
    if not directory.is_dir():
        return []
    return [read_public(p.read_text(), str(p)) for p in sorted(directory.glob("*.json"))]


def _read_file(path: Path) -> str:
    try:
        text = path.read_text()
    except OSError as exc:
        advice = (
            "give it to the user this process runs as: chown, chmod 600"
            if isinstance(exc, PermissionError)
            else f"make one with `canasta keys new --out {path}`"
        )
        raise SigningKeyError(
            f"cannot read the signing key file {path}: {exc.strerror or exc} ({advice})"
        ) from exc
    if path.stat().st_mode & 0o077:
        logger.warning("the signing key file %s can be read by others: chmod 600 it", path)
    return text


# --- the process's keyring ----------------------------------------------------------------


def key_file(settings: Settings) -> Path | None:
    """The key file the settings name, or the embedded store's default one."""
    if settings.signing_key_file is not None:
        return settings.signing_key_file
    if settings.database_url is None:
        return settings.data_dir / DEFAULT_KEY_FILENAME
    return None


def retired_dir(settings: Settings) -> Path | None:
    if settings.retired_keys_dir is not None:
        return settings.retired_keys_dir
    path = key_file(settings)
    return path.parent / RETIRED_DIRNAME if path is not None else None


def load_keyring(settings: Settings, *, signing: bool = True) -> Keyring:
    """The process's keyring, as the settings configure it (module docstring).

    ``signing``: the process writes deals' records and must sign them (a server, ``canasta
    bots``): without a key it refuses (``SigningKeyError``), except on the embedded SQLite
    store, which makes one, and the in-memory store, which uses an ephemeral one. Otherwise
    (``canasta audit``) the keys found are only used to verify, and none is made."""
    directory = retired_dir(settings)
    if settings.signing_key is not None:  # fixed for the process's life: a restart changes it
        return Keyring.following(
            KeySource(None, settings.signing_key.get_secret_value(), directory)
        )
    path = key_file(settings)
    if settings.database_url == MEMORY and path is None:
        return (
            Keyring.ephemeral() if signing else Keyring.following(KeySource(None, None, directory))
        )
    if path is None:
        if not signing:
            return Keyring.following(KeySource(None, None, directory))
        raise SigningKeyError(
            "a PostgreSQL store (production settings) needs a signing key, kept outside the "
            "database: set CANASTA_SIGNING_KEY_FILE to a key file made by `canasta keys new "
            "--out FILE` (or CANASTA_SIGNING_KEY to its content); see docs/operations.md, "
            '"Signing keys"'
        )
    if settings.signing_key_file is None and not path.exists():
        if not signing:
            return Keyring.following(KeySource(None, None, directory))
        if write_new_file(path, new_key_document()):
            logger.warning(
                "generated a new signing key in %s (permissions 0600): back it up with the "
                "store; the deals' records are signed with it (docs/operations.md)",
                path,
            )
    return Keyring.following(KeySource(path, None, directory))
