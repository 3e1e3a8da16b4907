"""The ``canasta`` command line: rule scenarios, a demo game, and operator tools."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from app import scenario


def _scenario(args: argparse.Namespace) -> int:
    status = 0
    for name in args.files:
        path = Path(name)
        try:
            result = scenario.run_file(path)
        except scenario.ScenarioError as exc:
            print(f"MALFORMED {path}: {exc}", file=sys.stderr)
            return 2
        if result.ok:
            print(f"ok      {path}  {result.name}")
        else:
            status = 1
            print(f"FAILED  {path}  {result.name}")
            for failure in result.failures:
                print(f"        {failure}")
        if args.json:
            print(json.dumps({"file": str(path), "ok": result.ok, **result.final}, indent=2))
    return status


def _demo(args: argparse.Namespace) -> int:
    from app.demo import play_demo

    return play_demo(
        entry=args.entry,
        players=args.players,
        always_frozen=args.always_frozen,
        seed=args.seed,
        data_dir=args.data_dir,
        max_deals=args.max_deals,
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="canasta", description="canasta-ledger tools")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("scenario", help="run rule scenario files (see SCENARIOS.md)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true", help="also print final views and scores")
    p.set_defaults(func=_scenario)

    p = sub.add_parser("demo", help="play one random legal game and print its logs")
    p.add_argument("--entry", default="classic")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--always-frozen", action="store_true")
    p.add_argument("--seed", type=int, default=None, help="seed of the random players")
    p.add_argument("--data-dir", type=Path, default=None, help="keep the store here")
    p.add_argument("--max-deals", type=int, default=100)
    p.set_defaults(func=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
