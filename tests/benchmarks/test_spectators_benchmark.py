"""``python -m benchmarks.spectators`` (``make bench``: live streams at scale), in a small run
against the test PostgreSQL: every spectator receives the games' events while they are
played, and the report holds each level's figures and the targets' verdicts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.postgres
def test_a_small_run_delivers_every_game_to_its_spectators(postgres_url: str) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    env = {**os.environ, "DATABASE_URL": postgres_url}
    argv = ["--games", "2", "--rate", "20", "--spectators", "0,10", "--seconds", "3"]
    argv += ["--warmup", "1", "--db-name", f"canasta_bench_streams_{worker}"]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.spectators", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: a target missed on a busy machine
    report = json.loads((ROOT / ".bench" / "spectators-latest.json").read_text())
    quiet, watched = report["levels"]
    assert quiet["spectators"] == 0 and watched["spectators"] == 10
    assert watched["connected"] == 10 and watched["errors"] == 0
    assert watched["delivery_ms"]["n"] > 0 and quiet["commands_ms"]["n"] > 0
    assert len(report["targets"]) == 3
    assert "target: 10 spectators: delivery p99" in done.stdout
