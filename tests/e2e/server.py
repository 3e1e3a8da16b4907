"""A real server for the end-to-end tests: ``uvicorn app.main:app`` in its own process group.

Started as ``make run`` starts it (SQLite in a data directory) or with ``DATABASE_URL`` and
several workers, as in production. The server's own output goes to a log file, which the tests
read back: it must show no unexpected error and no card (a log line is an output too,
R-VIEW-1..4).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

import httpx

from tests.support.http import free_port
from tests.support.keys import key_file, needs_key

REPO = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 60.0
STOP_SECONDS = 15.0

#: A card in full notation (R-CARD-1), as it would appear in a leaked hand or stock.
CARD_PATTERN = re.compile(r"(?<![A-Za-z0-9])(?:10[SHDC]|[2-9AKQJ][SHDC]|[BL]J)/[1-3](?![0-9])")
#: What the server prints when a request fails unexpectedly (app/errors.py) or a worker dies.
TROUBLE_PATTERN = re.compile(r"Traceback|unexpected |Exception in ASGI|Internal Server Error")


def server_env(
    data_dir: Path, database_url: str | None, extra: dict[str, str] | None = None
) -> dict[str, str]:
    """The environment of a server process: this one's, without any ``CANASTA_*`` or
    ``DATABASE_URL`` setting of the caller, so that only what the test chose applies, but for
    ``CANASTA_RATE_LIMITS`` (the per-client limits, off in tests: tests/conftest.py)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("CANASTA_") and key != "DATABASE_URL"
    }
    env["CANASTA_DATA_DIR"] = str(data_dir)
    # tests send faster than a client may: off unless the test run or ``extra`` says otherwise
    env["CANASTA_RATE_LIMITS"] = os.environ.get("CANASTA_RATE_LIMITS", "false")
    if database_url:
        env["DATABASE_URL"] = database_url
    if needs_key(database_url):
        env["CANASTA_SIGNING_KEY_FILE"] = str(key_file(data_dir.parent))
    env.update(extra or {})
    return env


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def cli_process(server: Server, log: Path, *args: str) -> subprocess.Popen[bytes]:
    """``canasta ARGS`` on ``server``'s store, in its own process group, its output appended
    to ``log``."""
    env = server_env(server.data_dir, server.database_url)
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "app.cli", *args],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def bots_process(server: Server, log: Path) -> subprocess.Popen[bytes]:
    """``canasta bots`` on ``server``'s store (``cli_process``; it retries the lease every
    0.2 s: it leads soon after another one dies)."""
    return cli_process(server, log, "bots", "--retry-seconds", "0.2")


def stopped_within(proc: subprocess.Popen[bytes], seconds: float) -> int | None:
    """The exit status of ``proc`` (a ``canasta bots`` asked to stop), or None if it did not
    exit within ``seconds``: then its threads' stacks are written to its output (SIGUSR1,
    ``faulthandler``) for the failure to show, and it is killed."""
    try:
        return proc.wait(seconds)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)
        time.sleep(1.0)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None


class Server:
    """``uvicorn app.main:app`` on 127.0.0.1, restartable on the same port and store."""

    def __init__(
        self,
        workdir: Path,
        *,
        database_url: str | None = None,
        workers: int = 1,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.workdir = workdir
        self.data_dir = workdir / "data"
        self.database_url = database_url
        self.workers = workers
        self.extra_env = extra_env or {}
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_path(self, start: int) -> Path:
        return self.workdir / f"uvicorn-{start}.log"

    def start(self) -> None:
        assert self.proc is None, "already running"
        self.starts += 1
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "app.main:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--workers",
            str(self.workers),
            "--log-level",
            "warning",
        ]
        env = server_env(self.data_dir, self.database_url, self.extra_env)
        with self.log_path(self.starts).open("wb") as log:
            # Its own session and process group: SIGKILL reaches the workers too.
            self.proc = subprocess.Popen(
                command,
                cwd=REPO,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._wait_until_healthy()

    def _wait_until_healthy(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"uvicorn exited with {self.proc.returncode} at start-up:\n{self.log()}"
                )
            try:
                if httpx.get(self.url + "/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        self.kill()
        raise AssertionError(f"uvicorn did not answer /health in {STARTUP_SECONDS}s:\n{self.log()}")

    def kill(self) -> None:
        """SIGKILL the whole process group (supervisor and workers): a crash, no clean-up."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.proc = None

    def stop(self) -> None:
        """Ask the server to exit (SIGTERM), as an operator would; SIGKILL if it hangs."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=STOP_SECONDS)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        finally:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def worker_cpu_seconds(self) -> dict[int, float]:
        """CPU seconds used so far by each uvicorn worker process, by pid (Linux ``/proc``).
        With ``--workers N`` the workers are the supervisor's spawned children; with one
        worker the server process itself serves."""
        assert self.proc is not None
        if self.workers == 1:
            return {self.proc.pid: _cpu_seconds(self.proc.pid)}
        cpu = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
                cmdline = (stat.parent / "cmdline").read_bytes()
            except OSError:
                continue  # gone meanwhile
            if int(fields[1]) == self.proc.pid and b"spawn_main" in cmdline:
                cpu[int(stat.parent.name)] = _cpu_seconds(int(stat.parent.name))
        return cpu

    def log(self, start: int | None = None) -> str:
        starts = [start] if start is not None else range(1, self.starts + 1)
        return "\n".join(
            self.log_path(n).read_text(errors="replace")
            for n in starts
            if self.log_path(n).exists()
        )

    def assert_clean_log(self) -> None:
        """No unexpected error and no card name in anything the server printed."""
        text = self.log()
        trouble = [line for line in text.splitlines() if TROUBLE_PATTERN.search(line)]
        assert not trouble, "the server logged errors:\n" + text[-5000:]
        cards = CARD_PATTERN.findall(text)
        assert not cards, f"the server logged card names {cards[:5]} (R-VIEW-1..4)"

    def __enter__(self) -> Server:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
