"""A signing key for test servers on PostgreSQL, which refuse to start without one
(``app.signing``): one key file per directory, shared by the servers a test starts there."""

from __future__ import annotations

from pathlib import Path

from app.settings import MEMORY
from app.signing import new_key_document, write_new_file

KEY_FILENAME = "signing-key.json"


def key_file(directory: Path) -> Path:
    """``directory``'s key file, made on first use."""
    path = directory / KEY_FILENAME
    if not path.exists():
        write_new_file(path, new_key_document())
    return path


def needs_key(database_url: str | None) -> bool:
    """Whether a server on this store needs a key given (a PostgreSQL URL)."""
    return database_url is not None and database_url != MEMORY
