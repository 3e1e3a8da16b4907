"""CPU accounting from /proc: per process, per group of processes, the whole machine."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    if "app.cli project" in title:
        return "read models (canasta project)"
    if "uvicorn" in title:
        return "uvicorn supervisor"
    return "main process"
