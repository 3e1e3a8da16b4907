"""``make bench``'s server half, without a server: the package imports, its command line
parses, and its report renders from a report recorded by a real run
(``tests/fixtures/bench/server-report.json``: ``make bench SERVER_BENCH_ARGS="--seconds 5"``)."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

import benchmarks.server
from benchmarks.server.cli import build_parser
from benchmarks.server.experiments import EXPERIMENTS
from benchmarks.server.report import print_report

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "tests" / "fixtures" / "bench" / "server-report.json"


def test_every_module_of_the_package_imports() -> None:
    names = [m.name for m in pkgutil.iter_modules(benchmarks.server.__path__)]
    assert {"cli", "driver", "load", "report", "server_process"} <= set(names)
    for name in names:
        if name != "__main__":
            import_module(f"benchmarks.server.{name}")


def test_the_command_line_keeps_its_defaults_and_options() -> None:
    args = build_parser().parse_args([])
    assert (args.seconds, args.warmup, args.games, args.workers) == (20.0, 10.0, 64, 2)
    assert (args.read_models, args.rate, args.experiment) == ("process", 1000.0, [])
    assert args.json == ROOT / ".bench" / "server-latest.json"
    args = build_parser().parse_args(
        ["--seconds", "5", "--read-models", "off", "--experiment", "stall-log", "--skip-pgbench"]
    )
    assert (args.seconds, args.read_models, args.experiment) == (5.0, "off", ["stall-log"])
    assert args.skip_pgbench


@pytest.mark.parametrize("argv", [["--patch", "no-read-models"], ["--experiment", "nope"]])
def test_an_unknown_option_or_experiment_is_refused(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(argv)
    assert exit_.value.code == 2


def test_the_report_renders_from_a_recorded_run(capsys: pytest.CaptureFixture[str]) -> None:
    report = json.loads(RECORDED.read_text())
    print_report(report, RECORDED)
    out = capsys.readouterr().out
    assert "canasta-ledger server benchmark" in out
    assert "closed loop" in out and "open loop, 1000 commands/s offered" in out
    assert "raw inserts into the same PostgreSQL (pgbench" in out
    assert "replay a finished 5000-point classic game" in out
    assert out.rstrip().endswith(f"JSON: {RECORDED}")


def test_the_report_names_each_experiment(capsys: pytest.CaptureFixture[str]) -> None:
    report = json.loads(RECORDED.read_text())
    report["config"]["experiments"] = sorted(EXPERIMENTS)
    report["config"]["read_models"] = "off"
    print_report(report, RECORDED)
    out = capsys.readouterr().out
    assert "read models: not run" in out
    for name in EXPERIMENTS:
        assert f"experiment --experiment {name}: " in out


def test_python_m_benchmarks_server_help_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.server", "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m benchmarks.server")
