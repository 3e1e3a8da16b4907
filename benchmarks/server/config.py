"""Paths, targets and the log line of the server benchmark."""

from __future__ import annotations

import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
RESULTS = REPO_ROOT / ".bench" / "server-latest.json"
SERVER_LOG = REPO_ROOT / ".bench" / "uvicorn.log"
PG_BINDIRS = ("/usr/lib/postgresql/15/bin",)

TARGET_COMMANDS_PER_S = 1000.0
TARGET_P99_MS = 50.0
TARGET_REPLAY_MS = 50.0
#: The open loop's p99 may exceed the store's own p99 at the same rate (pgbench --rate
#: through the same lock and durable commits) by at most this much.
TARGET_OVER_STORE_MS = 25.0

#: The replayed game is the first of at least this many deals (or the longest of four).
MIN_DEALS = 6


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)
