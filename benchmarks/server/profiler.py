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

#: The layers of a command in a uvicorn worker, each a name and substrings of py-spy frames
#: ("function (file:line)"). A sample is the layer of its innermost frame that matches one;
#: a sample with none of them is tried against ``WORKER_FALLBACK``, then counted as the event
#: loop's own work. A sample that passes through ``Idempotency`` is a request between deals
#: (the command lane answers commands before it), whatever its frames.
WORKER_LAYERS = (
    ("metrics (prometheus-client)", ("prometheus_client/",)),
    ("logging", ("logging/",)),
    ("the answer (the sender's events, JSON)", ("render (app/command_io.py", "._answer_body")),
    ("the group commit's hand-off (event loop side)", ("(app/infra/group_commit.py",)),
    (
        "recording: the library's events, the hash chain, the command log",
        ("Deal.record (", "trigger_event (", "CommandLog.record (", "AppCore._pending ("),
    ),
    ("deciding: the rules on a clone of the state", ("decide (domain/rules", "DealState.clone (")),
    ("copies out of the aggregate cache", ("AppCore._cached_copy", "._read_from_cache (")),
    ("the token check", ("(app/auth.py", "known_token (")),
    ("parsing the command (JSON, pydantic, digest)", ("read_command (", "submission (app/")),
    ("the rest of the service (expect, clocks, checks)", ("CommandService.", "submit_from_cache (")),
    ("the command lane", ("(app/command_lane.py",)),
    ("the observability middleware", ("(app/observability.py",)),
    ("the security headers", ("(app/security_headers.py",)),
    (
        "the other middlewares (limits, outage, HEAD, pages, start-up)",
        ("(app/limits.py", "(app/outage.py", "(app/http_methods.py", "(app/web_ui.py", "(app/main.py"),
    ),
    ("FastAPI's and Starlette's own layers", ("fastapi/", "starlette/", "opentelemetry", "(trace/")),
    (
        "uvicorn's HTTP (httptools' callbacks, a task a request, writing the answer)",
        ("uvicorn/protocols", "uvicorn/middleware", "httptools"),
    ),
)  # fmt: skip
WORKER_FALLBACK = (("requests between deals (FastAPI's routes)", ("(app/", "(domain/", "(projections/", "eventsourcing/", "psycopg")),)  # fmt: skip
BETWEEN_DEALS = "requests between deals (FastAPI's routes)"
EVENT_LOOP = "the event loop's own work (uvloop, asyncio)"

#: The worker's threads other than the event loop's, by a frame of their stacks.
WORKER_THREADS = (
    ("thread: the group committer (writing to PostgreSQL)", "GroupCommit._run"),
    ("thread: the store's follower", "EventHub"),
    ("thread: the threadpool (requests between deals)", "WorkerThread"),
)

#: The parts of the read models' process (``canasta project``).
READ_MODEL_PARTS = (
    ("decoding stored events", ("Mapper.to_domain_event", "JSONTranscoder.decode", "json/decoder")),
    ("the lobby's last move", ("lobby", "Lobby")),
    ("psycopg (its reads, writes and commits)", ("psycopg",)),
    ("the projections' own code (projections/)", ("(projections/",)),
    ("the runner and its tracking (app/)", ("(app/",)),
    ("the eventsourcing library", ("eventsourcing/",)),
)


def innermost(frames: list[str], layers: tuple[tuple[str, tuple[str, ...]], ...]) -> str | None:
    """The name of the layer of the innermost frame that matches one, or None."""
    for frame in reversed(frames):
        for name, keys in layers:
            if any(key in frame for key in keys):
                return name
    return None


def worker_layer(frames: list[str]) -> str:
    """Which part of a uvicorn worker's work one GIL-holding sample is."""
    stack = ";".join(frames)
    for name, key in WORKER_THREADS:
        if key in stack:
            return name
    if "Thread._bootstrap" in stack:
        return "thread: other"
    if "Idempotency.__call__" in stack:
        return innermost(frames, WORKER_LAYERS[:2]) or BETWEEN_DEALS
    return innermost(frames, WORKER_LAYERS) or innermost(frames, WORKER_FALLBACK) or EVENT_LOOP


def read_model_part(frames: list[str]) -> str:
    return innermost(frames, READ_MODEL_PARTS) or "other"


def raw_samples(path: Path) -> list[tuple[list[str], int]]:
    """py-spy's raw output: one stack (frames ';'-separated, outermost first) and its count
    a line."""
    out = []
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if count.isdigit():
            out.append((stack.split(";"), int(count)))
    return out


def shares(samples: list[tuple[list[str], int]], part: Any) -> dict[str, float]:
    """Each part's share (per cent) of ``samples``, largest first."""
    counts: Counter[str] = Counter()
    for frames, n in samples:
        counts[part(frames)] += n
    total = sum(counts.values())
    return {k: round(100 * v / total, 1) for k, v in counts.most_common()} if total else {}


def find_py_spy(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    found = shutil.which("py-spy")
    if found:
        return found
    candidate = Path(sys.executable).with_name("py-spy")
    return str(candidate) if candidate.exists() else None


class Profiler:
    """``py-spy record --gil`` of every uvicorn worker and of the read models' process during
    the measured window: only the samples in which a thread holds the interpreter lock, that
    is runs Python (or C called from it). On a shared machine a thread descheduled while
    holding the lock is sampled too: read the shares, not absolute times."""

    def __init__(
        self, binary: str, pids: list[int], seconds: float, rate: int = 250,
        read_models: list[int] | None = None,
    ) -> None:  # fmt: skip
        self.files: list[Path] = []
        self.read_model_files: list[Path] = []
        self.procs = []
        folder = REPO_ROOT / ".bench"
        for pid in [*pids, *(read_models or [])]:
            out = folder / f"py-spy-{pid}.txt"
            (self.read_model_files if pid in (read_models or []) else self.files).append(out)
            cmd = [binary, "record", "--nonblocking", "--gil", "-r", str(rate), "-d", str(max(1, round(seconds))),
                   "-f", "raw", "-o", str(out), "-p", str(pid)]  # fmt: skip
            self.procs.append(
                subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )

    def summary(self) -> dict[str, Any]:
        """The workers' samples by layer of a command, the read models' by part."""
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.terminate()
        workers = [s for path in self.files if path.exists() for s in raw_samples(path)]
        read_models = [
            s for path in self.read_model_files if path.exists() for s in raw_samples(path)
        ]
        return {
            "files": [str(p) for p in [*self.files, *self.read_model_files]],
            "worker_samples": sum(n for _, n in workers),
            "workers_percent_by_layer": shares(workers, worker_layer),
            "read_model_samples": sum(n for _, n in read_models),
            "read_models_percent_by_part": shares(read_models, read_model_part),
        }
