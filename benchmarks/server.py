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
p99 counted from the set-up's end shows how little it weighs). ``--patch stall-log`` logs,
per worker, when a thread got the GIL late, slow event-store transactions and slow or
route-handled commands. "postgres" is every process of the cluster: on a cluster shared
with running tests it includes their backends too.

Run: ``DATABASE_URL=$(scripts/pg.sh url) python -m benchmarks.server [--seconds 20]``.
It works in its own database (``--db-name``, default ``canasta_bench``) of that cluster,
dropped and re-created and migrated with alembic, so it never touches the tests' database
(but it does use up to ~60 of the cluster's connections). The report is printed and written
to ``.bench/server-latest.json``. ``--help`` lists the settings (workers, pool, threadpool,
client) and the experiments (``--nodelay-fix``, ``--patch``,
``--no-sync-commit``, ``--profile``), which change nothing in the server's files.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit
from uuid import UUID

import psycopg

from app.application import CanastaApp
from app.autoplay import new_table, play_game
from app.migrations import upgrade
from app.settings import Settings, eventsourcing_env
from benchmarks.interpreter import described, interpreter
from domain import commands as c
from domain import rules
from domain.deal import Deal
from domain.legal import legal_command, seat_to_act
from domain.table import PLAYING
from projections.visibility import Viewer, event_view

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / ".bench" / "server-latest.json"
SERVER_LOG = REPO_ROOT / ".bench" / "uvicorn.log"
PG_BINDIRS = ("/usr/lib/postgresql/15/bin",)

TARGET_COMMANDS_PER_S = 1000.0
TARGET_P99_MS = 50.0
TARGET_REPLAY_MS = 50.0

#: The replayed game is the first of at least this many deals (or the longest of four).
MIN_DEALS = 6

#: Environment variable read by ``bench_app`` (``--patch``).
PATCHES_ENV = "CANASTA_BENCH_PATCHES"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of ``values``; NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


def summary_ms(seconds: Sequence[float]) -> dict[str, float | int]:
    ms = [s * 1000 for s in seconds]
    if not ms:
        return {"n": 0}
    return {
        "n": len(ms),
        "p50": round(percentile(ms, 50), 2),
        "p90": round(percentile(ms, 90), 2),
        "p99": round(percentile(ms, 99), 2),
        "max": round(max(ms), 2),
        "mean": round(statistics.fmean(ms), 2),
    }


def timeline(
    rows: Sequence[tuple[Any, ...]], start: float, end: float, buckets: int = 20
) -> list[dict[str, float | int]]:
    """Commands (end time, latency s, status) by when they were answered, in ``buckets``
    equal slices of the window: whether a tail comes from a few stalls or from all along."""
    width = (end - start) / buckets
    slices: list[list[float]] = [[] for _ in range(buckets)]
    for row in rows:
        slices[min(buckets - 1, int((row[0] - start) / width))].append(row[1] * 1000)
    return [
        {
            "from_s": round(i * width, 2),
            "n": len(ms),
            "p50": round(percentile(ms, 50), 1) if ms else 0,
            "p99": round(percentile(ms, 99), 1) if ms else 0,
            "max": round(max(ms), 1) if ms else 0,
        }
        for i, ms in enumerate(slices)
    ]


def slice_counts(times: Sequence[float], start: float, end: float, buckets: int = 20) -> list[int]:
    """How many of ``times`` fall in each of ``buckets`` equal slices of the window."""
    counts = [0] * buckets
    width = (end - start) / buckets
    for t in times:
        if start <= t < end:
            counts[min(buckets - 1, int((t - start) / width))] += 1
    return counts


# --- the database ---------------------------------------------------------------------------


def with_dbname(url: str, dbname: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + dbname))


def fresh_database(base_url: str, dbname: str) -> str:
    """Drop and re-create ``dbname`` in the cluster of ``base_url``; migrate it to head."""
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", dbname):
        raise SystemExit(f"--db-name must be a plain lowercase identifier, not {dbname!r}")
    if dbname == urlsplit(base_url).path.lstrip("/"):
        raise SystemExit("--db-name must differ from DATABASE_URL's database (it is dropped)")
    with psycopg.connect(base_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {dbname}")
    url = with_dbname(base_url, dbname)
    upgrade(url)
    return url


def postmaster_pid(url: str) -> int | None:
    """The PostgreSQL server process behind ``url``, if this machine can see it."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SHOW data_directory").fetchone()
    assert row is not None
    try:
        return int(Path(row[0], "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


# --- CPU accounting from /proc -----------------------------------------------------------------

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def children_of(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of one process (not of its children)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    total = sum(values[:8])
    return (total - idle) / CLOCK_TICKS, total / CLOCK_TICKS


def _fixed_work() -> float:
    """Thread CPU seconds of a fixed piece of pure-Python work (about 1 ms)."""
    started = time.thread_time()
    total = 0
    for i in range(20_000):
        total += i * i % 7
    return time.thread_time() - started


class SpeedProbe:
    """How fast this machine's cores ran the same Python work during a run (every 0.5 s,
    ~0.2% of a core). On a shared virtual machine the same work can take twice as long
    from one minute to the next (the host's other tenants, its frequency scaling), and
    every figure of the run moves with it: the report shows the median, so that runs can
    be compared. (Measured idle the figure means little: idle cores are clocked down.)"""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []
        self.stop_at = 0.0

    def start(self, until: float) -> None:
        self.stop_at = until

        def run() -> None:
            while time.perf_counter() < self.stop_at:
                self.samples.append((time.perf_counter(), _fixed_work()))
                time.sleep(0.5)

        threading.Thread(target=run, name="speed probe", daemon=True).start()

    def summary(self, start: float, end: float) -> dict[str, Any]:
        during = sorted(cpu for t, cpu in self.samples if start <= t < end)
        if not during:
            return {}
        return {
            "probes": len(during),
            "median_us": round(statistics.median(during) * 1e6, 1),
            "fastest_us": round(during[0] * 1e6, 1),
            "slowest_us": round(during[-1] * 1e6, 1),
        }


class DiskProbe:
    """How long this machine's disk took to make a small write durable during a run: 8 KiB
    written and ``fdatasync``-ed every 50 ms in a file of ``folder`` (by default the
    benchmark's own folder, on the database's disk when PostgreSQL runs here).

    Every command's commit waits for such a flush of PostgreSQL's WAL (synchronous_commit
    on), and a commit that waits holds the events table's lock, so when the disk stalls
    every command of every worker waits with it. On this virtual machine a flush usually
    takes well under a millisecond, yet now and then one takes 50 to 900 ms, at the very
    moments PostgreSQL logs its COMMITs as that slow (``log_min_duration_statement``) and
    whatever process makes the flush, this probe included: the disk, not the server. The
    report shows these stalls next to the latency figures, so that a tail can be read. (It
    adds 20 small flushes a second to the server's few hundred.)

    It also reads the kernel's dirty page cache (``Dirty:`` in /proc/meminfo) around each
    flush. The database's files grow by a few MB a second under load (new pages are written
    to the page cache at once), and with the kernel's default settings those pages are
    written back only when they are 30 s old, tens of MB at once; a flush that falls on
    such a writeback waits behind it. Each stall is reported with how much the dirty cache
    fell during it, and the window's large writebacks (``writeback_mb``) are listed too."""

    def __init__(self, folder: Path, interval: float = 0.05) -> None:
        self.path = folder / "disk-probe.dat"
        self.interval = interval
        # (end time, flush s, dirty page cache before and after the flush, kB)
        self.samples: list[tuple[float, float, int, int]] = []
        self.stop_at = 0.0

    def start(self, until: float) -> None:
        self.stop_at = until
        self.path.parent.mkdir(parents=True, exist_ok=True)

        def run() -> None:
            block = os.urandom(8192)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                for i in range(64):  # the blocks exist before they are measured
                    os.pwrite(fd, block, i * len(block))
                os.fsync(fd)
                i = 0
                while time.perf_counter() < self.stop_at:
                    os.pwrite(fd, block, (i % 64) * len(block))
                    before = dirty_kb()
                    started = time.perf_counter()
                    os.fdatasync(fd)
                    end = time.perf_counter()
                    self.samples.append((end, end - started, before, dirty_kb()))
                    i += 1
                    time.sleep(self.interval)
            finally:
                os.close(fd)
                self.path.unlink(missing_ok=True)

        threading.Thread(target=run, name="disk probe", daemon=True).start()

    def _stalls(
        self, start: float, end: float, stall_ms: float
    ) -> list[tuple[float, float, int, int]]:
        """The samples of the flushes of ``stall_ms`` or more that ended in the window."""
        return [x for x in self.samples if start <= x[0] < end and x[1] * 1000 >= stall_ms]

    def stall_spans(
        self, start: float, end: float, stall_ms: float = 20.0
    ) -> list[tuple[float, float]]:
        """(start, end) of each flush of ``stall_ms`` or more that ended in the window."""
        return [(t - s, t) for t, s, _, _ in self._stalls(start, end, stall_ms)]

    def summary(
        self, start: float, end: float, stall_ms: float = 20.0, writeback_mb: float = 8.0
    ) -> dict[str, Any]:
        during = [sample for sample in self.samples if start <= sample[0] < end]
        if not during:
            return {}
        flushes = [s for _, s, _, _ in during]
        # How much the dirty cache fell from one flush's start to the next one's: what the
        # kernel wrote back meanwhile (less what was dirtied again).
        written = [(t, (before - later[2]) / 1024) for (t, _, before, _), later in pairwise(during)]
        known = all(before >= 0 and after >= 0 for _, _, before, after in during)
        return {
            "flushes": len(flushes),
            "p50_ms": round(percentile(flushes, 50) * 1000, 2),
            "max_ms": round(max(flushes) * 1000, 1),
            "stall_ms": stall_ms,
            # (s into the window when the flush ended, its ms, MB the dirty cache fell by)
            "stalls": [
                [round(t - start, 3), round(s * 1000, 1), fell_mb(before, after, known)]
                for t, s, before, after in self._stalls(start, end, stall_ms)
            ],
            "writeback_mb": writeback_mb,
            # (s into the window, MB): the kernel's large writebacks of dirty pages
            "writebacks": [
                [round(t - start, 3), round(mb, 1)] for t, mb in written if mb >= writeback_mb
            ]
            if known
            else None,
        }


def clear_of(
    rows: Sequence[tuple[float, float, int, float]], spans: Sequence[tuple[float, float]]
) -> list[float]:
    """The latencies (s) of the ``(end, latency, status, ...)`` rows whose time in flight,
    from ``end - latency`` to ``end``, overlaps none of the ``spans`` (start, end)."""
    return [
        latency
        for end, latency, *_ in rows
        if not any(end - latency < stop and end > begin for begin, stop in spans)
    ]


def fell_mb(before: int, after: int, known: bool) -> float | None:
    """How many MB the dirty page cache fell by (0 if it grew), None if unknown."""
    return round(max(0, before - after) / 1024, 1) if known else None


def dirty_kb() -> int:
    """The kernel's dirty page cache (``Dirty:`` of /proc/meminfo), kB; -1 if unknown."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"Dirty:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


@dataclass
class CpuWindow:
    """CPU seconds used by groups of processes between ``start()`` and ``stop()``."""

    groups: dict[str, Callable[[], list[int]]]
    before: dict[str, dict[int, float]] = field(default_factory=dict)
    machine_before: tuple[float, float] = (0.0, 0.0)
    wall_before: float = 0.0
    result: dict[str, Any] = field(default_factory=dict)

    def _sample(self) -> dict[str, dict[int, float]]:
        out: dict[str, dict[int, float]] = {}
        for name, pids in self.groups.items():
            out[name] = {}
            for pid in pids():
                seconds = cpu_seconds(pid)
                if seconds is not None:
                    out[name][pid] = seconds
        return out

    def start(self) -> None:
        self.before = self._sample()
        self.machine_before = machine_cpu()
        self.wall_before = time.perf_counter()

    def stop(self) -> dict[str, Any]:
        after = self._sample()
        busy, total = machine_cpu()
        wall = time.perf_counter() - self.wall_before
        cores = os.cpu_count() or 1
        used: dict[str, float] = {}
        by_role: dict[str, dict[str, float]] = {}
        for name, pids in after.items():
            # A process born during the window counts from zero.
            deltas = {pid: s - self.before[name].get(pid, 0.0) for pid, s in pids.items()}
            used[name] = sum(deltas.values())
            roles = by_role[name] = {}
            for pid, delta in deltas.items():
                role = process_role(pid)
                roles[role] = roles.get(role, 0.0) + delta
        busy -= self.machine_before[0]
        total -= self.machine_before[1]
        # Everything else that ran (other users of the machine, the kernel's own threads).
        used["other"] = max(0.0, busy - sum(used.values()))
        used["idle"] = max(0.0, total - busy)
        self.result = {
            "wall_s": round(wall, 3),
            "cores": cores,
            **{f"{k}_cpu_s": round(v, 3) for k, v in used.items()},
            **{f"{k}_cores": round(v / wall, 3) for k, v in used.items()},
            "cores_by_process": {
                name: {
                    role: round(v / wall, 3)
                    for role, v in sorted(roles.items(), key=lambda kv: -kv[1])
                }
                for name, roles in by_role.items()
            },
        }
        return self.result


def process_role(pid: int) -> str:
    """A short name for what a process is, from its command line."""
    try:
        title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return "gone"
    if title.startswith("postgres: "):
        rest = title[len("postgres: ") :]
        if "(" in rest or "[local]" in rest:
            return "backends"
        return " ".join(rest.split()[:2])
    if "spawn_main" in title:
        return "uvicorn worker"
    if "resource_tracker" in title:
        return "multiprocessing resource tracker"
    if "/postgres " in title or title.endswith("/postgres"):
        return "postmaster"
    return "main process"


# --- the server ---------------------------------------------------------------------------


def _apply_patches(names: Sequence[str]) -> None:
    """Experiments on the server's code, applied in the server process only (``--patch``)."""
    if "switch-interval" in names:
        sys.setswitchinterval(0.0005)
    if "gc-log" in names:
        import gc

        started: list[float] = []
        log_path = Path(f"/tmp/gc-{os.getpid()}.log")

        def timing(phase: str, info: dict[str, Any]) -> None:
            if phase == "start":
                started.append(time.perf_counter())
            elif started:
                ms = (time.perf_counter() - started.pop()) * 1000
                if info["generation"] >= 1 or ms > 5:
                    with log_path.open("a") as f:
                        f.write(
                            f"{time.perf_counter():.3f} gen {info['generation']} {ms:.2f} ms "
                            f"collected {info['collected']}\n"
                        )

        gc.callbacks.append(timing)
    if "stall-log" in names:
        stall_path = Path(f"/tmp/stall-{os.getpid()}.log")

        def watch() -> None:
            while True:
                before = time.perf_counter()
                time.sleep(0.002)
                late = (time.perf_counter() - before - 0.002) * 1000
                if late > 15:
                    with stall_path.open("a") as f:
                        f.write(f"{time.perf_counter():.3f} stall {late:.1f} ms\n")

        threading.Thread(target=watch, daemon=True).start()

        from app.persistence import PostgresRecorder

        insert = PostgresRecorder.insert_events

        def timed_insert(self: Any, stored_events: Any, **kwargs: Any) -> Any:
            before = time.perf_counter()
            try:
                return insert(self, stored_events, **kwargs)
            finally:
                ms = (time.perf_counter() - before) * 1000
                if ms > 15:
                    with stall_path.open("a") as f:
                        f.write(
                            f"{time.perf_counter():.3f} insert_events {ms:.1f} ms "
                            f"{len(stored_events)} events\n"
                        )

        PostgresRecorder.insert_events = timed_insert  # type: ignore[method-assign]

        import contextvars

        from app.command_lane import CommandLane

        by_lane: contextvars.ContextVar[bool] = contextvars.ContextVar("by_lane", default=False)
        answer, call = CommandLane._answer, CommandLane.__call__

        async def timed_answer(self: Any, *args: Any) -> Any:
            content = await answer(self, *args)
            by_lane.set(content is not None)
            return content

        loop_watched: list[bool] = []

        async def watch_loop() -> None:
            while True:
                before = time.perf_counter()
                await asyncio.sleep(0.002)
                late = (time.perf_counter() - before - 0.002) * 1000
                if late > 15:
                    with stall_path.open("a") as f:
                        f.write(f"{time.perf_counter():.3f} loop-late {late:.1f} ms\n")

        async def timed_call(self: Any, scope: Any, receive: Any, send: Any) -> None:
            if not loop_watched:  # the worker's event loop: how late it runs a timer
                loop_watched.append(True)
                self.watcher = asyncio.get_running_loop().create_task(watch_loop())
            before = time.perf_counter()
            by_lane.set(False)
            await call(self, scope, receive, send)
            ms = (time.perf_counter() - before) * 1000
            lane = by_lane.get()
            if scope.get("method") == "POST" and (ms > 50 or not lane):
                with stall_path.open("a") as f:
                    where = "lane" if lane else "route"
                    f.write(f"{time.perf_counter():.3f} {where} {ms:.1f} ms {scope['path']}\n")

        from app.application import CanastaApp
        from domain.command_log import command_log_id

        submit_cached = CanastaApp.submit_cached
        reasons: Counter[str] = Counter()
        missing: set[Any] = set()

        def explained(self: Any, deal_id: Any, player: str, *args: Any) -> Any:
            result = submit_cached(self, deal_id, player, *args)
            if result is None:
                cache = self.repository.cache

                def cached(key: Any) -> Any:
                    try:
                        return cache.get(key)
                    except KeyError:
                        return None

                deal = cached(deal_id)
                if deal is None:
                    reasons["deal not cached"] += 1
                elif cached(command_log_id(deal.state.table_id, player)) is None:
                    reasons["log not cached"] += 1
                    missing.add((deal.state.table_id, player))
                    reasons["distinct logs not cached"] = len(missing)
                    reasons["cache size"] = len(cache.cache)
                elif (
                    self._read_lock(deal_id).locked()
                    or self._read_lock(command_log_id(deal.state.table_id, player)).locked()
                ):
                    reasons["read lock busy"] += 1
                else:
                    reasons[f"other, deal {deal.state.phase}"] += 1
                if sum(reasons.values()) % 50 == 0:
                    with stall_path.open("a") as f:
                        f.write(f"{time.perf_counter():.3f} reasons 0 {dict(reasons)}\n")
            return result

        from eventsourcing.persistence import IntegrityError

        import app.command_lane as lane_module

        from_cache = lane_module.submit_from_cache

        async def counted_from_cache(*args: Any) -> Any:
            try:
                return await from_cache(*args)
            except IntegrityError:
                reasons["lost race (IntegrityError on save)"] += 1
                with stall_path.open("a") as f:
                    f.write(f"{time.perf_counter():.3f} reasons 0 {dict(reasons)}\n")
                raise

        lane_module.submit_from_cache = counted_from_cache  # type: ignore[assignment]
        CanastaApp.submit_cached = explained  # type: ignore[method-assign,assignment]
        CommandLane._answer = timed_answer  # type: ignore[method-assign,assignment]
        CommandLane.__call__ = timed_call  # type: ignore[method-assign]
    if "no-read-models" in names:
        from projections.runner import ReadModels

        ReadModels.start = lambda self: None  # type: ignore[method-assign]


#: ``--patch`` choices: what each would change in the server's code.
PATCHES = {
    "switch-interval": "sys.setswitchinterval(0.0005) in the workers (default 0.005 s): a "
    "thread that holds the events table's lock waits less for the GIL",
    "gc-log": "log the older generations' garbage collections of the workers (/tmp/gc-PID.log)",
    "stall-log": "a thread of each worker wakes every 2 ms and logs when it got the CPU and "
    "the GIL more than 15 ms late (/tmp/stall-PID.log, time.perf_counter: the load "
    "generator's clock)",
    "no-read-models": "the workers do not run the read-model projections (ReadModels.start "
    "does nothing), to measure what running them in every worker costs",
}


def bench_app() -> Any:
    """``uvicorn benchmarks.server:bench_app --factory``: ``app.main``'s app with the
    experiments of ``$CANASTA_BENCH_PATCHES`` (comma-separated ``PATCHES``) applied from
    outside (no server file changed)."""
    from app.main import create_app

    _apply_patches(os.environ.get(PATCHES_ENV, "").split(","))
    return create_app()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Server:
    """``uvicorn app.main:app --workers N`` in its own process group."""

    def __init__(
        self,
        url: str,
        workers: int,
        pool_size: int,
        threads: int | None,
        nodelay_fix: bool = False,
        patches: Sequence[str] = (),
        read_models: str = "workers",
    ) -> None:
        self.url = url
        self.read_models = read_models
        self.projector: subprocess.Popen[bytes] | None = None
        self.patches = list(patches)
        self.nodelay_fix = nodelay_fix
        self.workers = workers
        self.pool_size = pool_size
        self.threads = threads
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {
            **os.environ,
            "DATABASE_URL": self.url,
            "CANASTA_DATABASE_URL": self.url,
            "CANASTA_POSTGRES_POOL_SIZE": str(self.pool_size),
        }
        target = ["app.main:app"]
        if self.threads:
            env["CANASTA_THREADPOOL_SIZE"] = str(self.threads)
        if self.read_models == "process":
            env["CANASTA_READ_MODELS"] = "off"
        if self.patches:
            env[PATCHES_ENV] = ",".join(self.patches)
            target = ["benchmarks.server:bench_app", "--factory"]
        cmd = [
            sys.executable,
            "-m",
            "benchmarks.uvicorn_nodelay" if self.nodelay_fix else "uvicorn",
            *target,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--workers",
            str(self.workers),
            "--no-access-log",
            "--log-level",
            "warning",
        ]
        SERVER_LOG.parent.mkdir(parents=True, exist_ok=True)
        with SERVER_LOG.open("ab") as out:
            out.write(f"\n--- {time.ctime()}: {' '.join(cmd[2:])}\n".encode())
            out.flush()
            self.proc = subprocess.Popen(
                cmd, cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
            if self.read_models == "process":  # ``canasta project``, as README deploys it
                self.projector = subprocess.Popen(
                    [sys.executable, "-m", "app.cli", "project", "--progress-seconds", "3600"],
                    cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                    start_new_session=True,
                )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"uvicorn exited with {self.proc.returncode}; see {SERVER_LOG}")
            if self.projector is not None and self.projector.poll() is not None:
                raise RuntimeError(
                    f"canasta project exited with {self.projector.returncode}; see {SERVER_LOG}"
                )
            # All worker processes exist and one of them answers; a worker accepts
            # connections only after its start-up, so give the others a moment too.
            if len(self.worker_pids()) >= self.workers and self._healthy():
                time.sleep(2.0)
                return
            time.sleep(0.2)
        raise RuntimeError(f"uvicorn did not answer /health in 60 s; see {SERVER_LOG}")

    def _healthy(self) -> bool:
        try:
            client = RawClient(self.base, timeout=2)
            try:
                return client.request("GET", "/health").status_code == 200
            finally:
                client.close()
        except OSError:
            return False

    def pids(self) -> list[int]:
        """uvicorn's processes and, with ``--read-models process``, the projector's."""
        pids = []
        for proc in (self.proc, self.projector):
            if proc is None or proc.poll() is not None:
                continue
            pids.append(proc.pid)
            for child in children_of(proc.pid):
                pids += [child, *children_of(child)]
        return pids

    def worker_pids(self) -> list[int]:
        """The processes serving requests (the only one when ``--workers 1``)."""
        if self.proc is None or self.proc.poll() is not None:
            return []
        if self.workers <= 1:
            return [self.proc.pid]
        out = []
        for pid in children_of(self.proc.pid):
            with contextlib.suppress(OSError):
                if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    out.append(pid)
        return out

    def stop(self) -> None:
        procs = [self.proc, self.projector]
        self.proc = self.projector = None
        for proc in procs:
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)  # the group we created for it
                proc.wait(timeout=10)


# --- the load generator -------------------------------------------------------------------


def command_json(command: c.Command) -> dict[str, Any]:
    """A domain command as the API's JSON command body."""
    body: dict[str, Any] = {"type": c.COMMAND_NAMES[type(command)]}
    if isinstance(command, c.Cut):
        body["n"] = command.n
    elif isinstance(command, c.TakePile | c.Meld):
        body["melds"] = [
            {"cards": list(s.cards), **({"rank": s.rank} if s.rank else {})} for s in command.melds
        ]
        if isinstance(command, c.Meld) and command.discard:
            body["discard"] = command.discard
    elif isinstance(command, c.Discard):
        body["card"] = command.card
    elif isinstance(command, c.AskPartner):
        body["partner"] = command.partner
    elif isinstance(command, c.Answer):
        body["yes"] = command.yes
    return body


class HttpResponse:
    """Status and body of one answer, whichever client fetched it."""

    __slots__ = ("content", "status_code")

    def __init__(self, status_code: int, content: bytes) -> None:
        self.status_code = status_code
        self.content = content

    def json(self) -> Any:
        return json.loads(self.content)

    @property
    def text(self) -> str:
        return self.content.decode(errors="replace")

    def raise_for_status(self) -> None:
        if not 200 <= self.status_code < 300:
            raise RuntimeError(f"HTTP {self.status_code}: {self.text[:300]}")


def request_bytes(
    host: str, port: int, method: str, path: str, body: Any, headers: dict[str, str] | None
) -> bytes:
    """One HTTP/1.1 request on a keep-alive connection, JSON body if any."""
    data = b"" if body is None else json.dumps(body).encode()
    head = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", f"Content-Length: {len(data)}"]
    if body is not None:
        head.append("Content-Type: application/json")
    head.extend(f"{k}: {v}" for k, v in (headers or {}).items())
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


def parse_response(buffer: bytes) -> tuple[HttpResponse, bytes] | None:
    """The first whole answer in ``buffer`` and what follows it, or None if it is not all
    there yet. Reads what this server sends: a status line, headers with Content-Length,
    a body."""
    head_end = buffer.find(b"\r\n\r\n")
    if head_end < 0:
        return None
    lines = buffer[:head_end].split(b"\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    end = head_end + 4 + length
    if len(buffer) < end:
        return None
    status = int(lines[0].split(b" ", 2)[1])
    return HttpResponse(status, buffer[head_end + 4 : end]), buffer[end:]


class RawClient:
    """HTTP/1.1 written and read directly on one blocking keep-alive socket (the replay
    and the idle probes; the load itself uses ``AsyncRawClient``): a third of
    ``http.client``'s CPU per request."""

    def __init__(self, base: str, timeout: float = 60) -> None:
        self.timeout = timeout
        parts = urlsplit(base)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.sock: socket.socket | None = None
        self.buffer = b""

    def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> HttpResponse:
        message = request_bytes(self.host, self.port, method, path, body, headers)
        for attempt in (1, 2):
            if self.sock is None:
                self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self.buffer = b""
            try:
                self.sock.sendall(message)
                return self._read()
            except OSError:
                # A keep-alive connection the server closed: reconnect once. Sending a
                # command twice is safe: the same seq gets the first answer (R-CMD-1).
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _read(self) -> HttpResponse:
        while (parsed := parse_response(self.buffer)) is None:
            self._receive()
        response, self.buffer = parsed
        return response

    def _receive(self) -> None:
        assert self.sock is not None
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionResetError("the server closed the connection")
        self.buffer += chunk

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


class Mirror:
    """The load generator's copy of one deal's whole state (every hand, the stock), moved on
    by the engine's own rules: per accepted command, ``rules.decide`` once and its events
    folded into the state with ``DealState.apply``, as the ``Deal`` aggregate folds them.
    The aggregate's bookkeeping (the hash chain, timestamps, a second ``decide`` in
    ``execute``) is left out: the load generator has no use for it, and it cost a third of
    the mirror's CPU, on the cores the server shares."""

    __slots__ = ("state", "version")

    def __init__(self, deal: Deal) -> None:
        self.state = deal.state
        self.version = deal.version

    def execute(self, seat: int, command: c.Command) -> list[Any]:
        """Apply an accepted command; its events, as ``event_view`` reads stored ones."""
        new = []
        for event in rules.decide(self.state, seat, command):
            self.state.apply(event)
            self.version += 1
            new.append(mirrored_event(event.kind, self.version, event.data()))
        return new


_EVENT_TYPES: dict[str, type] = {}


def mirrored_event(kind: str, version: int, data: dict[str, Any]) -> Any:
    """An object that ``event_view`` reads as the stored event: its class is named
    ``kind``, its attributes are the event's data and ``originator_version``."""
    cls = _EVENT_TYPES.get(kind)
    if cls is None:
        cls = _EVENT_TYPES[kind] = type(kind, (), {})
    event = cls()
    event.__dict__.update(data)
    event.originator_version = version
    return event


class Reader:
    """The load generator's only window into the store: a cold application, reads only,
    used once per deal to load the mirror."""

    def __init__(self, url: str, pool_size: int) -> None:
        settings = Settings(
            database_url=url, aggregate_cache_maxsize=0, postgres_pool_size=pool_size
        )
        self.app = CanastaApp(env=eventsourcing_env(settings))

    def deal(self, deal_id: UUID) -> Deal:
        deal = self.app.get_deal(deal_id)
        deal.collect_events()
        return deal

    def close(self) -> None:
        self.app.close()


class AsyncRawClient(asyncio.Protocol):
    """HTTP/1.1 on one keep-alive connection, for the load generator's event loop: the
    request is written straight to the transport and the answer parsed as its bytes arrive.
    Its receive time is taken when its last byte arrives, before any other game's work."""

    def __init__(self, base: str) -> None:
        parts = urlsplit(base)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.transport: asyncio.Transport | None = None
        self.buffer = b""
        self.waiter: asyncio.Future[tuple[HttpResponse, float]] | None = None

    # -- asyncio.Protocol --
    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.waiter is None or self.waiter.done():
            return
        parsed = parse_response(self.buffer)
        if parsed is not None:
            response, self.buffer = parsed
            self.waiter.set_result((response, time.perf_counter()))

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(
                exc or ConnectionResetError("the server closed the connection")
            )

    # -- requests --
    async def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[HttpResponse, float]:
        """The answer and the time its last byte arrived."""
        message = request_bytes(self.host, self.port, method, path, body, headers)
        loop = asyncio.get_running_loop()
        for attempt in (1, 2):
            if self.transport is None:
                self.buffer = b""
                transport, _ = await loop.create_connection(lambda: self, self.host, self.port)
                self.transport = transport
            assert self.transport is not None
            self.waiter = loop.create_future()
            try:
                self.transport.write(message)
                return await asyncio.wait_for(self.waiter, 60)
            except OSError:
                # A keep-alive connection the server closed: reconnect once. Sending a
                # command twice is safe: the same seq gets the first answer (R-CMD-1).
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
            self.transport = None


@dataclass
class Planned:
    """One command a game is about to send."""

    seat: int
    command: Any
    body: dict[str, Any]
    path: str
    headers: dict[str, str]
    cpu: float


@dataclass
class Driver:
    """One game, played over one keep-alive connection by a task of the load generator's
    event loop (one thread for all games, as wrk does: no game waits for a thread switch
    to send a command or to see its answer)."""

    index: int
    base: str
    reader: Reader
    seed: int
    views: bool
    name_prefix: str = "g"
    names: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    table_id: str = ""
    deal_id: UUID | None = None
    mirror: Mirror | None = None
    seqs: dict[tuple[str, int], int] = field(default_factory=dict)
    # (end time, latency s, status, s of it before the game could send it) of every POST
    # /deals/{id}/commands: open loop, the part of the latency between the command's due time
    # and the end of the deal's or game's set-up (``ready_at``), if it fell due during one
    commands: list[tuple[float, float, int, float]] = field(default_factory=list)
    ready_at: float = 0.0  # when the last set-up between deals ended (perf_counter)
    # (send time, s) open loop: how late after its due time each command was sent
    lateness: list[tuple[float, float]] = field(default_factory=list)
    # (end time, latency s, status) of every GET /deals/{id} (--views)
    view_gets: list[tuple[float, float, int]] = field(default_factory=list)
    # (end time, latency s) of every deal or game set-up step between deals
    between_deals: list[tuple[float, float]] = field(default_factory=list)
    # (end time, CPU s) spent on move choice, mirror update and answer check
    mirror_cpu: list[tuple[float, float]] = field(default_factory=list)
    # (end time, wall s) of the store read loading each deal's mirror
    mirror_loads: list[tuple[float, float]] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    mismatches: int = 0
    accepted: int = 0  # 200 answers so far (progress)
    deals_finished: int = 0
    games_finished: int = 0
    game_ends: list[float] = field(default_factory=list)  # when each game ended (s)
    error_samples: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.client = AsyncRawClient(self.base)

    async def get(self, path: str, headers: dict[str, str] | None = None) -> HttpResponse:
        return (await self.client.request("GET", path, headers=headers))[0]

    async def post(
        self, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> HttpResponse:
        return (await self.client.request("POST", path, body, headers))[0]

    # -- set-up --
    async def register(self) -> None:
        for seat in range(4):
            name = f"{self.name_prefix}{self.index}s{seat}"
            r = await self.post("/players", {"name": name})
            r.raise_for_status()
            self.names.append(name)
            self.headers.append({"Authorization": f"Bearer {r.json()['token']}"})

    async def new_game(self) -> None:
        """Create a classic 4-player table, seat the four players, start the game."""
        host = self.headers[0]
        r = await self.post("/tables", {"entry": "classic", "players": 4}, host)
        r.raise_for_status()
        self.table_id = r.json()["id"]
        for seat in range(4):
            r = await self.post(
                f"/tables/{self.table_id}/seats", {"seat": seat}, self.headers[seat]
            )
            r.raise_for_status()
        r = await self.post(f"/tables/{self.table_id}/start", None, host)
        r.raise_for_status()
        await self.load_deal(UUID(r.json()["deal"]))

    async def load_deal(self, deal_id: UUID) -> None:
        """Read the deal from the store into the mirror, in a worker thread: the store
        read blocks, and the other games go on meanwhile."""
        started = time.perf_counter()
        self.deal_id = deal_id
        self.mirror = Mirror(
            await asyncio.get_running_loop().run_in_executor(None, self.reader.deal, deal_id)
        )
        end = time.perf_counter()
        self.mirror_loads.append((end, end - started))

    async def next_deal(self) -> None:
        """The deal is over: the host starts the next one, or a new game if this one ended."""
        started = time.perf_counter()
        self.deals_finished += 1
        r = await self.get(f"/tables/{self.table_id}")
        r.raise_for_status()
        if r.json()["status"] == PLAYING:
            r = await self.post(f"/tables/{self.table_id}/deals", None, self.headers[0])
            r.raise_for_status()
            await self.load_deal(UUID(r.json()["deal"]))
        else:
            self.games_finished += 1
            self.game_ends.append(started)
            await self.new_game()
        end = time.perf_counter()
        self.between_deals.append((end, end - started))
        self.ready_at = end

    # -- play --
    async def run(
        self, stop_at: float, interval: float | None = None, first_at: float = 0.0
    ) -> None:
        """Closed loop (``interval`` None): the next command as soon as the answer is in.
        Open loop: one command every ``interval`` seconds from ``first_at`` on, whatever the
        answers' delays; each latency is then measured from the time the command was due,
        so a server that falls behind cannot hide it (no coordinated omission). The next
        deal is set up as soon as a deal ends, between two slots: when that takes longer
        than the time left, the next command goes out late and its latency shows it."""
        due = first_at
        try:
            if interval is None and first_at > time.perf_counter():
                await asyncio.sleep(first_at - time.perf_counter())
            while time.perf_counter() < stop_at:
                if interval is None:
                    await self.step()
                    continue
                wait = due - time.perf_counter()
                if wait > 0:
                    await asyncio.sleep(wait)
                await self.step(due)
                due += interval
        except Exception as exc:  # recorded, reported; the other games go on
            self.errors[f"driver crashed: {type(exc).__name__}"] += 1
            self.error_samples.append(repr(exc)[:300])

    def plan(self) -> Planned | None:
        """The acting seat's next legal command, or None if the mirrored deal is over."""
        started = time.thread_time()
        deal = self.mirror
        assert deal is not None and self.deal_id is not None
        st = deal.state
        seat = seat_to_act(st)
        if seat is None:
            return None
        command = legal_command(st, seat, self.rng)
        key = (self.table_id, seat)
        self.seqs[key] = seq = self.seqs.get(key, 0) + 1
        expect = {
            "game": self.table_id,
            "deal": st.number,
            "step": deal.version,
            "turn": st.turn,
            "phase": st.phase,
        }
        body = {"seq": seq, "expect": expect, "command": command_json(command)}
        path = f"/deals/{self.deal_id}"
        return Planned(seat, command, body, path, self.headers[seat], time.thread_time() - started)

    async def step(self, due: float | None = None) -> None:
        planned = self.plan()
        if planned is None:  # over (seen after a resync): set up the next deal, then play it
            await self.next_deal()
            planned = self.plan()
            if planned is None:
                return
        if self.views:
            # What a real client would do first: look at the table as the acting player.
            started = time.perf_counter()
            r, end = await self.client.request("GET", planned.path, headers=planned.headers)
            self.view_gets.append((end, end - started, r.status_code))
            if r.status_code == 200:
                view = r.json()
                planned.body["expect"] = {
                    "game": view["table"],
                    "deal": view["number"],
                    "step": view["step"],
                    "turn": view["turn"],
                    "phase": view["phase"],
                }
        sent = time.perf_counter()
        started = sent if due is None else due
        # (The last set-up, if any, ended before this send: ``ready_at`` <= ``sent``.)
        unready = 0.0 if due is None else max(0.0, self.ready_at - due)
        if due is not None:  # how late the load generator itself sent it
            self.lateness.append((sent, max(0.0, sent - due)))
        try:
            r, end = await self.client.request(
                "POST", planned.path + "/commands", planned.body, planned.headers
            )
        except (TimeoutError, OSError) as exc:
            end = time.perf_counter()
            self.commands.append((end, end - started, 0, unready))
            self.errors[f"transport: {type(exc).__name__}"] += 1
            await self.resync()
            return
        self.commands.append((end, end - started, r.status_code, unready))
        if r.status_code == 200:
            self.accepted += 1
        else:
            self.errors[f"HTTP {r.status_code}"] += 1
            if len(self.error_samples) < 5:
                name = self.names[planned.seat]
                self.error_samples.append(f"{name} {planned.body}: {r.status_code} {r.text[:300]}")
            await self.resync()
            return
        if not self.settle(planned, r.json()):
            self.mismatches += 1
            await self.resync()
        elif seat_to_act(self.mirror.state) is None:  # type: ignore[union-attr]
            await self.next_deal()  # that command ended the deal

    def settle(self, planned: Planned, answer: dict[str, Any]) -> bool:
        """Apply the accepted command to the mirror; whether the server's answer (its step
        and its events, redacted for the sender) is what the mirror says."""
        started = time.thread_time()
        deal = self.mirror
        assert deal is not None
        new_events = deal.execute(planned.seat, planned.command)
        viewer = Viewer.player(planned.seat)
        mine = [v for e in new_events if (v := event_view(e, viewer, deal.state)) is not None]
        same = bool(
            answer["step"] == deal.version and json.loads(json.dumps(mine)) == answer["events"]
        )
        cpu = planned.cpu + time.thread_time() - started
        self.mirror_cpu.append((time.perf_counter(), cpu))
        return same

    async def resync(self) -> None:
        assert self.deal_id is not None
        await self.load_deal(self.deal_id)

    def close(self) -> None:
        self.client.close()

    def new_run(self, reader: Reader) -> None:
        """Go on with this game in another run: its deal, mirror and sequence numbers stay;
        what the last run measured goes (the next run reconnects on its own event loop)."""
        self.reader = reader
        for measured in (
            self.commands,
            self.lateness,
            self.view_gets,
            self.between_deals,
            self.mirror_cpu,
            self.mirror_loads,
            self.game_ends,
            self.error_samples,
        ):
            measured.clear()
        self.errors.clear()
        self.mismatches = self.accepted = self.deals_finished = self.games_finished = 0


async def watch_own_loop(stalls: list[tuple[float, float]], until: float) -> None:
    """Note when the load generator's own event loop ran more than 10 ms late (busy, or
    its process not given a core): the latencies measured then include that delay."""
    while time.perf_counter() < until:
        before = time.perf_counter()
        await asyncio.sleep(0.002)
        late = time.perf_counter() - before - 0.002
        if late > 0.010:
            stalls.append((time.perf_counter(), late))


def wait_for_read_models(url: str, timeout: float = 300.0) -> float | None:
    """After a run: seconds until every projection had processed every event of its topics
    up to the log's head at the run's end (``PullWorker.has_processed``, a query: this
    process processes nothing), so that the next run does not start while they are still
    catching up, and a projection that fell behind shows. None if not within ``timeout``."""
    from projections.runner import ReadModels

    started = time.perf_counter()
    with ReadModels(Settings(database_url=url, read_models="off")) as read_models:
        head = read_models.head()
        while True:
            if all(worker.has_processed(head) for worker in read_models.workers.values()):
                waited = time.perf_counter() - started
                log(
                    f"  read models caught up with notification {head} {waited:.1f} s after the run"
                )
                return round(waited, 1)
            if time.perf_counter() - started > timeout:
                log(f"  read models NOT caught up with notification {head} in {timeout:.0f} s")
                return None
            time.sleep(0.1)


def event_loop_runner() -> Callable[[Any], Any]:
    """``run(coroutine)`` on uvloop when installed (it is, with uvicorn[standard]): about
    half of asyncio's own CPU per socket event, left to the server."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run

    def run(coroutine: Any) -> Any:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(coroutine)

    return run


def in_window(rows: Sequence[tuple[Any, ...]], start: float, end: float) -> list[tuple[Any, ...]]:
    return [row for row in rows if start <= row[0] < end]


def run_load(
    base: str,
    url: str,
    games: int,
    seconds: float,
    warmup: float,
    views: bool,
    seed: int,
    cpu: CpuWindow,
    count_rows: Callable[[], int],
    profile: Callable[[], Profiler] | None = None,
    rate: float | None = None,
    nice: int = 0,
    going_on: list[Driver] | None = None,
) -> tuple[dict[str, Any], list[Driver]]:
    """Drive ``games`` games: flat out (closed loop) or, with ``rate``, an offered rate of
    ``rate`` commands per second in all (open loop, each game 1/games of it, the games'
    schedules spread evenly over one interval). The games are tasks of one event loop
    (uvloop when installed) in a thread of their own; this thread reports progress.
    New games are set up, or, with ``going_on``, the games of an earlier run go on where
    they are. Returns the figures and the games."""
    speed = SpeedProbe()
    disk = DiskProbe(REPO_ROOT / ".bench")
    reader = Reader(url, pool_size=4)
    if going_on:
        drivers = going_on
        for d in drivers:
            d.new_run(reader)
    else:
        prefix = f"r{rate:.0f}g" if rate else "g"  # each run its own players
        drivers = [Driver(i, base, reader, seed * 1000 + i, views, prefix) for i in range(games)]
    interval = games / rate if rate else None
    clock: dict[str, float] = {}
    stalls: list[tuple[float, float]] = []
    set_up = threading.Event()
    failure: list[BaseException] = []

    def first_at(index: int) -> float:
        """When game ``index`` starts: the games start one after another over the first
        half of the warm-up (each player's first command, which creates his command log,
        goes through the route), so that at the window's start they are at every point of
        a deal, as the games of a server that has been up for a while are. (Started
        together, their first deals all ended together, 64 deal ends and next-deal set-ups
        within about a second, and that wave fell at the start of the window.) Open loop: a
        whole number of intervals later than its slot, so the offered commands stay evenly
        spread over an interval. Games that go on from an earlier run are already at every
        point of a deal, and of a game: they all start within the first interval."""
        delay = 0.0 if going_on else warmup / 2 * index / games
        if interval is None:
            return clock["t0"] + delay
        return clock["t0"] + interval * (index / games + math.floor(delay / interval))

    async def drive() -> None:
        if going_on:
            log(f"the {games} games of the closed loop go on, each where that run left it")
        else:
            log(
                f"setting up {games} games over HTTP (4 players each: register, table, seats, start)"
            )
            started = time.perf_counter()
            results = await asyncio.gather(*(d.register() for d in drivers), return_exceptions=True)
            results += await asyncio.gather(
                *(d.new_game() for d in drivers), return_exceptions=True
            )
            problems = [r for r in results if isinstance(r, BaseException)]
            if problems or any(d.mirror is None for d in drivers):
                raise RuntimeError(f"games could not be set up ({problems[:1]}); see {SERVER_LOG}")
            log(f"  set up in {time.perf_counter() - started:.1f} s")
        # The load generator's own garbage collector would stop every game at once (tens
        # of milliseconds for a full collection), then let them all send together: a
        # burst the server never had. It is off while the games are driven.
        gc.collect()
        gc.freeze()
        gc.disable()
        clock["t0"] = t0 = time.perf_counter()
        clock["end"] = t0 + warmup + seconds
        set_up.set()
        watcher = asyncio.create_task(watch_own_loop(stalls, clock["end"]))
        await asyncio.gather(*(d.run(clock["end"], interval, first_at(d.index)) for d in drivers))
        await watcher

    def loop_thread() -> None:
        if nice:  # this thread and the threads it starts (executor, Linux: per thread)
            os.nice(nice)
        try:
            event_loop_runner()(drive())
        except BaseException as exc:  # reported by the caller
            failure.append(exc)
            set_up.set()
        finally:
            gc.enable()
            gc.unfreeze()
            for d in drivers:
                d.close()

    thread = threading.Thread(target=loop_thread, name="load generator", daemon=True)
    thread.start()
    set_up.wait()
    if failure:
        raise failure[0]
    window_start = clock["t0"] + warmup
    window_end = clock["end"]
    log(
        f"driving {games} games for {warmup:.0f} s warm-up + {seconds:.0f} s measured"
        + (
            f", open loop: {rate:.0f} commands/s offered (one per game every {interval * 1000:.0f} ms)"
            if interval
            else ", closed loop: each game sends its next command when the answer is in"
        )
        + (" (each command preceded by GET /deals/{id} as the acting player)" if views else "")
    )
    speed.start(window_end)
    disk.start(window_end)
    while time.perf_counter() < window_start:
        time.sleep(0.05)
    load_before = os.getloadavg()[0]
    cpu.start()
    profiler = profile() if profile else None
    rows_before = count_rows()
    # Progress from counters: scanning the answers' list here, in this process, held the
    # GIL for tens of milliseconds every 5 s and delayed the games' event loop.
    accepted_before = sum(d.accepted for d in drivers)
    last_report = window_start
    while time.perf_counter() < window_end:
        time.sleep(min(0.1, max(0.0, window_end - time.perf_counter())))
        now = time.perf_counter()
        if now - last_report >= 5 or now >= window_end:
            done = sum(d.accepted for d in drivers) - accepted_before
            log(
                f"  {now - window_start:5.1f} s: {done} commands accepted "
                f"({done / (now - window_start):.0f}/s)"
            )
            last_report = now
    cpu_used = cpu.stop()
    cpu_used["load_average_1min_before"] = round(load_before, 2)
    cpu_used["load_average_1min_after"] = round(os.getloadavg()[0], 2)
    rows_after = count_rows()
    thread.join(timeout=60)
    reader.close()

    commands = [row for d in drivers for row in in_window(d.commands, window_start, window_end)]
    accepted = [row[1] for row in commands if row[2] == 200]
    set_up_waits = [row[3] for row in commands if row[3] > 0]
    statuses = Counter(str(row[2]) for row in commands)
    views_rows = [row for d in drivers for row in in_window(d.view_gets, window_start, window_end)]
    mirror_cpu = [
        row[1] for d in drivers for row in in_window(d.mirror_cpu, window_start, window_end)
    ]
    mirror_loads = [
        row[1] for d in drivers for row in in_window(d.mirror_loads, window_start, window_end)
    ]
    between = [
        row[1] for d in drivers for row in in_window(d.between_deals, window_start, window_end)
    ]
    errors: Counter[str] = Counter()
    for d in drivers:
        errors.update(d.errors)
    per_game = [
        sum(1 for row in in_window(d.commands, window_start, window_end) if row[2] == 200)
        for d in drivers
    ]
    events = rows_after - rows_before
    result = {
        "games": games,
        "seconds": seconds,
        "warmup_s": warmup,
        "views": views,
        "games_from": "the previous run" if going_on else "new",
        "load_generator": "one asyncio event loop, raw HTTP/1.1, one connection per game",
        "offered_per_s": rate,
        "commands_sent": len(commands),
        "commands_accepted": len(accepted),
        "commands_per_s": round(len(accepted) / seconds, 1),
        "latency_ms": summary_ms(accepted),
        # A diagnostic, not the target: the accepted commands that no disk stall (a flush of
        # 20 ms or more, DiskProbe) overlapped while they were in flight.
        "latency_clear_of_disk_stalls_ms": summary_ms(
            clear_of(
                [row for row in commands if row[2] == 200],
                disk.stall_spans(window_start, window_end),
            )
        ),
        "latency_all_statuses_ms": summary_ms([row[1] for row in commands]),
        # Open loop: the commands that fell due while their game was still setting up its
        # next deal or game (other requests), and the latency counted from the set-up's end.
        "fell_due_during_set_up": {"n": len(set_up_waits), "waited_ms": summary_ms(set_up_waits)},
        "latency_from_ready_ms": summary_ms([row[1] - row[3] for row in commands if row[2] == 200]),
        "latency_timeline": timeline(commands, window_start, window_end),
        "window_start_perf_counter": window_start,
        "load_generator_stalls": [
            (round(t - window_start, 3), round(late * 1000, 1))
            for t, late in stalls
            if window_start <= t < window_end
        ],
        "slowest": [
            (round(row[0] - window_start, 3), round(row[1] * 1000, 1))
            for row in sorted(commands, key=lambda row: -row[1])[:40]
        ],
        "sent_late_ms": summary_ms(
            [row[1] for d in drivers for row in in_window(d.lateness, window_start, window_end)]
        ),
        "statuses": dict(statuses),
        "errors": dict(errors),
        "error_samples": [s for d in drivers for s in d.error_samples][:10],
        "mirror_mismatches": sum(d.mismatches for d in drivers),
        "accepted_per_game": {
            "min": min(per_game),
            "median": statistics.median(per_game),
            "max": max(per_game),
        },
        "deals_finished_total": sum(d.deals_finished for d in drivers),
        "games_finished_total": sum(d.games_finished for d in drivers),
        "games_finished_by_slice": slice_counts(
            [t for d in drivers for t in d.game_ends], window_start, window_end
        ),
        "between_deals_ms": summary_ms(between),
        "view_gets": {
            "n": len(views_rows),
            "per_s": round(len(views_rows) / seconds, 1),
            "latency_ms": summary_ms([row[1] for row in views_rows if row[2] == 200]),
            "statuses": dict(Counter(str(row[2]) for row in views_rows)),
        },
        "load_generator_own_cost": {
            "move_choice_and_mirror_cpu_us_mean": round(statistics.fmean(mirror_cpu) * 1e6, 1)
            if mirror_cpu
            else None,
            "move_choice_and_mirror_cpu_s_total": round(sum(mirror_cpu), 3),
            "mirror_store_reads": len(mirror_loads),
            "mirror_store_read_ms": summary_ms(mirror_loads),
        },
        "store": {
            "events_written": events,
            "events_per_s": round(events / seconds, 1),
            "events_per_accepted_command": round(events / len(accepted), 2) if accepted else None,
            "stored_events_total": rows_after,
        },
        "cpu": cpu_used,
        "cpu_speed": speed.summary(window_start, window_end),
        "disk_flush": disk.summary(window_start, window_end),
    }
    if profiler is not None:
        result["profile"] = profiler.summary()
    return result, drivers


# --- where the server's CPU goes: py-spy ------------------------------------------------------

#: (label, substring of a py-spy frame's file) checked from the innermost frame outwards: the
#: first match names the component that was running (its callees in other packages count too
#: when they are not listed here, e.g. the standard library's json under eventsourcing).
COMPONENTS = (
    ("psycopg (PostgreSQL driver)", "psycopg"),
    ("engine (domain/)", "domain/"),
    ("views and redaction (projections/)", "projections/"),
    ("eventsourcing library", "eventsourcing/"),
    ("application service (app/application.py)", "app/application.py"),
    ("routes and deps (app/)", "app/"),
    ("pydantic", "pydantic"),
    ("FastAPI / Starlette", "fastapi/"),
    ("FastAPI / Starlette", "starlette/"),
    ("threadpool hand-off (anyio)", "anyio/"),
    ("uvicorn / h11 HTTP", "uvicorn/"),
    ("uvicorn / h11 HTTP", "h11/"),
    ("asyncio event loop", "asyncio/"),
    ("asyncio event loop", "selectors.py"),
)

#: Functions whose inclusive share of the samples is reported.
INCLUSIVE = (
    ("authentication (optional_account)", "optional_account ("),
    ("CanastaApp.submit", "CanastaApp.submit ("),
    ("  get_deal", "CanastaApp.get_deal ("),
    ("  command log read", "CanastaApp._command_log ("),
    ("  engine decide", "decide (domain/rules.py"),
    ("  save (events to PostgreSQL)", "CanastaApp.save ("),
    ("    encode events (transcoder)", "Mapper.to_stored_event ("),
    ("    insert_events", "insert_events ("),
    ("request body parsing (pydantic)", "request_body_to_args ("),
    ("JSON response", "JSONResponse.render ("),
)


def find_py_spy(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    found = shutil.which("py-spy")
    if found:
        return found
    candidate = Path(sys.executable).with_name("py-spy")
    return str(candidate) if candidate.exists() else None


class Profiler:
    """``py-spy record --idle`` of every uvicorn worker during the measured window."""

    def __init__(self, binary: str, pids: list[int], seconds: float, rate: int = 100) -> None:
        self.files = []
        self.procs = []
        folder = REPO_ROOT / ".bench"
        for pid in pids:
            out = folder / f"py-spy-{pid}.txt"
            self.files.append(out)
            cmd = [binary, "record", "--nonblocking", "--idle", "-r", str(rate), "-d", str(max(1, round(seconds))),
                   "-f", "raw", "-o", str(out), "-p", str(pid)]  # fmt: skip
            self.procs.append(
                subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )

    def summary(self) -> dict[str, Any]:
        """Each thread's samples by what it was doing; on-CPU samples by component.

        py-spy's own idle detection does not work here (blocked threads are sampled too),
        so ``--idle`` records everything and a sample counts as waiting when its innermost
        frame is a known blocking call. "On CPU" includes waiting for the GIL. With uvloop
        the event loop's waits are in C and look like work: read its share with care."""
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.terminate()
        kinds: dict[str, Counter[str]] = {}
        pg_waits: Counter[str] = Counter()
        on_cpu: Counter[str] = Counter()
        inclusive: Counter[str] = Counter()
        for path in self.files:
            if not path.exists():
                continue
            for line in path.read_text().splitlines():
                stack, _, count = line.rpartition(" ")
                if not count.isdigit():
                    continue
                n = int(count)
                frames = stack.split(";")
                kind = thread_kind(frames)
                state = waiting_on(frames) or "on CPU"
                kinds.setdefault(kind, Counter())[state] += n
                if kind == "request threads" and state == "waiting for PostgreSQL's reply":
                    if any("insert_events (" in f for f in frames):
                        pg_waits["writes: insert_events (table lock, insert, commit)"] += n
                    elif any("select_events (" in f for f in frames):
                        pg_waits["reads: select_events (aggregates, fast-forward)"] += n
                    else:
                        pg_waits["other queries"] += n
                if state != "on CPU" or kind != "request threads":
                    continue
                label = "other (standard library, interpreter)"
                for frame in reversed(frames):
                    where = frame[frame.rfind("(") + 1 :]
                    hit = next((name for name, key in COMPONENTS if key in where), None)
                    if hit:
                        label = hit
                        break
                on_cpu[label] += n
                for name, key in INCLUSIVE:
                    if any(key in frame for frame in frames):
                        inclusive[name] += n

        def share(n: int, of: int) -> float:
            return round(100 * n / of, 1) if of else 0.0

        cpu = sum(on_cpu.values())
        return {
            "samples": sum(sum(c.values()) for c in kinds.values()),
            "files": [str(p) for p in self.files],
            "threads_percent_of_their_samples": {
                kind: {state: share(v, sum(c.values())) for state, v in c.most_common()}
                for kind, c in sorted(kinds.items())
            },
            "request_threads_postgres_waits_percent": {
                k: share(v, sum(pg_waits.values())) for k, v in pg_waits.most_common()
            },
            "request_threads_on_cpu_by_component": {
                k: share(v, cpu) for k, v in on_cpu.most_common()
            },
            "request_threads_on_cpu_inside": {
                name: share(inclusive[name], cpu) for name, _ in INCLUSIVE
            },
        }


def is_read_model_thread(frames: list[str]) -> bool:
    """A sample of the read-model runners' threads (projections, their subscriptions)."""
    return any("Subscription" in f or "ProjectionRunner" in f for f in frames)


def thread_kind(frames: list[str]) -> str:
    if is_read_model_thread(frames):
        return "read-model runner threads"
    if any("WorkerThread.run" in f for f in frames):
        # FastAPI runs the endpoint and each plain ``def`` dependency (authentication)
        # in the threadpool: a thread in any of them is serving a request.
        serving = any(
            key in f for f in frames for key in ("fastapi/", "starlette/", "(app/", "(domain/")
        )
        return "request threads" if serving else "idle threadpool threads"
    if any("ConnectionPool.worker" in f or "Scheduler.run" in f for f in frames):
        return "connection pools' threads"
    if any("Thread._bootstrap" in f for f in frames):
        return "other threads"
    return "event loop (main thread)"


def waiting_on(frames: list[str]) -> str | None:
    """What a sampled thread is blocked on, or None if it is running."""
    leaf = frames[-1]
    if "select (selectors.py" in leaf:
        return "waiting for sockets"
    if "Connection.wait (psycopg/" in leaf:
        return "waiting for PostgreSQL's reply"
    if "multiprocessing/connection.py" in leaf:  # uvicorn's health-check pipe
        return "waiting (lock, queue or event)"
    if "(threading.py" in leaf and (".wait " in leaf or "acquire" in leaf):
        if any("getconn" in f for f in frames):
            return "waiting for a pooled PostgreSQL connection"
        return "waiting (lock, queue or event)"
    return None


# --- raw inserts: pgbench -------------------------------------------------------------------

INSERT_SQL = "INSERT INTO bench_raw_insert (payload) VALUES (repeat('x', 300));\n"
LOCKED_SQL = (
    "BEGIN;\n"
    "LOCK TABLE bench_raw_insert IN EXCLUSIVE MODE;\n"
    "INSERT INTO bench_raw_insert (payload) VALUES (repeat('x', 300));\n"
    "COMMIT;\n"
)


def find_pgbench() -> str | None:
    for d in PG_BINDIRS:
        if Path(d, "pgbench").exists():
            return str(Path(d, "pgbench"))
    return shutil.which("pgbench")


def pgbench(url: str, script: str, clients: int, seconds: float) -> float:
    """Transactions per second of ``script`` (one transaction per run) with ``clients``."""
    binary = find_pgbench()
    assert binary is not None
    parts = urlsplit(url)
    path = REPO_ROOT / ".bench" / "pgbench.sql"
    path.write_text(script)
    cmd = [
        binary,
        "-n",  # no vacuum of pgbench's own tables (there are none)
        "-f",
        str(path),
        "-c",
        str(clients),
        "-j",
        str(min(clients, os.cpu_count() or 1)),
        "-T",
        str(max(1, round(seconds))),
        "-h",
        parts.hostname or "127.0.0.1",
        "-p",
        str(parts.port or 5432),
        "-U",
        parts.username or "postgres",
        parts.path.lstrip("/"),
    ]
    env = {**os.environ}
    if parts.password:
        env["PGPASSWORD"] = parts.password
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"pgbench failed: {out.stderr.strip()[-500:]}")
    match = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", out.stdout)
    if match is None:
        raise RuntimeError(f"no tps in pgbench's output: {out.stdout[-500:]}")
    return float(match.group(1))


def run_pgbench(url: str, clients: int, seconds: float) -> dict[str, Any]:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_raw_insert")
        conn.execute(
            "CREATE TABLE bench_raw_insert (id bigserial PRIMARY KEY, payload text NOT NULL)"
        )
    counts = sorted({1, clients})
    out: dict[str, Any] = {
        "seconds": seconds,
        "clients": counts,
        "insert_tps": {},
        "locked_tps": {},
    }
    try:
        for n in counts:
            out["insert_tps"][str(n)] = tps = pgbench(url, INSERT_SQL, n, seconds)
            log(f"  single-row INSERT, {n:3d} client(s): {tps:8.0f} tx/s")
        for n in counts:
            out["locked_tps"][str(n)] = tps = pgbench(url, LOCKED_SQL, n, seconds)
            log(
                f"  LOCK TABLE ... IN EXCLUSIVE MODE + INSERT (the library's write path), "
                f"{n:3d} client(s): {tps:8.0f} tx/s"
            )
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS bench_raw_insert")
    return out


# --- replay ---------------------------------------------------------------------------------


def run_replay(url: str, base: str, samples: int, seed: int) -> dict[str, Any]:
    """Play a whole 5000-point classic game, then replay random deals to random steps."""
    settings = Settings(database_url=url)
    app = CanastaApp(env=eventsourcing_env(settings))
    started = time.perf_counter()
    rng = random.Random(seed)
    # The shuffles are random (the server's own seeds): a game may end after two deals.
    # Keep the longest of up to four games, stopping at the first of MIN_DEALS or more.
    table = None
    for _ in range(4):
        table_id = new_table(app, "classic", 4)  # players player0..player3
        played_game = play_game(app, table_id, rng, max_deals=200)
        if table is None or len(played_game.deals) > len(table.deals):
            table = played_game
        if len(table.deals) >= MIN_DEALS:
            break
    assert table is not None
    table_id = table.id
    deals = [UUID(d) for d in table.deals]
    lengths = {d: app.get_deal(d).version for d in deals}
    app.close()
    played = time.perf_counter() - started
    log(
        f"  played a {table.target}-point game ({played:.1f} s in all): {len(deals)} deals, "
        f"{sum(lengths.values())} deal events, status {table.status}, totals {table.totals}"
    )

    points = [(d := rng.choice(deals), rng.randint(1, lengths[d])) for _ in range(samples)]
    cold_settings = settings.model_copy(update={"aggregate_cache_maxsize": 0})
    cold = CanastaApp(env=eventsourcing_env(cold_settings))
    first_started = time.perf_counter()
    cold.get_deal(points[0][0], version=points[0][1])  # the very first read opens connections
    first = time.perf_counter() - first_started
    in_process = []
    for deal_id, step in points:
        t = time.perf_counter()
        deal = cold.get_deal(deal_id, version=step)
        in_process.append(time.perf_counter() - t)
        assert deal.version == step
    whole_game = []
    for _ in range(5):
        t = time.perf_counter()
        rebuilt = cold.get_table(table_id)
        for rebuilt_deal in rebuilt.deals:
            cold.get_deal(UUID(rebuilt_deal))
        whole_game.append(time.perf_counter() - t)
    cold.close()

    over_http: dict[str, list[float]] = {"player": [], "spectator": []}
    client = RawClient(base)
    try:
        r = client.request("POST", "/players", {"name": "player1"})  # seat 1 of that game
        r.raise_for_status()
        player = {"Authorization": f"Bearer {r.json()['token']}"}
        for deal_id, step in points:
            for who, headers in (("player", player), ("spectator", {})):
                t = time.perf_counter()
                r = client.request("GET", f"/deals/{deal_id}/replay?step={step}", None, headers)
                over_http[who].append(time.perf_counter() - t)
                r.raise_for_status()
                view = r.json()
                assert view["step"] == step
                assert (view["hand"] is None) == (who == "spectator")
    finally:
        client.close()
    return {
        "game": {
            "target": table.target,
            "status": table.status,
            "deals": len(deals),
            "deal_events": sum(lengths.values()),
            "longest_deal": max(lengths.values()),
            "play_s": round(played, 2),
        },
        "samples": samples,
        "first_read_ms": round(first * 1000, 2),
        "cold_get_deal_version_ms": summary_ms(in_process),
        "http_replay_player_ms": summary_ms(over_http["player"]),
        "http_replay_spectator_ms": summary_ms(over_http["spectator"]),
        "cold_rebuild_whole_game_ms": summary_ms(whole_game),
    }


def idle_round_trips(base: str, n: int = 40) -> dict[str, Any]:
    """Sequential requests on one keep-alive connection to the idle server: the floor of
    any latency (and a check for the 40 ms Nagle/delayed-ACK stall, see uvicorn_nodelay)."""
    client = RawClient(base)
    try:
        r = client.request("POST", "/players", {"name": f"probe{os.getpid()}"})
        r.raise_for_status()
        headers = {"Authorization": f"Bearer {r.json()['token']}"}
        r = client.request("POST", "/tables", {"entry": "classic", "players": 4}, headers)
        r.raise_for_status()
        table = r.json()["id"]
        out: dict[str, Any] = {}
        for name, path in (("health", "/health"), ("table", f"/tables/{table}")):
            times = []
            for _ in range(n):
                started = time.perf_counter()
                client.request("GET", path).raise_for_status()
                times.append(time.perf_counter() - started)
            out[name] = summary_ms(times[5:])
        return out
    finally:
        client.close()


# --- the report ----------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "MET " if ok else "MISSED"


def listed(items: Iterable[str], most: int = 12) -> str:
    """The first ``most`` items, comma-separated, and " ..." if there were more."""
    texts = list(items)
    return ", ".join(texts[:most]) + (" ..." if len(texts) > most else "")


def print_load(report: dict[str, Any], load: dict[str, Any]) -> None:
    lat = load["latency_ms"]
    rate = load["commands_per_s"]
    print("-" * 78)
    offered = load.get("offered_per_s")
    mode = (
        f"open loop, {offered:.0f} commands/s offered, latency from each command's due time"
        if offered
        else "closed loop (flat out: latency ~ games / throughput, Little's law)"
    )
    print(
        f"POST /deals/{{id}}/commands, {load['games']} concurrent games, "
        f"{load['seconds']:.0f} s, load generator: one asyncio event loop\n  {mode}"
        + (
            "; the closed loop's games go on"
            if load.get("games_from") == "the previous run"
            else ""
        )
    )
    if offered:
        # Open loop: the server cannot accept more than is offered. It kept up when it
        # accepted what was offered, but for the commands still in flight at the window's end.
        kept_up = offered >= TARGET_COMMANDS_PER_S and rate >= 0.99 * offered
        print(
            f"  accepted commands   {rate:9.1f} /s     target >= {TARGET_COMMANDS_PER_S:.0f}/s  "
            f"{verdict(kept_up)}   ({rate / offered:.1%} of the {offered:.0f}/s offered)"
        )
    else:
        print(
            f"  accepted commands   {rate:9.1f} /s     target >= {TARGET_COMMANDS_PER_S:.0f}/s  "
            f"{verdict(rate >= TARGET_COMMANDS_PER_S)}"
        )
    print(f"  latency p50         {lat.get('p50', float('nan')):9.1f} ms")
    # Flat out, the latency is the queue of the games' commands in flight: about games /
    # throughput (Little's law). The latency target is judged together with the throughput
    # target, at the rate offered in the open loop.
    judged = (
        f"target <  {TARGET_P99_MS:.0f} ms    {verdict(lat.get('p99', 1e9) < TARGET_P99_MS)}"
        if offered
        else "(queueing at full load; the p99 target is judged at the offered rate below)"
    )
    print(f"  latency p99         {lat.get('p99', float('nan')):9.1f} ms     {judged}")
    print(f"  latency p90/max     {lat.get('p90', 0):9.1f} / {lat.get('max', 0):.1f} ms")
    clear = load.get("latency_clear_of_disk_stalls_ms") or {}
    if 0 < clear.get("n", 0) < lat.get("n", 0):
        print(
            f"  p99 of the {clear['n']} of {lat['n']} commands no disk stall overlapped: "
            f"{clear['p99']:.1f} ms (a diagnostic: the target is judged on all of them)"
        )
    slices = load.get("latency_timeline") or []
    if slices:
        print("  p99 by slice of the window (ms):" + "".join(f"{int(s['p99']):>4}" for s in slices))
    ends = load.get("games_finished_by_slice") or []
    if any(ends):  # a game's end sets up a new table, seats and first deal: route work
        print("  games ended, by slice:          " + "".join(f"{n:>4}" for n in ends))
    late = load.get("sent_late_ms") or {}
    if late.get("n"):
        print(
            f"  sent after their due time (the previous answer was late, or the load generator busy): "
            f"p50 {late['p50']:.1f} ms, p99 {late['p99']:.1f} ms"
        )
    unready = load.get("fell_due_during_set_up") or {}
    if unready.get("n"):
        print(
            f"  {unready['n']} commands fell due while their game was setting up its next deal "
            f"(waited p50 {unready['waited_ms']['p50']:.1f}, max {unready['waited_ms']['max']:.1f} ms); "
            f"p99 counted from the set-up's end: {load['latency_from_ready_ms']['p99']:.1f} ms "
            "(a diagnostic: the target counts every command from its due time)"
        )
    print(
        f"  statuses {load['statuses']}  errors {load['errors'] or 'none'}  "
        f"mirror mismatches {load['mirror_mismatches']}"
    )
    if load["views"]:
        v = load["view_gets"]
        print(
            f"  GET /deals/{{id}} before each command: {v['per_s']:.0f}/s, "
            f"p50 {v['latency_ms'].get('p50', 0):.1f} ms, p99 {v['latency_ms'].get('p99', 0):.1f} ms"
        )
    store = load["store"]
    print(
        f"  events written      {store['events_per_s']:9.1f} /s     "
        f"({store['events_per_accepted_command']} per accepted command)"
    )
    print(
        f"  deals finished {load['deals_finished_total']}, games finished "
        f"{load['games_finished_total']}; next-deal set-up p50 "
        f"{load['between_deals_ms'].get('p50', 0):.1f} ms"
    )
    own = load["load_generator_own_cost"]
    print(
        f"  load generator's own move choice + mirror: "
        f"{own['move_choice_and_mirror_cpu_us_mean']} us CPU per command; "
        f"{own['mirror_store_reads']} store reads (p50 "
        f"{own['mirror_store_read_ms'].get('p50', 0):.1f} ms)"
    )
    cpu = load["cpu"]
    print(
        "  CPU over the window (cores busy): "
        + ", ".join(
            f"{k} {cpu[f'{k}_cores']:.2f}"
            for k in ("server", "postgres", "load_generator", "other", "idle")
        )
    )
    if "postgres_sessions_last_seen" in report:
        print(
            f"  PostgreSQL sessions open on the benchmark database at the window's end: "
            f"{report['postgres_sessions_last_seen']}"
        )
    detail = cpu.get("cores_by_process", {}).get("postgres")
    if detail:
        print(
            "  PostgreSQL's cores by process: "
            + ", ".join(f"{k} {v:.2f}" for k, v in list(detail.items())[:6])
        )
    print(
        "  CPU per accepted command: "
        + ", ".join(
            f"{k} {cpu[f'{k}_cpu_s'] / max(1, load['commands_accepted']) * 1e3:.2f} ms"
            for k in ("server", "postgres", "load_generator")
        )
    )
    if "read_models_caught_up_s" in load:
        caught_up = load["read_models_caught_up_s"]
        print(
            "  read models caught up with the run "
            + (f"{caught_up:.1f} s after its end" if caught_up is not None else "NOT within 300 s")
            + " (the next run starts after that)"
        )
    speed = load.get("cpu_speed") or {}
    if speed:
        print(
            f"  core speed: a fixed piece of Python work took {speed['median_us']:.0f} us CPU "
            f"(median of {speed['probes']}; fastest {speed['fastest_us']:.0f}, slowest "
            f"{speed['slowest_us']:.0f}): compare runs with it, this machine's cores vary"
        )
    disk = load.get("disk_flush") or {}
    if disk:
        stalls = disk["stalls"]
        print(
            f"  disk: an 8 KiB write made durable (fdatasync) every 50 ms took "
            f"{disk['p50_ms']:.2f} ms (median of {disk['flushes']}), at most "
            f"{disk['max_ms']:.0f} ms; {len(stalls)} took {disk['stall_ms']:.0f} ms or more"
            + (
                " (s into the window: ms, and the MB of dirty pages the kernel wrote back "
                "meanwhile, if 1 or more) "
                + listed(
                    f"{t:.1f}: {ms:.0f}"
                    + (f" ({mb:.0f} MB written back)" if mb is not None and mb >= 1 else "")
                    for t, ms, mb in stalls
                )
                if stalls
                else ""
            )
        )
        print("        every commit waits for such a flush: a stall here stalls every command")
        writebacks = disk.get("writebacks")
        if writebacks is not None:
            print(
                f"        the kernel wrote back {disk['writeback_mb']:.0f} MB or more of dirty "
                f"pages at once {len(writebacks)} time{'' if len(writebacks) == 1 else 's'}"
                + (
                    " (s into the window: MB) "
                    + listed(f"{t:.1f}: {mb:.0f}" for t, mb in writebacks)
                    if writebacks
                    else ""
                )
            )
    if cpu["other_cores"] > 0.1 * cpu["cores"]:
        print(
            f"  WARNING: other processes used {cpu['other_cores']:.2f} cores during the "
            "window: the machine was not quiet, the figures are pessimistic"
        )
    prof = load.get("profile")
    if prof:
        print(f"  uvicorn workers' threads (py-spy --idle, {prof['samples']} samples):")
        for kind, states in prof["threads_percent_of_their_samples"].items():
            print(f"    {kind}: " + ", ".join(f"{k} {v:.0f}%" for k, v in states.items()))
        print(
            "  request threads' waits for PostgreSQL: "
            + ", ".join(
                f"{k} {v:.0f}%" for k, v in prof["request_threads_postgres_waits_percent"].items()
            )
        )
        print("  request threads' on-CPU samples by component (innermost listed package):")
        for name, pct in prof["request_threads_on_cpu_by_component"].items():
            print(f"    {pct:5.1f}%  {name}")
        print("  request threads' on-CPU samples inside:")
        for name, pct in prof["request_threads_on_cpu_inside"].items():
            print(f"    {pct:5.1f}%  {name}")


def print_report(report: dict[str, Any], path: Path) -> None:
    cfg = report["config"]
    print()
    print("=" * 78)
    print("canasta-ledger server benchmark (PostgreSQL, uvicorn, load generator: one machine)")
    print(
        f"  {cfg['cores']} cores; uvicorn --workers {cfg['workers']}, pool {cfg['pool_size']} "
        f"connections/worker, threadpool {cfg['threads'] or 'default (8)'}; "
        f"{cfg['games']} games"
    )
    if cfg.get("read_models") == "process":
        print("  read models: one `canasta project` process (workers: CANASTA_READ_MODELS=off)")
    else:
        print("  read models: in a thread of one elected worker (CANASTA_READ_MODELS=auto)")
    extras = [m for m, present in cfg["uvicorn_extras"].items() if present]
    print(
        f"  uvicorn extras: {', '.join(extras) or 'none (pure-Python h11 and asyncio)'}; "
        f"synchronous_commit {cfg['synchronous_commit']}"
        + ("; experiment: TCP_NODELAY fix" if cfg["nodelay_fix"] else "")
    )
    if "interpreter" in cfg:
        print(
            f"  {described(cfg['python'], cfg['interpreter'])} "
            "(every process of the run: workers, read models, load generator)"
        )
    for name in cfg["patches"]:
        print(f"  experiment --patch {name}: {PATCHES[name]}")
    probe = report.get("idle_round_trip_ms")
    if probe:
        print(
            f"  idle server, one connection: GET /health p50 {probe['health']['p50']:.1f} ms, "
            f"GET /tables/{{id}} p50 {probe['table']['p50']:.1f} ms"
            + (
                "  <- ~40 ms: Nagle + delayed ACK (see benchmarks/uvicorn_nodelay.py)"
                if probe["health"]["p50"] > 30
                else ""
            )
        )
    for key in ("load", "load_at_rate"):
        if report.get(key):
            print_load(report, report[key])
    load = report.get("load")
    pg = report.get("pgbench")
    if pg and load:
        print("-" * 78)
        print(f"raw inserts into the same PostgreSQL (pgbench, {pg['seconds']:.0f} s each)")
        for n, tps in pg["insert_tps"].items():
            print(
                f"  single-row INSERT, {int(n):3d} client(s): {tps:8.0f} tx/s   "
                f"commands/s / inserts/s = {load['commands_per_s'] / tps:.3f}"
            )
        for n, tps in pg["locked_tps"].items():
            print(
                f"  + LOCK TABLE EXCLUSIVE (library's write path), {int(n):3d} client(s): "
                f"{tps:8.0f} tx/s   ratio {load['commands_per_s'] / tps:.3f}"
            )
    replay = report.get("replay")
    if replay:
        g = replay["game"]
        print("-" * 78)
        print(
            f"replay a finished {g['target']}-point classic game ({g['deals']} deals, "
            f"{g['deal_events']} deal events, longest deal {g['longest_deal']}) to random steps, "
            f"{replay['samples']} samples"
        )
        for key, label in (
            ("cold_get_deal_version_ms", "cold app, get_deal(id, version=k)"),
            ("http_replay_player_ms", "GET /deals/{id}/replay?step=k (player)"),
            ("http_replay_spectator_ms", "GET /deals/{id}/replay?step=k (spectator)"),
        ):
            s = replay[key]
            print(
                f"  {label:42s} median {s['p50']:6.1f}  p99 {s['p99']:6.1f}  max {s['max']:6.1f} ms"
                f"   target < {TARGET_REPLAY_MS:.0f} ms  {verdict(s['p99'] < TARGET_REPLAY_MS)}"
            )
        s = replay["cold_rebuild_whole_game_ms"]
        print(f"  cold rebuild of the whole game (table + every deal): median {s['p50']:.1f} ms")
    print("=" * 78)
    print(f"JSON: {path}")


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
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
        "--read-models", choices=("process", "workers"), default="process",
        help="where the read-model projections run: 'process' (as README's production set-up: "
        "the workers run with CANASTA_READ_MODELS=off and one `canasta project` process runs "
        "them; its CPU counts as the server's) or 'workers' (CANASTA_READ_MODELS=auto: the "
        "uvicorn workers elect one of them, which runs them in a thread)",
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
        "--patch", action="append", choices=sorted(PATCHES), default=[],
        help="experiment on the server's code, in the server processes only: "
        + "; ".join(f"{k}: {v}" for k, v in PATCHES.items()),
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
        help="sample the uvicorn workers with py-spy during the window (pip install py-spy)",
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
    args = parser.parse_args(argv)

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
            "patches": args.patch,
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
        args.patch, args.read_models,
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
                profile = lambda: Profiler(spy, workers, args.seconds)  # noqa: E731
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
                report["load"]["read_models_caught_up_s"] = wait_for_read_models(url)
            if args.rate:
                report["load_at_rate"], _ = run_load(
                    server.base, url, args.games, args.seconds, args.warmup, args.views,
                    args.seed + 1, cpu, count_rows, profile if args.skip_closed else None,
                    args.rate, args.load_generator_nice, games,
                )  # fmt: skip
                report["load_at_rate"]["read_models_caught_up_s"] = wait_for_read_models(url)
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


if __name__ == "__main__":
    sys.exit(main())
