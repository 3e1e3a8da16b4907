"""``canasta arena`` end to end, as a user runs it (docs/bots.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from app.arena import wilson
from app.cli import main


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "arena", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_json_summary_of_a_tiny_run() -> None:
    done = arena("--entry", "classic", "--players", "4", "--bots", "basic,random",
                 "--games", "4", "--seed", "5", "--json", "--jobs", "2")  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    for key in ("games", "wins", "win_rate", "ci95", "margin", "cpu_ms_per_move", "unfinished"):
        assert key in summary, key
    assert summary["games"] == 4 and summary["unfinished"] == 0
    assert set(summary["wins"]) == {"basic", "random"}
    assert sum(summary["wins"].values()) <= 4
    for level in ("basic", "random"):
        low, high = summary["ci95"][level]
        assert 0 <= low <= summary["win_rate"][level] <= high <= 1
        assert isinstance(summary["margin"][level], float)
        cpu = summary["cpu_ms_per_move"][level]
        assert 0 < cpu["mean"] <= cpu["p99"] and cpu["moves"] > 0
    assert "4/4 games" in done.stderr  # progress goes to stderr


def test_same_seed_same_figures_whatever_the_jobs() -> None:
    one = json.loads(arena("--games", "2", "--seed", "9", "--json", "--jobs", "1").stdout)
    two = json.loads(arena("--games", "2", "--seed", "9", "--json", "--jobs", "2").stdout)
    assert one["wins"] == two["wins"] and one["margin"] == two["margin"]


def test_text_report() -> None:
    done = arena("--games", "2", "--jobs", "1")
    assert done.returncode == 0, done.stderr
    assert "basic" in done.stdout and "95% interval" in done.stdout
    assert "unfinished games: 0" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--bots", "basic,wizard"), "no bot level 'wizard'"),
        (("--bots", "basic"), "two or more different bot levels"),
        (("--entry", "poker"), "unknown entry 'poker'"),
        (("--players", "3", "--entry", "ponytail"), "not 3"),
        (("--games", "0"), "at least 1"),
        (("--jobs", "0"), "--jobs must be at least 1"),
        (("--games", "many"), "invalid int value"),
        (("--bots", "strong,basic", "--strong-rollouts", "0"), "at least one rollout"),
        (("--bots", "strong,basic", "--strong-ms", "-5"), "a budget >= 0 ms"),
    ],
)
def test_bad_arguments_are_refused_clearly(
    args: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same command line, parsed in this process (no game is played)."""
    try:
        status = main(["arena", *args])
    except SystemExit as exc:  # argparse's own refusals
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert status == 2
    assert message in err and not out


def test_wilson_interval() -> None:
    low, high = wilson(16, 20)
    assert round(low, 3) == 0.584 and round(high, 3) == 0.919
    assert wilson(0, 10)[0] == 0 and round(wilson(10, 10)[1], 9) == 1
    assert round(wilson(0, 10)[1], 3) == 0.278  # the interval is not empty at 0 wins
