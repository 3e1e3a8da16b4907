"""Where the server's CPU goes: py-spy."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.server.config import REPO_ROOT

# --- where the server's CPU goes: py-spy ------------------------------------------------------

#: (label, substring of a py-spy frame's file) checked from the innermost frame outwards: the
#: first match names the component that was running (its callees in other packages count too
#: when they are not listed here, e.g. the standard library's json under eventsourcing).
COMPONENTS = (
    ("psycopg (PostgreSQL driver)", "psycopg"),
    ("engine (domain/)", "domain/"),
    ("views and redaction (projections/)", "projections/"),
    ("eventsourcing library", "eventsourcing/"),
    ("application service (app/services/)", "app/services/"),
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
    ("  engine decide", "decide (domain/rules/__init__.py"),
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
