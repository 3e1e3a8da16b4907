"""``python -m benchmarks.arena`` (the bots' strength, run by ``make bench``) prints a report
and the target's verdict per entry."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_arena_benchmark_reports_every_entry() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.arena",
            "--games",
            "1",
            "--jobs",
            "1",
            "--entries",
            "classic,ponytail",
            "--only",  # strong's rows search every move: minutes even for one game
            "basic",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 1), done.stderr
    for entry in ("classic", "ponytail"):
        assert f"arena: {entry} 4 players, 1 games" in done.stdout
    assert done.stdout.count("target: basic wins >= 95% of the games") == 2
    assert "unfinished games: 0" in done.stdout
    assert "strong" not in done.stdout
