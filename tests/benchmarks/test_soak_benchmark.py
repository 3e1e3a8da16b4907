"""``python -m benchmarks.soak`` (``make bench``: what grows while the server runs), in a small
run against the test PostgreSQL: games are played to their end, and every server process
(the two uvicorn workers, ``canasta project``, ``canasta bots``) and the database are sampled,
their in-memory sizes included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.postgres
@pytest.mark.slow  # a minute of games
def test_a_small_run_samples_every_server_process(postgres_url: str, tmp_path: Path) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    env = {**os.environ, "DATABASE_URL": postgres_url}
    argv = ["--minutes", "0.6", "--warmup", "6", "--sample-seconds", "3", "--games", "3"]
    argv += ["--rate", "30", "--practice", "1", "--spectators", "2", "--out", str(tmp_path)]
    argv += ["--db-name", f"canasta_bench_soak_{worker}"]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.soak", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: a resource grew on a busy machine
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["tally"]["games"] > 0 and report["tally"]["streams"] > 0
    figures = report["figures"]
    for figure in (
        "web-1.rss_kib",
        "web-2.fds",
        "web-1.app.aggregate_cache",
        "web-1.app.tokens",
        "bots.bots.tables",
        "project.rss_kib",
        "pg.connections",
        "pg.rows.idempotency_keys",
    ):
        assert figure in figures, sorted(figures)
    assert "per 1,000 games" in done.stdout and "target: " in done.stdout
