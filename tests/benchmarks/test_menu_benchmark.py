"""``python -m benchmarks.menu`` (the move menu's latency, run by ``make bench``) runs and
prints a figure per entry; its HTTP half is what tests/e2e/test_move_menu.py plays."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_menu_benchmark_prints_the_domain_figures_of_every_entry() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.menu", "--deals", "1", "--no-http"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    lines = done.stdout.splitlines()
    for entry in ("classic", "extra_six", "modern_american", "ponytail"):
        line = next(line for line in lines if line.strip().startswith(entry))
        assert "p50" in line and "p99" in line and "menus" in line, line
