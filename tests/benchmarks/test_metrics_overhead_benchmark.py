"""``python -m benchmarks.metrics_overhead`` (what the metrics cost a command), in a short run:
it plays its commands with the metrics on and off and prints both figures (it broke
silently once, when the rate limits came and it did not turn them off)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_short_run_compares_the_metrics_on_and_off() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.metrics_overhead", "--commands", "40", "--block", "10"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "metrics on :" in done.stdout and "metrics off:" in done.stdout
    assert "difference:" in done.stdout
