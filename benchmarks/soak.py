"""The soak benchmark, ``python -m benchmarks.soak`` (not a test): does anything grow without
bound while a server runs for weeks?

A real server, laid out as ``deploy/`` runs it: ``uvicorn --workers 2`` (``CANASTA_READ_MODELS
=off``, ``CANASTA_RUN_BOTS=false``, the metrics of every worker in ``PROMETHEUS_MULTIPROC_DIR``),
a ``canasta project`` and a ``canasta bots`` process, on a PostgreSQL database of its own
(``--store sqlite``: one uvicorn process on a SQLite file that runs the read models and the
bots itself, as ``make run`` does). Every process runs through ``benchmarks.soak_probe``,
which samples its in-memory sizes. The load (``benchmarks.soak_load``) plays complete games
one after another: games of four people stopped after a deal or played to their end (rematches, new tables,
new accounts, replays, audits, idempotency keys), practice games against the bots by people
signed in by a browser session (some walk away mid-game), and spectators opening and closing
live streams. The limits are on (``CANASTA_RATE_LIMITS``), with rates the load stays under.

Every ``--sample-seconds`` it notes, per server process: RSS, open file descriptors, threads
(``/proc``), and the probe's figures; for PostgreSQL, the connections by application and the
sizes and rows of its tables; and the games finished so far. The report gives, for every
figure, its value after ``--warmup`` seconds, at the end, and its growth per 1,000 games (a
least-squares slope over the samples after the warm-up) and per hour at the run's rate. A
figure that has reached its cap shows no growth; one without a cap grows all along.

Run: ``DATABASE_URL=$(scripts/pg.sh url) python -m benchmarks.soak --minutes 3``. Figures and
the probes' files: ``.bench/soak/`` (``report.json``; ``*.types.json``: objects by type,
first and latest; ``*.tracemalloc.txt`` with ``--tracemalloc N``: the top allocations grown).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg

from app.application import CanastaApp
from app.settings import Settings, eventsourcing_env
from app.signing import new_key_document
from benchmarks.server.config import REPO_ROOT, log
from benchmarks.server.cpu import children_of
from benchmarks.server.database import fresh_database
from benchmarks.server.driver import event_loop_runner
from benchmarks.server.mirror import Reader
from benchmarks.server.server_process import free_port
from benchmarks.soak_load import AUDITOR, SoakGame, Tally, practice_player, register, spectator
from benchmarks.soak_probe import COLLECT_ENV, DIR_ENV, SECONDS_ENV, TRACEMALLOC_ENV, WARMUP_ENV

OUT = REPO_ROOT / ".bench" / "soak"
#: Rates the load stays under, the limits still counting every client (docs/operations.md).
RATES = {
    "CANASTA_RATE_LIMIT_REGISTRATION": "100000/minute",
    "CANASTA_RATE_LIMIT_COMMANDS": "1000/second",
    "CANASTA_RATE_LIMIT_READS": "5000/second",
    "CANASTA_MAX_STREAMS_PER_ADDRESS": "0",
}


class FileReader(Reader):
    """The load generator's window into a SQLite store (``--store sqlite``)."""

    def __init__(self, data_dir: Path) -> None:
        settings = Settings(data_dir=data_dir, aggregate_cache_maxsize=0)
        self.app = CanastaApp(env=eventsourcing_env(settings))


class Processes:
    """The server's processes (see the module's documentation), each in a group of its own."""

    def __init__(self, args: argparse.Namespace, url: str | None, data_dir: Path) -> None:
        self.args = args
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        metrics = data_dir / "metrics"
        metrics.mkdir()
        self.metrics_dir = metrics
        self.env = {
            **os.environ,
            **RATES,
            DIR_ENV: str(args.out),
            SECONDS_ENV: str(args.sample_seconds),
            WARMUP_ENV: str(args.warmup),
            TRACEMALLOC_ENV: str(args.tracemalloc),
            COLLECT_ENV: "1" if args.collect else "0",
            "CANASTA_AUDITORS": AUDITOR,
            "CANASTA_RATE_LIMITS": "true",
            "CANASTA_IDEMPOTENCY_KEY_SECONDS": str(args.idempotency_seconds),
            "CANASTA_SESSION_MAX_AGE_SECONDS": str(args.session_seconds),
            "CANASTA_SIGNING_KEY": json.dumps(new_key_document()),
            "PROMETHEUS_MULTIPROC_DIR": str(metrics),
        }
        if args.cache_size is not None:
            self.env["CANASTA_AGGREGATE_CACHE_MAXSIZE"] = str(args.cache_size)
        if url is not None:
            self.env.update(DATABASE_URL=url, CANASTA_DATABASE_URL=url)
            self.env.update(CANASTA_READ_MODELS="off", CANASTA_RUN_BOTS="false")
        else:
            self.env.pop("DATABASE_URL", None)
            self.env.pop("CANASTA_DATABASE_URL", None)
            self.env["CANASTA_DATA_DIR"] = str(data_dir)
        self.postgres = url is not None

    def start(self) -> None:
        self.out = Path(self.args.out)
        logfile = (self.out / "server.log").open("ab")
        probe = [sys.executable, "-m", "benchmarks.soak_probe"]
        workers = self.args.workers if self.postgres else 1
        web = [sys.executable, "-m", "uvicorn", "benchmarks.soak_probe:soak_app", "--factory"]
        web += ["--port", str(self.port), "--workers", str(workers), "--no-access-log"]
        commands = {"web": web}
        if self.postgres:
            commands["project"] = [*probe, "project", "--progress-seconds", "3600"]
            commands["bots"] = [*probe, "bots"]
        for role, cmd in commands.items():
            self.procs[role] = subprocess.Popen(
                cmd, cwd=REPO_ROOT, env=self.env, stdout=logfile, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self.procs.values()):
                raise RuntimeError(f"a server process exited; see {self.out / 'server.log'}")
            if len(self.pids()) >= len(self.procs) + (workers if workers > 1 else 0):
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(self.base + "/health", timeout=2).status_code == 200:
                        time.sleep(2)
                        return
            time.sleep(0.3)
        raise RuntimeError(f"the server did not answer in 60 s; see {self.out / 'server.log'}")

    def pids(self) -> dict[str, int]:
        """Every server process by its role: web (uvicorn's parent), web-N, project, bots."""
        out: dict[str, int] = {}
        for role, proc in self.procs.items():
            if proc.poll() is not None:
                continue
            out[role] = proc.pid
            if role == "web":
                workers = [
                    child
                    for child in sorted(children_of(proc.pid))
                    if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()
                ]
                for i, child in enumerate(workers, 1):
                    out[f"web-{i}"] = child
        return out

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)  # the group we created for it
                proc.wait(timeout=10)


def proc_figures(pid: int) -> dict[str, int]:
    """RSS (KiB), open file descriptors and threads of one process, from /proc."""
    out: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                out["rss_kib"] = int(line.split()[1])
            elif line.startswith("Threads:"):
                out["os_threads"] = int(line.split()[1])
        out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        pass
    return out


def pg_figures(url: str) -> dict[str, Any]:
    """The database's connections (by application and state), its tables' sizes (KiB) and
    the rows of the tables that are meant to stay small."""
    dbname = url.rsplit("/", 1)[1]
    out: dict[str, Any] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT coalesce(nullif(application_name, ''), '?'), state, count(*) "
            "FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid() "
            "GROUP BY 1, 2",
            (dbname,),
        ).fetchall()
        out["connections"] = sum(n for _, _, n in rows)
        for app, state, n in rows:
            out[f"connections.{app}.{state}"] = n
        for name, size in conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid) / 1024 FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'r'"
        ).fetchall():
            out[f"table_kib.{name}"] = int(size)
        for table in ("idempotency_keys", "canasta_liveness"):
            row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
            out[f"rows.{table}"] = row[0] if row else 0
        row = conn.execute(
            "SELECT count(*) FROM canasta_events WHERE topic LIKE 'domain.sessions:%%'"
        ).fetchone()
        out["rows.session_events"] = row[0] if row else 0
        row = conn.execute("SELECT count(*) FROM canasta_events").fetchone()
        out["rows.canasta_events"] = row[0] if row else 0
    return out


def dir_kib(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) // 1024


def sample(procs: Processes, url: str | None, tally: Tally, data_dir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"t": time.time(), "games": tally.games}
    for role, pid in procs.pids().items():
        for name, value in proc_figures(pid).items():
            out[f"{role}.{name}"] = value
    out["metrics_dir_kib"] = dir_kib(procs.metrics_dir)
    if url is not None:
        with contextlib.suppress(psycopg.Error):
            out.update({f"pg.{k}": v for k, v in pg_figures(url).items()})
    else:
        out["sqlite_kib"] = dir_kib(data_dir)
    return out


async def drive(
    args: argparse.Namespace, procs: Processes, reader: Reader, url: str | None, data_dir: Path
) -> tuple[Tally, list[dict[str, Any]]]:
    tally = Tally()
    samples: list[dict[str, Any]] = []
    stop_at = time.monotonic() + args.minutes * 60
    auditor: dict[str, str] = {}
    async with httpx.AsyncClient(base_url=procs.base) as client:
        auditor = {"Authorization": f"Bearer {await register(client, AUDITOR, tally)}"}
    games = [
        SoakGame(i, procs.base, reader, args.seed + i, False, name_prefix=f"h{i}",
                 tally=tally, auditor=auditor, new_players_every=args.new_players_every)
        for i in range(args.games)
    ]  # fmt: skip
    for game in games:
        await game.register()
        tally.registrations += 4
        await game.new_game()
    interval = len(games) / args.rate
    start = time.perf_counter() + 0.5
    end = start + args.minutes * 60
    tasks = [
        asyncio.create_task(g.run(end, interval, start + i * interval / len(games)))
        for i, g in enumerate(games)
    ]
    tasks += [
        asyncio.create_task(
            practice_player(procs.base, i, stop_at, tally, args.abandon, args.seed + 100 + i)
        )
        for i in range(args.practice)
    ]
    tasks += [
        asyncio.create_task(spectator(procs.base, stop_at, tally, args.seed + 200 + i))
        for i in range(args.spectators)
    ]
    loop = asyncio.get_running_loop()
    while time.monotonic() < stop_at:
        samples.append(await loop.run_in_executor(None, sample, procs, url, tally, data_dir))
        log(
            f"  {tally.games} games ({tally.practice_games} practice, {tally.abandoned} "
            f"walked away), {tally.deals} deals, {tally.streams} streams, "
            f"web RSS {[v for k, v in samples[-1].items() if k.endswith('rss_kib')]} KiB"
        )
        await asyncio.sleep(min(args.sample_seconds, max(0.0, stop_at - time.monotonic())))
    await asyncio.gather(*tasks, return_exceptions=True)
    for game in games:
        for what, n in game.errors.items():
            tally.errors[what] = tally.errors.get(what, 0) + n
        tally.samples.extend(game.error_samples[:2])
        game.close()
    samples.append(await loop.run_in_executor(None, sample, procs, url, tally, data_dir))
    return tally, samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.soak", description=__doc__)
    parser.add_argument("--minutes", type=float, default=3.0, help="how long the load runs")
    parser.add_argument("--store", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--games", type=int, default=8, help="games of four people at once")
    parser.add_argument("--rate", type=float, default=80.0, help="their commands/s in all")
    parser.add_argument("--practice", type=int, default=4, help="practice players at once")
    parser.add_argument("--abandon", type=float, default=0.2, help="share who walk away")
    parser.add_argument("--spectators", type=int, default=6, help="spectators at once")
    parser.add_argument("--new-players-every", type=int, default=5, help="games (accounts)")
    parser.add_argument("--sample-seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=30.0, help="seconds not judged")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--idempotency-seconds", type=int, default=60, help="the keys' TTL")
    parser.add_argument("--session-seconds", type=int, default=60, help="the sessions' life")
    parser.add_argument(
        "--cache-size",
        type=int,
        default=None,
        help="CANASTA_AGGREGATE_CACHE_MAXSIZE (a smaller "
        "one fills during the warm-up: what grows past the caches shows sooner)",
    )
    parser.add_argument("--tracemalloc", type=int, default=0, help="frames (0: off; slow)")
    parser.add_argument(
        "--collect",
        action="store_true",
        help="diagnosis: count objects again after a full "
        "garbage collection in the servers (it frees what RSS would show)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db-name", default="canasta_bench_soak")
    parser.add_argument("--out", default=str(OUT), help="the figures' directory (emptied)")
    parser.add_argument("--all", action="store_true", help="print every figure, not only growth")
    args = parser.parse_args(argv)

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(f"stopped by signal {signum}")  # the servers are stopped (finally)

    signal.signal(signal.SIGTERM, stop)
    url: str | None = None
    if args.store == "postgres":
        base_url = os.environ.get("DATABASE_URL", "")
        if not base_url:
            raise SystemExit("set DATABASE_URL (e.g. DATABASE_URL=$(scripts/pg.sh url))")
        url = fresh_database(base_url, args.db_name)
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    data_dir = Path(tempfile.mkdtemp(prefix="canasta-soak-"))
    procs = Processes(args, url, data_dir)
    print(
        f"canasta-ledger soak: {args.minutes:g} min on {args.store}; {args.games} games of four "
        f"at {args.rate:g} commands/s, {args.practice} practice players ({args.abandon:.0%} walk "
        f"away), {args.spectators} spectators; a sample every {args.sample_seconds:g} s"
    )
    reader: Reader | None = None
    started = time.time()
    try:
        procs.start()
        roles = {pid: role for role, pid in procs.pids().items()}
        reader = Reader(url, 2) if url is not None else FileReader(data_dir)
        tally, samples = event_loop_runner()(drive(args, procs, reader, url, data_dir))
    finally:
        if reader is not None:
            reader.close()
        procs.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    from benchmarks.soak_report import growth, judge, print_report, probe_series

    figures = growth(samples, probe_series(out, roles), started + args.warmup)
    minutes = (samples[-1]["t"] - started) / 60
    print(
        f"  {tally.games} games ({tally.practice_games} practice; {tally.abandoned} walked away) "
        f"and {tally.deals} deals in {minutes:.1f} min ({tally.games / minutes * 60:.0f} games "
        f"an hour); {tally.registrations} registrations, {tally.sessions} sessions, "
        f"{tally.idempotency_keys} idempotency keys, {tally.streams} streams, "
        f"{tally.replays} replays, {tally.audits} audits; errors {tally.errors or 'none'}"
    )
    for line in tally.samples:
        print(f"    {line}")
    print_report(figures, everything=args.all)
    verdicts = judge(figures)
    missed = [what for what, met in verdicts if not met]
    print(f"  target: {len(verdicts)} resources (descriptors, threads, connections) do not grow: "
          + ("met" if not missed else "MISSED: " + "; ".join(missed)))  # fmt: skip
    report = {
        "args": vars(args),
        "tally": vars(tally),
        "figures": figures,
        "targets": verdicts,
        "samples": samples,
    }
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str))
    print(f"  figures: {out / 'report.json'}")
    return 0 if not missed else 1


if __name__ == "__main__":
    raise SystemExit(main())
