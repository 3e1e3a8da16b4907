"""Probes of the machine during a run: its cores' speed, its disk's flushes."""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from benchmarks.server.stats import percentile


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
