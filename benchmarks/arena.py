"""``python -m benchmarks.arena``: the bots' strength (``make bench`` runs it too).

Whole four-player games of classic, modern_american and ponytail (``app.arena``, the engine
of ``canasta arena``), over every core: ``basic`` against ``random``, then ``strong`` against
``basic``; per entry the arena's report (wins, win rate with its Wilson 95% interval, score
margin, CPU per move, unfinished games), and against the targets the issue set: ``basic``
wins at least 95% of the games against ``random``; ``strong``'s 95% interval against
``basic`` lies above 55%. Exit 1 if a game did not end or a target is missed.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from app.arena import Setup, report, run, stderr_progress, summary

#: The entries measured and their default number of games, for about two minutes on two
#: cores (a classic game is some five deals; a modern_american game against ``random`` some
#: 14, a ponytail one four long deals); the strong rows add about fifteen minutes (docs/bots.md).
RUNS = {"classic": 100, "modern_american": 40, "ponytail": 40}
TARGET = 0.95
#: ``strong`` against ``basic``, with a fixed count of sampled worlds a move (8, as in the
#: runs of docs/bots.md) so the figures repeat: 200 classic games, enough for the interval
#: to mean something (some ±7 points), and smaller samples of the two entries whose games
#: cost the most, where ``strong`` wins more often (some ±11 and ±18 points; times on two
#: cores in docs/bots.md).
STRONG_RUNS = {"classic": 200, "modern_american": 60, "ponytail": 16}
STRONG_ROLLOUTS = 8
STRONG_TARGET = 0.55


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=None, help="per entry (default: RUNS)")
    parser.add_argument("--strong-games", type=int, default=None, help="default: STRONG_RUNS")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=None, help="default: one per core")
    parser.add_argument("--entries", default=",".join(RUNS), help="comma-separated")
    parser.add_argument("--only", choices=("basic", "strong"), default=None)
    args = parser.parse_args(argv)
    status = 0
    entries = args.entries.split(",")
    if args.only != "strong":
        print("canasta-ledger bots: basic against random, four players, whole games")
        for entry in entries:
            setup = Setup(entry, 4, ("basic", "random"), args.games or RUNS[entry], args.seed)
            s = _measure(setup, args.jobs)
            met = s["win_rate"]["basic"] >= TARGET and s["unfinished"] == 0
            print(f"  target: basic wins >= {TARGET:.0%} of the games: {_said(met)}")
            status |= 0 if met else 1
    if args.only != "basic":
        print(f"canasta-ledger bots: strong ({STRONG_ROLLOUTS} worlds a move) against basic")
        for entry in entries:
            games = args.strong_games or STRONG_RUNS[entry]
            setup = Setup(entry, 4, ("strong", "basic"), games, args.seed, None, STRONG_ROLLOUTS)
            s = _measure(setup, args.jobs)
            met = s["ci95"]["strong"][0] > STRONG_TARGET and s["unfinished"] == 0
            print(f"  target: strong's 95% interval above {STRONG_TARGET:.0%}: {_said(met)}")
            status |= 0 if met else 1
    return status


def _measure(setup: Setup, jobs: int | None) -> dict[str, Any]:
    started = time.monotonic()
    results = run(setup, jobs, stderr_progress(30))
    s = summary(setup, results, time.monotonic() - started)
    print(report(s), flush=True)
    return s


def _said(met: bool) -> str:
    return "met" if met else "MISSED"


if __name__ == "__main__":
    sys.exit(main())
