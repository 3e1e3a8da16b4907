"""Experiments in the server processes (``--experiment``): settings of the interpreter and
observers that only watch; none of them replaces or wraps any of the server's code."""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Environment variable read by ``bench_app`` (``--experiment``).
EXPERIMENTS_ENV = "CANASTA_BENCH_EXPERIMENTS"

#: ``--experiment`` choices: what each does in the server processes.
EXPERIMENTS = {
    "switch-interval": "sys.setswitchinterval(0.0005) in the workers (default 0.005 s): a "
    "thread that holds the events table's lock waits less for the GIL",
    "gc-log": "log the older generations' garbage collections of the workers (/tmp/gc-PID.log)",
    "stall-log": "a thread of each worker wakes every 2 ms and logs when it got the CPU and "
    "the GIL more than 15 ms late, and a timer of its event loop when the loop ran it more "
    "than 15 ms late (/tmp/stall-PID.log, time.perf_counter: the load generator's clock)",
}

#: The event-loop watchers started by ``stall-log`` (a task must be referenced to live on).
_watchers: list[asyncio.Task[None]] = []


def apply_experiments(names: Sequence[str]) -> None:
    """Apply the experiments ``names`` (of ``EXPERIMENTS``) in this, a server, process."""
    if "switch-interval" in names:
        sys.setswitchinterval(0.0005)
    if "gc-log" in names:
        gc.callbacks.append(_gc_timer(Path(f"/tmp/gc-{os.getpid()}.log")))
    if "stall-log" in names:
        stall_path = Path(f"/tmp/stall-{os.getpid()}.log")
        threading.Thread(target=_watch_thread, args=(stall_path,), daemon=True).start()
        try:  # uvicorn calls the factory from its event loop: watch that loop too
            loop = asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            _watchers.append(loop.create_task(_watch_loop(stall_path)))


def _gc_timer(log_path: Path) -> Any:
    """A ``gc.callbacks`` entry that logs the older generations' and the slow collections."""
    started: list[float] = []

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

    return timing


def _watch_thread(stall_path: Path) -> None:
    """Wake every 2 ms; log when this thread got the CPU and the GIL more than 15 ms late."""
    while True:
        before = time.perf_counter()
        time.sleep(0.002)
        late = (time.perf_counter() - before - 0.002) * 1000
        if late > 15:
            with stall_path.open("a") as f:
                f.write(f"{time.perf_counter():.3f} stall {late:.1f} ms\n")


async def _watch_loop(stall_path: Path) -> None:
    """Log when the worker's event loop ran a 2 ms timer more than 15 ms late."""
    while True:
        before = time.perf_counter()
        await asyncio.sleep(0.002)
        late = (time.perf_counter() - before - 0.002) * 1000
        if late > 15:
            with stall_path.open("a") as f:
                f.write(f"{time.perf_counter():.3f} loop-late {late:.1f} ms\n")


def bench_app() -> Any:
    """``uvicorn benchmarks.server.experiments:bench_app --factory``: ``app.main``'s app,
    unchanged, in a process with the experiments of ``$CANASTA_BENCH_EXPERIMENTS``
    (comma-separated names of ``EXPERIMENTS``) applied."""
    from app.main import create_app

    apply_experiments(os.environ.get(EXPERIMENTS_ENV, "").split(","))
    return create_app()
