"""Experiments in the server processes (``--patch``)."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Environment variable read by ``bench_app`` (``--patch``).
PATCHES_ENV = "CANASTA_BENCH_PATCHES"


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
    """``uvicorn benchmarks.server.experiments:bench_app --factory``: ``app.main``'s app
    with the experiments of ``$CANASTA_BENCH_PATCHES`` (comma-separated ``PATCHES``) applied from
    outside (no server file changed)."""
    from app.main import create_app

    _apply_patches(os.environ.get(PATCHES_ENV, "").split(","))
    return create_app()
