"""The server's CPU per accepted command, in one process, without sockets (not a test).

``python -m benchmarks.command_path [--seconds 10] [--games 16] [--rate R] [--profile N]``

The server benchmark (``benchmarks.server``) measures the CPU per command of real uvicorn
workers beside PostgreSQL and the load generator on the same cores, where every figure moves
with the machine. This one isolates the server's own work on the command path, to see where
it goes and to compare two versions of the code side by side:

- the production app (``app.main.create_app``, its middlewares, the command lane, the group
  committer, the signing key, metrics) is called as an ASGI application by the same game
  drivers as the server benchmark's (``benchmarks.server.driver``: 4-player classic games,
  random legal moves, ``seq`` and ``expect``, every answer checked against a mirror), in a
  closed loop on one event loop, on a fresh PostgreSQL database (``--db-name``);
- the read models and the bots are off (``canasta project`` runs them elsewhere in the
  server benchmark); HTTP parsing is not included (uvicorn's httptools and its protocol
  cost about 0.1 ms a request more on a real socket);
- CPU per command = the process's CPU over the window (every thread: the event loop, the
  group committer, the threadpool, the connection pool), less the drivers' own move choice,
  mirror and answer checks (timed per thread), divided by the commands accepted.

``--rate R`` offers R commands/s in all instead (open loop, as ``benchmarks.server``'s
second run): the CPU per command is higher at a moderate rate than flat out, where the
event loop's wake-ups and the committer's transactions each serve several commands.
``--profile N`` prints the N functions with the most cumulative CPU of the event loop's
thread and of the group committer's (cProfile on each thread's own CPU clock: a wall clock
would count the waits for the GIL and for PostgreSQL; the profiler's own cost slows the run
several times over, so read the shares, not the times or the rate). The CPU per command
includes the requests between deals (``GET /tables/{id}``, ``POST /tables/{id}/deals``: a
new deal records its shuffle and every card dealt) spread over the deal's commands. Run it twice on two commits to compare; the machine's speed
moves, so compare the ratio to the ``core speed`` line of the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import pstats
import threading
import time
from typing import Any

from app.main import create_app
from app.settings import Settings
from app.signing import new_key_document
from benchmarks.asgi import AsgiClient, Lifespan
from benchmarks.server.database import fresh_database
from benchmarks.server.driver import Driver
from benchmarks.server.mirror import Reader
from benchmarks.server.probes import SpeedProbe

#: The target for the server's CPU per accepted command (``make bench``), in ms.
TARGET_MS = 0.5


class TimedReader(Reader):
    """The mirror's store reads, with the CPU they take (the drivers', not the server's)."""

    cpu = 0.0

    def deal(self, deal_id: Any) -> Any:
        started = time.thread_time()
        try:
            return super().deal(deal_id)
        finally:
            TimedReader.cpu += time.thread_time() - started


def thread_cpu() -> dict[str, float]:
    """CPU seconds of each live thread of this process, by name."""
    seconds: dict[str, float] = {}
    for thread in threading.enumerate():
        if thread.ident is None:
            continue
        try:
            clock = time.pthread_getcpuclockid(thread.ident)
            seconds[thread.name] = time.clock_gettime(clock)
        except (OSError, ProcessLookupError):
            continue
    return seconds


def profile_committer(app: Any) -> cProfile.Profile | None:
    """A profiler that records every transaction of the app's group committer (its thread)."""
    committer = app.state.canasta.group_commit
    if committer is None:
        return None
    profile = cProfile.Profile(time.thread_time)
    commit = committer._commit

    def profiled(batch: Any) -> None:
        profile.enable()
        try:
            commit(batch)
        finally:
            profile.disable()

    committer._commit = profiled
    return profile


async def measure(args: argparse.Namespace, url: str) -> dict[str, Any]:
    os.environ.setdefault("CANASTA_SIGNING_KEY", json.dumps(new_key_document()))
    settings = Settings(
        database_url=url,
        read_models="off",
        run_bots=False,
        rate_limits=False,
        log_level="warning",
        postgres_pool_size=10,
    )
    app = create_app(settings)
    reader = TimedReader(url, 4)
    speed = SpeedProbe()
    drivers = [Driver(i, "", reader, args.seed + i, views=False) for i in range(args.games)]
    client = AsgiClient(app)
    async with Lifespan(app):
        for d in drivers:
            d.client = client  # type: ignore[assignment]
            await d.register()
            await d.new_game()
        # Closed loop (``--rate 0``): each game's next command as soon as its answer is in.
        # Open loop: one command every ``games / rate`` seconds per game, the games spread
        # evenly over the interval (as ``benchmarks.server``'s open loop).
        interval = args.games / args.rate if args.rate else None

        def first_at(index: int, start: float) -> float:
            return float(start + (interval or 0.0) * index / args.games)

        warm_from = time.perf_counter()
        warm_until = warm_from + args.warmup
        await asyncio.gather(
            *(d.run(warm_until, interval, first_at(i, warm_from)) for i, d in enumerate(drivers))
        )
        accepted_before = sum(d.accepted for d in drivers)
        mirror_before = sum(cpu for d in drivers for _, cpu in d.mirror_cpu)
        reader_before = TimedReader.cpu
        threads_before = thread_cpu()
        profile = cProfile.Profile(time.thread_time) if args.profile else None
        committer = profile_committer(app) if args.profile else None
        started_cpu = time.process_time()
        started = time.perf_counter()
        speed.start(started + args.seconds)
        if profile:
            profile.enable()
        await asyncio.gather(
            *(
                d.run(started + args.seconds, interval, first_at(i, started))
                for i, d in enumerate(drivers)
            )
        )
        if profile:
            profile.disable()
        wall = time.perf_counter() - started
        process_cpu = time.process_time() - started_cpu
        threads_after = thread_cpu()
        accepted = sum(d.accepted for d in drivers) - accepted_before
        driver_cpu = (
            sum(cpu for d in drivers for _, cpu in d.mirror_cpu) - mirror_before
            + TimedReader.cpu - reader_before
        )  # fmt: skip
        errors = sum(sum(d.errors.values()) for d in drivers) + sum(d.mismatches for d in drivers)
    reader.close()
    by_thread = {
        name: round(threads_after[name] - threads_before.get(name, 0.0), 3)
        for name in threads_after
    }
    result = {
        "seconds": round(wall, 2),
        "games": args.games,
        "offered_per_s": args.rate or "closed loop",
        "accepted": accepted,
        "commands_per_s": round(accepted / wall, 1),
        "errors": errors,
        "process_cpu_s": round(process_cpu, 3),
        "driver_cpu_s": round(driver_cpu, 3),
        "server_cpu_ms_per_command": round(1000 * (process_cpu - driver_cpu) / max(1, accepted), 3),
        "core_speed_us": speed.summary(started, started + wall).get("median_us"),
        "cpu_s_by_thread": dict(sorted(by_thread.items(), key=lambda kv: -kv[1])[:8]),
    }
    if profile and args.profile_out:
        profile.dump_stats(f"{args.profile_out}-loop.prof")
        if committer is not None:
            committer.dump_stats(f"{args.profile_out}-committer.prof")
    if profile:
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out)
        stats.sort_stats("cumulative").print_stats(args.profile)
        stats.sort_stats("tottime").print_stats(args.profile)
        if committer is not None:
            out.write("\n--- the group committer's thread ---\n")
            stats = pstats.Stats(committer, stream=out)
            stats.sort_stats("cumulative").print_stats(args.profile)
        result["profile"] = out.getvalue()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.command_path", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--games", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--rate", type=float, default=0.0,
        help="commands/s offered in all, open loop (0: closed loop, as fast as answered)",
    )  # fmt: skip
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument(
        "--profile-out", default="", metavar="PREFIX",
        help="with --profile: also write PREFIX-loop.prof and PREFIX-committer.prof (pstats)",
    )  # fmt: skip
    parser.add_argument("--db-name", default="canasta_command_path")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--target-ms", type=float, default=TARGET_MS,
        help="exit 1 when the server's CPU per command is above this (issue's target)",
    )  # fmt: skip
    args = parser.parse_args()
    if not args.database_url:
        raise SystemExit("set DATABASE_URL (scripts/pg.sh url) or --database-url")
    url = fresh_database(args.database_url, args.db_name)
    result = asyncio.run(measure(args, url))
    profile = result.pop("profile", None)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:28} {value}")
        met = result["server_cpu_ms_per_command"] <= args.target_ms
        verdict = "met" if met else "MISSED"
        print(f"target: server CPU per command <= {args.target_ms} ms: {verdict}")
    if profile:
        print(profile)
    if result["errors"] or result["server_cpu_ms_per_command"] > args.target_ms:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
