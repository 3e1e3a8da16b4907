"""``uvicorn app.main:app --workers N`` (and ``canasta project``) under test."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from app.signing import new_key_document
from benchmarks.server.config import REPO_ROOT, SERVER_LOG
from benchmarks.server.cpu import children_of
from benchmarks.server.experiments import EXPERIMENTS_ENV
from benchmarks.server.http_client import RawClient


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
        experiments: Sequence[str] = (),
        read_models: str = "workers",
    ) -> None:
        self.url = url
        self.read_models = read_models
        self.projector: subprocess.Popen[bytes] | None = None
        self.experiments = list(experiments)
        self.nodelay_fix = nodelay_fix
        self.workers = workers
        self.pool_size = pool_size
        self.threads = threads
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.signing_key = json.dumps(new_key_document())

    def start(self) -> None:
        env = {
            **os.environ,
            "DATABASE_URL": self.url,
            "CANASTA_DATABASE_URL": self.url,
            "CANASTA_POSTGRES_POOL_SIZE": str(self.pool_size),
        }
        if "CANASTA_SIGNING_KEY" not in env and "CANASTA_SIGNING_KEY_FILE" not in env:
            # A PostgreSQL server needs a signing key (app.signing): the run's own, which
            # every worker and restart of this Server shares.
            env["CANASTA_SIGNING_KEY"] = self.signing_key
        target = ["app.main:app"]
        if self.threads:
            env["CANASTA_THREADPOOL_SIZE"] = str(self.threads)
        if self.read_models in ("process", "off"):
            env["CANASTA_READ_MODELS"] = "off"
        # No bots sit at the benchmark's tables: the workers take no part in the bots' lease
        # (docs/operations.md, "The bots"), so the figures stay those of the commands alone.
        env["CANASTA_RUN_BOTS"] = "false"
        # The load generator is a few clients sending as fast as the server answers: no
        # per-client limits (docs/operations.md, "Limits"), the figures are the server's.
        env["CANASTA_RATE_LIMITS"] = "false"
        if self.experiments:
            env[EXPERIMENTS_ENV] = ",".join(self.experiments)
            target = ["benchmarks.server.experiments:bench_app", "--factory"]
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
