"""``python -m benchmarks.arena``: the bots' strength (``make bench`` runs it too).

``basic`` against ``random`` in whole four-player games of classic, modern_american and
ponytail (``app.arena``, the engine of ``canasta arena``), over every core: per entry the
arena's report (wins, win rate with its Wilson 95% interval, score margin, CPU per move,
unfinished games), and against the target the issue set: ``basic`` wins at least 95% of the
games (the interval says how sure that is). Exit 1 if a game did not end or a target is
missed.
"""

from __future__ import annotations

import argparse
import sys
import time

from app.arena import Setup, report, run, stderr_progress, summary

#: The entries measured and their default number of games, for about four minutes on two
#: cores (a classic game is some five deals; a modern_american game against ``random`` some
#: 25, a ponytail one four long deals).
RUNS = {"classic": 200, "modern_american": 60, "ponytail": 80}
TARGET = 0.95


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=None, help="per entry (default: RUNS)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=None, help="default: one per core")
    parser.add_argument("--entries", default=",".join(RUNS), help="comma-separated")
    args = parser.parse_args(argv)
    print("canasta-ledger bots: basic against random, four players, whole games")
    status = 0
    for entry in args.entries.split(","):
        setup = Setup(entry, 4, ("basic", "random"), args.games or RUNS[entry], args.seed)
        started = time.monotonic()
        results = run(setup, args.jobs, stderr_progress(30))
        s = summary(setup, results, time.monotonic() - started)
        print(report(s))
        rate = s["win_rate"]["basic"]
        met = rate >= TARGET and s["unfinished"] == 0
        print(f"  target: basic wins >= {TARGET:.0%} of the games: {'met' if met else 'MISSED'}")
        status |= 0 if met else 1
    return status


if __name__ == "__main__":
    sys.exit(main())
