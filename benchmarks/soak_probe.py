"""The soak benchmark's probe inside the server processes (``benchmarks.soak``, not a test).

It only watches: it replaces none of the server's code. ``watch()`` wraps the constructors of
the server's long-lived objects (the application service, the bots' runner, the streams'
follower, the per-client limits, the metrics' middleware) to keep a weak reference to each
instance, and a thread of its own writes, every ``CANASTA_SOAK_SAMPLE_SECONDS``, one JSON line
of their in-memory sizes to ``$CANASTA_SOAK_DIR/ROLE-PID.jsonl``: the aggregate cache, the
remembered tokens, the library's fast-forward locks, the bots' tables and deals, the follower's
history of recent deals, the rate-limit counters and stream counts, the metrics' label
children, and the interpreter's own figures (objects the collector tracks, allocated blocks,
threads). Every ``TYPES_EVERY`` samples it also counts the tracked objects by type
(``ROLE-PID.types.json``, the first count and the latest), and, with
``CANASTA_SOAK_TRACEMALLOC=N`` (frames), compares a ``tracemalloc`` snapshot with the one taken
after ``CANASTA_SOAK_WARMUP_SECONDS`` (``ROLE-PID.tracemalloc.txt``, the top 25 growths).

The server processes run through it: ``uvicorn benchmarks.soak_probe:soak_app --factory``
(``app.main``'s app, unchanged) and ``python -m benchmarks.soak_probe bots|project`` (the
``canasta`` command line, unchanged).
"""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
import time
import tracemalloc
import weakref
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

DIR_ENV = "CANASTA_SOAK_DIR"
SECONDS_ENV = "CANASTA_SOAK_SAMPLE_SECONDS"
WARMUP_ENV = "CANASTA_SOAK_WARMUP_SECONDS"
TRACEMALLOC_ENV = "CANASTA_SOAK_TRACEMALLOC"
#: "1": each count of objects by type is taken again after a full collection (what is live,
#: not garbage waiting for the collector); it changes what it measures (RSS): diagnosis only.
COLLECT_ENV = "CANASTA_SOAK_COLLECT"
#: Objects are counted by type (and tracemalloc compared) every this many samples.
TYPES_EVERY = 6

_instances: dict[str, list[weakref.ref[Any]]] = {}


def _remember(kind: str, obj: Any) -> None:
    _instances.setdefault(kind, []).append(weakref.ref(obj))


def _living(kind: str) -> list[Any]:
    return [obj for ref in _instances.get(kind, []) if (obj := ref()) is not None]


def _wrap(cls: type, kind: str) -> None:
    original = cls.__init__  # type: ignore[misc]

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        _remember(kind, self)

    cls.__init__ = init  # type: ignore[misc]


def watch() -> None:
    """Keep a weak reference to every instance of the classes whose sizes are sampled."""
    from app.bot_runner import BotRunner
    from app.fanout import EventHub
    from app.observability import Observe
    from app.rate_limits import ClientLimits
    from app.services.core import AppCore

    _wrap(AppCore, "app")
    _wrap(BotRunner, "bots")
    _wrap(EventHub, "hub")
    _wrap(ClientLimits, "limits")
    _wrap(Observe, "observe")


def _app_sizes(app: Any) -> dict[str, Any]:
    from app.infra.library import postgres_pool

    repo = app.repository
    out: dict[str, Any] = {
        "aggregate_cache": len(repo.cache.cache) if repo.cache is not None else 0,
        "fastforward_locks": len(repo._fastforward_locks_cache.cache)
        + len(repo._fastforward_locks_inuse),
        "tokens": len(getattr(app, "_token_names", ())),
        "recorder_texts": len(getattr(app.recorder, "_texts", ())),
    }
    commit = getattr(app, "group_commit", None)
    if commit is not None:
        out["commit_pending"] = len(commit._pending)
    pool = postgres_pool(app.factory)
    if pool is not None:
        stats = pool.get_stats()
        out["pool_size"] = stats.get("pool_size", 0)
    return out


def _bots_sizes(runner: Any) -> dict[str, Any]:
    return {
        "tables": len(runner._tables),
        "deal_tables": len(runner._deal_table),
        "deals": len(runner._deals),
        "due": len(runner._due),
        "waiting": len(getattr(runner, "_waiting", ())),  # since 4 December 2026
    }


def _hub_sizes(hub: Any) -> dict[str, Any]:
    with hub._lock:
        histories = list(hub._history.values())
        streams = sum(len(subs) for subs in hub._subscribers.values())
        followed = len(hub._subscribers)
    return {
        "streams": streams,
        "followed": followed,
        "history_aggregates": len(histories),
        "history_events": sum(len(h) for h in histories),
        "history_encodings": sum(len(item.encodings) for h in histories for item in h),
    }


def _limits_sizes(limits: Any) -> dict[str, Any]:
    return {
        "counters": len(limits.limiter.storage.counts),
        "open_stream_keys": len(limits.open_streams),
    }


def _observe_sizes(observe: Any) -> dict[str, Any]:
    return {"timers": len(observe._timers), "answers": len(observe._answers)}


SIZES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "app": _app_sizes,
    "bots": _bots_sizes,
    "hub": _hub_sizes,
    "limits": _limits_sizes,
    "observe": _observe_sizes,
}


def sample() -> dict[str, Any]:
    """One sample of this process: every watched object's sizes, and the interpreter's."""
    from app.rate_limits import address_key

    out: dict[str, Any] = {
        "t": time.time(),
        "gc_objects": len(gc.get_objects()),
        "allocated_blocks": sys.getallocatedblocks(),
        "threads": threading.active_count(),
        "address_keys": address_key.cache_info().currsize,
    }
    if tracemalloc.is_tracing():
        out["traced_bytes"] = tracemalloc.get_traced_memory()[0]
    for kind, sizes in SIZES.items():
        for i, obj in enumerate(_living(kind)):
            try:
                for name, value in sizes(obj).items():
                    out[f"{kind}{i or ''}.{name}"] = value
            except Exception as exc:  # a private name moved: say so, sample the rest
                out[f"{kind}{i or ''}.error"] = repr(exc)[:200]
    return out


class Sampler:
    """The probe's thread (see the module's documentation)."""

    def __init__(self, role: str, directory: Path, seconds: float, warmup: float, frames: int):
        self.base = directory / f"{role}-{os.getpid()}"
        self.seconds = seconds
        self.warmup = warmup
        self.frames = frames
        self.first_types: dict[str, int] | None = None
        self.baseline: tracemalloc.Snapshot | None = None
        self.started = time.monotonic()

    def start(self) -> None:
        if self.frames:
            tracemalloc.start(self.frames)
        threading.Thread(target=self._run, name="soak-probe", daemon=True).start()

    def _run(self) -> None:
        n = 0
        while True:
            time.sleep(self.seconds)
            n += 1
            with self.base.with_suffix(".jsonl").open("a") as f:
                f.write(json.dumps(sample()) + "\n")
            warm = time.monotonic() - self.started >= self.warmup
            if warm and (self.first_types is None or n % TYPES_EVERY == 0):
                self._types()
                self._tracemalloc()

    def _types(self) -> None:
        objects = gc.get_objects()
        counts = Counter(type(o).__qualname__ for o in objects)
        tuples = Counter(
            ",".join(type(x).__qualname__ for x in o[:3])
            for o in objects[-200000:]
            if type(o) is tuple
        )
        del objects
        collected = None
        if os.environ.get(COLLECT_ENV) == "1":
            unreachable = gc.collect()
            live = Counter(type(o).__qualname__ for o in gc.get_objects())
            collected = {"unreachable": unreachable, "tuple": live["tuple"], "all": live.total()}
        now = dict(counts.most_common(400))
        if self.first_types is None:
            self.first_types = now
        grown = {
            name: (self.first_types.get(name, 0), count)
            for name, count in now.items()
            if count > self.first_types.get(name, 0)
        }
        top = sorted(grown.items(), key=lambda kv: kv[1][0] - kv[1][1])[:40]
        self.base.with_suffix(".types.json").write_text(
            json.dumps(
                {
                    "t": time.time(),
                    "grown": dict(top),
                    "after_full_collection": collected,
                    "tuples_by_first_items": dict(tuples.most_common(15)),
                },
                indent=1,
            )
        )

    def _tracemalloc(self) -> None:
        if not tracemalloc.is_tracing():
            return
        snapshot = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(False, tracemalloc.__file__)]
        )
        if self.baseline is None:
            self.baseline = snapshot
            return
        key = "traceback" if self.frames > 1 else "lineno"
        lines = [f"{time.ctime()}: the top growths since the baseline"]
        for stat in snapshot.compare_to(self.baseline, key)[:25]:
            lines.append(f"{stat.size_diff / 1024:+.1f} KiB, {stat.count_diff:+d} blocks")
            lines.extend("    " + line for line in stat.traceback.format())
        self.base.with_suffix(".tracemalloc.txt").write_text("\n".join(lines) + "\n")


def install(role: str) -> None:
    """Watch the classes and start the sampler, if the soak benchmark set its directory."""
    directory = os.environ.get(DIR_ENV)
    if not directory:
        return
    watch()
    Sampler(
        role,
        Path(directory),
        float(os.environ.get(SECONDS_ENV, "10")),
        float(os.environ.get(WARMUP_ENV, "30")),
        int(os.environ.get(TRACEMALLOC_ENV, "0") or 0),
    ).start()


def soak_app() -> Any:
    """``uvicorn benchmarks.soak_probe:soak_app --factory``: ``app.main``'s app, watched."""
    install("web")
    from app.main import app_from_environment

    return app_from_environment()


def main(argv: list[str]) -> int:
    """``python -m benchmarks.soak_probe bots|project [ARGS]``: that ``canasta`` command,
    watched."""
    install(argv[0])
    from app.cli import main as canasta

    return canasta(argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
