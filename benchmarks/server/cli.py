"""``make bench`` (second half): the game server over HTTP on PostgreSQL (not a test).

Everything runs on this machine: PostgreSQL, ``uvicorn app.main:app --workers N`` and the
load generator. The figures, with the issue's targets:

1. Throughput and latency of ``POST /deals/{id}/commands``: 64 concurrent games, each
   a task of the load generator's one event loop (uvloop) with its own keep-alive
   connection, each sending the acting seat's next legal command with ``seq`` and
   ``expect`` (targets: 1,000 commands/s accepted, with p99 under 50 ms). Two runs:
   closed loop (new games; each game sends its next command as soon as it has the
   answer: the most the server accepts per second; its latency is mostly queueing, about
   games / throughput by Little's law), then open loop (the same games go on where they
   are, so games end and start all along the window; ``--rate``, default 1,000 commands/s
   offered in all, each game on its own schedule; latency counted from each command's due
   time, so a server that falls behind cannot hide it: no coordinated omission). The
   closed loop is judged on throughput only: flat out, its latency is the queue of 64
   commands in flight, about 64 / throughput (a p99 under 50 ms flat out would take over
   2,000 commands/s). The open loop judges the two targets together: at 1,000/s,
   every command offered accepted, p99 under 50 ms.
2. The same PostgreSQL's raw single-row insert throughput (pgbench, one INSERT per
   transaction, 1 client and the server's connection count), and the ratio of the two;
   also the same with the ``LOCK TABLE ... IN EXCLUSIVE MODE`` the library takes per write.
3. Replay of a finished 5000-point classic game to an arbitrary step, from a cold
   application (``get_deal(deal_id, version=k)``) and over HTTP (``GET /deals/{id}/replay``)
   (target < 50 ms).

How the load generator chooses moves. ``domain.legal.legal_command`` needs a ``DealState``,
which no client may see (other hands, the stock). The load generator therefore keeps a local
mirror of each deal: when a deal starts it reads the deal once from the store (reads only,
with its own cold ``CanastaApp``), and then applies each accepted command to its mirror with
the same engine's rules (``Mirror``: ``rules.decide`` and ``DealState.apply``). Every answer
is checked against the mirror: the server's events, redacted for the sender, must equal the
mirror's new events redacted the same way, and ``step`` must match. The mirror's cost (move
choice, mirror update and check, the one read per deal) is timed apart and reported, and the
CPU time of every process (uvicorn, PostgreSQL, load generator, everything else) is read
from /proc over the window, so the figures show where the time goes.

What else the report shows, to read a run: the Python build that runs every process (its
path, and whether libpython is shared or linked in: it moves every CPU figure, see
``scripts/python.sh``); the p99 of each twentieth of the window (a tail from a few stalls or
from all along); the load generator's own stalls (its event loop
more than 10 ms late: its garbage collector is off while games are driven, as one full
collection stopped every game at once and then released a burst); and the speed of the
machine's cores during the window (a fixed piece of Python work, timed every 0.5 s: on
this shared virtual machine the same work takes from 0.8 to 1.8 ms from one minute to the
next, and every figure moves with it); and the disk's flushes during the window (an 8 KiB
``fdatasync`` every 50 ms: every commit waits for one, and on this machine one now and then
takes 50 to 900 ms, stalling every command at once; with each stall, how much dirty page
cache the kernel wrote back meanwhile; and, when there were stalls, the p99 of the commands
that none of them overlapped, as a diagnostic of what was the server's: the target is
judged on every command); and how many commands fell due while their game was still setting
up its next deal or game (a few dozen per window: their latency includes that wait, and the
p99 counted from the set-up's end shows how little it weighs). ``--experiment stall-log``
logs, per worker, when a thread got the GIL late and when its event loop ran late.
"postgres" is every process of the cluster: on a cluster shared with running tests it
includes their backends too.

Run: ``DATABASE_URL=$(scripts/pg.sh url) python -m benchmarks.server [--seconds 20]``.
It works in its own database (``--db-name``, default ``canasta_bench``) of that cluster,
dropped and re-created and migrated with alembic, so it never touches the tests' database
(but it does use up to ~60 of the cluster's connections). The report is printed and written
to ``.bench/server-latest.json``. ``--help`` lists the settings (workers, pool, threadpool,
client) and the experiments (``--nodelay-fix``, ``--experiment``, ``--read-models off``,
``--no-sync-commit``, ``--profile``), which change nothing in the server's code: the
benchmark runs the server's own app, configured through its environment (``CANASTA_*``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import psycopg

from app.settings import Settings
from benchmarks.interpreter import interpreter
from benchmarks.server.config import (
    RESULTS,
    SERVER_LOG,
    TARGET_COMMANDS_PER_S,
    TARGET_P99_MS,
    TARGET_REPLAY_MS,
    log,
)
from benchmarks.server.cpu import CpuWindow, children_of
from benchmarks.server.database import fresh_database, postmaster_pid, with_dbname
from benchmarks.server.driver import Driver
from benchmarks.server.experiments import EXPERIMENTS
from benchmarks.server.load import run_load, wait_for_read_models
from benchmarks.server.pgbench import find_pgbench, pgbench_at_rate, run_pgbench
from benchmarks.server.profiler import Profiler, find_py_spy
from benchmarks.server.replay import idle_round_trips, run_replay
from benchmarks.server.report import print_report
from benchmarks.server.server_process import Server

# --- main ----------------------------------------------------------------------------------


def uvicorn_extras() -> dict[str, bool]:
    """Whether uvicorn will pick the C-accelerated event loop and HTTP parser."""
    import importlib.util

    return {m: importlib.util.find_spec(m) is not None for m in ("uvloop", "httptools")}


def database_url(arg: str | None) -> str:
    url = arg or os.environ.get("CANASTA_DATABASE_URL") or os.environ.get("DATABASE_URL")
    if not url or not url.startswith(("postgresql://", "postgres://")):
        raise SystemExit(
            "benchmarks.server needs PostgreSQL: DATABASE_URL=$(scripts/pg.sh url) "
            "(after scripts/pg.sh start), or --database-url"
        )
    return url


@contextlib.contextmanager
def running(server: Server) -> Iterator[Server]:
    server.start()
    try:
        yield server
    finally:
        server.stop()


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m benchmarks.server``."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.server",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="measured load window")
    parser.add_argument(
        "--warmup", type=float, default=10.0,
        help="load before the window; new games start one after another over its first "
        "half, so that in the window they are at every point of a deal (a deal lasts about "
        "5 s at 1,000 commands/s); the open loop goes on with the closed loop's games, by "
        "then at every point of a game",
    )  # fmt: skip
    parser.add_argument("--games", type=int, default=64, help="concurrent games")
    parser.add_argument(
        "--read-models", choices=("process", "workers", "off"), default="process",
        help="where the read-model projections run: 'process' (as README's production set-up: "
        "the workers run with CANASTA_READ_MODELS=off and one `canasta project` process runs "
        "them; its CPU counts as the server's), 'workers' (CANASTA_READ_MODELS=auto: the "
        "uvicorn workers elect one of them, which runs them in a thread) or 'off' (experiment: "
        "nothing runs them, the workers with CANASTA_READ_MODELS=off: what running them costs)",
    )  # fmt: skip
    parser.add_argument("--workers", type=int, default=2, help="uvicorn worker processes")
    parser.add_argument(
        "--pool-size", type=int, default=Settings().postgres_pool_size,
        help="CANASTA_POSTGRES_POOL_SIZE of each worker",
    )  # fmt: skip
    parser.add_argument(
        "--threads", type=int, default=None,
        help="threadpool size of each worker (CANASTA_THREADPOOL_SIZE; default: the server's, 8)",
    )  # fmt: skip
    parser.add_argument(
        "--rate", type=float, default=TARGET_COMMANDS_PER_S,
        help="second run, open loop: commands/s offered in all, latency measured from each "
        "command's due time (0: skip it)",
    )  # fmt: skip
    parser.add_argument(
        "--experiment", action="append", choices=sorted(EXPERIMENTS), default=[],
        help="experiment in the server processes only (none changes the server's code): "
        + "; ".join(f"{k}: {v}" for k, v in EXPERIMENTS.items()),
    )  # fmt: skip
    parser.add_argument(
        "--nodelay-fix", action="store_true",
        help="experiment: start uvicorn through benchmarks.uvicorn_nodelay (TCP_NODELAY with "
        "--workers > 1, see there)",
    )  # fmt: skip
    parser.add_argument(
        "--no-sync-commit", action="store_true",
        help="experiment: synchronous_commit=off for the benchmark database (no fsync wait)",
    )  # fmt: skip
    parser.add_argument(
        "--views", action="store_true",
        help="before each command, GET /deals/{id} as the acting player and take expect from it",
    )  # fmt: skip
    parser.add_argument(
        "--profile", action="store_true",
        help="sample the uvicorn workers and the read models' process with py-spy during the "
        "window (pip install py-spy): the workers' samples by layer of a command",
    )  # fmt: skip
    parser.add_argument(
        "--load-generator-nice", type=int, default=0,
        help="the load generator's threads run at this nice level (0: the server's, "
        "PostgreSQL's); higher: it takes the cores only when they leave them idle",
    )  # fmt: skip
    parser.add_argument("--py-spy", default=None, help="path of the py-spy binary")
    parser.add_argument("--pgbench-seconds", type=float, default=5.0)
    parser.add_argument("--replay-samples", type=int, default=100)
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument("--skip-closed", action="store_true", help="only the open-loop run")
    parser.add_argument("--skip-pgbench", action="store_true")
    parser.add_argument("--skip-replay", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database-url", default=None, help="default: $DATABASE_URL")
    parser.add_argument("--db-name", default="canasta_bench", help="scratch database (dropped)")
    parser.add_argument("--json", type=Path, default=RESULTS, help="where to write the report")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    base_url = database_url(args.database_url)
    log(f"fresh database {args.db_name} in {with_dbname(base_url, '')}, migrated to head")
    url = fresh_database(base_url, args.db_name)
    report: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "config": {
            "cores": os.cpu_count(),
            "workers": args.workers,
            "pool_size": args.pool_size,
            "threads": args.threads,
            "nodelay_fix": args.nodelay_fix,
            "experiments": args.experiment,
            "read_models": args.read_models,
            "synchronous_commit": "off" if args.no_sync_commit else "on",
            "uvicorn_extras": uvicorn_extras(),
            "games": args.games,
            "seconds": args.seconds,
            "database": with_dbname(base_url, args.db_name),
            "python": sys.version.split()[0],
            "interpreter": interpreter(),
            "argv": list(argv if argv is not None else sys.argv[1:]),
        },
        "targets": {
            "commands_per_s": TARGET_COMMANDS_PER_S,
            "p99_ms": TARGET_P99_MS,
            "replay_ms": TARGET_REPLAY_MS,
        },
    }

    def count_rows() -> int:
        """The events stored so far: the last notification id (an index lookup; a
        ``count(*)`` scanned the whole table, in parallel, at the window's start)."""
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT coalesce(max(notification_id), 0) FROM canasta_events"
            ).fetchone()
            sessions = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            ).fetchone()
        assert row is not None and sessions is not None
        report["postgres_sessions_last_seen"] = int(sessions[0]) - 1  # not this one
        return int(row[0])

    if args.no_sync_commit:
        with psycopg.connect(base_url, autocommit=True) as conn:
            conn.execute(f"ALTER DATABASE {args.db_name} SET synchronous_commit = off")
    server = Server(
        url, args.workers, args.pool_size, args.threads, args.nodelay_fix,
        args.experiment, args.read_models,
    )  # fmt: skip
    log(
        f"starting uvicorn app.main:app --workers {args.workers} on {server.base} "
        f"(pool {args.pool_size}, threadpool {args.threads or 'default'}; log {SERVER_LOG})"
    )
    with running(server):
        log(f"  up: pids {server.pids()}")
        report["idle_round_trip_ms"] = probe = idle_round_trips(server.base)
        log(
            f"  idle round trips, one keep-alive connection: GET /health p50 "
            f"{probe['health']['p50']:.1f} ms, GET /tables/{{id}} p50 {probe['table']['p50']:.1f} ms"
        )
        postmaster = postmaster_pid(url)
        if not args.skip_load:
            profile = None
            if args.profile:
                spy = find_py_spy(args.py_spy)
                if spy is None:
                    raise SystemExit("--profile needs py-spy (pip install py-spy) or --py-spy PATH")
                workers = server.worker_pids()
                projector = [server.projector.pid] if server.projector else []
                profile = lambda: Profiler(spy, workers, args.seconds, read_models=projector)  # noqa: E731
            cpu = CpuWindow(
                {
                    "server": server.pids,
                    "postgres": lambda: (
                        [postmaster, *children_of(postmaster)] if postmaster else []
                    ),
                    "load_generator": lambda: [os.getpid()],
                }
            )
            # The open loop goes on with the closed loop's games: by then they are at every
            # point of a game, so games end, and new ones are set up, all along its window,
            # as on a server that has been up a while. (New games, started within seconds of
            # one another, all ended in the same few seconds near the window's end: a wave of
            # table, seat and first-command requests that a steady server does not see.)
            games: list[Driver] | None = None
            if not args.skip_closed:
                report["load"], games = run_load(
                    server.base, url, args.games, args.seconds, args.warmup, args.views, args.seed,
                    cpu, count_rows, profile, None, args.load_generator_nice,
                )  # fmt: skip
                if args.read_models != "off":
                    report["load"]["read_models_caught_up_s"] = wait_for_read_models(url)
            if args.rate:
                report["load_at_rate"], _ = run_load(
                    server.base, url, args.games, args.seconds, args.warmup, args.views,
                    args.seed + 1, cpu, count_rows, profile if args.skip_closed else None,
                    args.rate, args.load_generator_nice, games,
                )  # fmt: skip
                if args.read_models != "off":
                    caught_up = wait_for_read_models(url)
                    report["load_at_rate"]["read_models_caught_up_s"] = caught_up
                if not args.skip_pgbench and find_pgbench() is not None:
                    # The store's own latency at the same rate, in the same run: the anchor
                    # the commands' p99 is judged against (this machine's disk stalls hit both).
                    clients = min(args.games, args.workers * args.pool_size)
                    log(f"the store at {args.rate:.0f}/s: pgbench --rate, {clients} clients")
                    report["store_at_rate"] = pgbench_at_rate(url, clients, args.seconds, args.rate)
        if not args.skip_replay:
            log("replay: playing a complete 5000-point classic 4-player game in-process")
            report["replay"] = run_replay(url, server.base, args.replay_samples, args.seed)
    if not args.skip_pgbench:
        if find_pgbench() is None:
            log("pgbench not found: raw insert figures skipped")
        else:
            clients = min(args.games, args.workers * args.pool_size)
            log(f"raw inserts with pgbench (1 and {clients} clients, the server's connections)")
            report["pgbench"] = run_pgbench(url, clients, args.pgbench_seconds)
    load = report.get("load")
    pg = report.get("pgbench")
    if load and pg:
        report["ratios"] = {
            f"commands_per_insert_{n}_clients": round(load["commands_per_s"] / tps, 4)
            for n, tps in pg["insert_tps"].items()
        }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print_report(report, args.json)
    return 0
