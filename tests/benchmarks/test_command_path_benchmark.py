"""``python -m benchmarks.command_path`` (the server's CPU per command, in process), in a
short run against the test PostgreSQL: games are played through the production app, every
answer matches the mirror, and the report names the CPU per command and where it went."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.postgres
def test_a_short_run_plays_games_and_reports_the_cpu_per_command(postgres_url: str) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    env = {**os.environ, "DATABASE_URL": postgres_url}
    argv = ["--games", "2", "--seconds", "1.5", "--warmup", "0.5", "--json", "--profile", "5"]
    argv += ["--db-name", f"canasta_bench_path_{worker}"]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.command_path", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: the 0.5 ms target missed
    report = json.loads(done.stdout.splitlines()[0])
    assert report["accepted"] > 0 and report["errors"] == 0
    assert 0 < report["server_cpu_ms_per_command"] < report["process_cpu_s"] * 1000
    assert "group-commit" in report["cpu_s_by_thread"]
    assert "Ordered by: cumulative time" in done.stdout  # --profile printed the table
