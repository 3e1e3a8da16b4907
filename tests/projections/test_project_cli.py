"""``canasta project``: the read models in a process of their own, in the foreground. It takes
the lease (or waits for it), projects what the servers write, reports its progress, and exits 0
on SIGTERM, after which another process takes over."""

from __future__ import annotations

import os
import signal
import subprocess
import threading

from app.application import CanastaApp
from app.settings import Settings
from projections.runner import ReadModels
from tests.projections.helpers import assert_read_models_match, play, wait_for
from tests.projections.test_rebuild_cli import CANASTA, REPO, STORE_VARIABLES, store_env


class Projector:
    """``canasta project`` as a subprocess; its output lines are collected as they come."""

    def __init__(self, env: dict[str, str]) -> None:
        clean = {k: v for k, v in os.environ.items() if k not in STORE_VARIABLES}
        self.proc = subprocess.Popen(
            [*CANASTA, "project", "--progress-seconds", "0.1", "--retry-seconds", "0.1"],
            cwd=REPO,
            env={**clean, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def printed(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def terminate(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGTERM)
        _, stderr = self.proc.communicate(timeout=30)
        self._reader.join(timeout=5)
        return self.proc.returncode, stderr

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def test_canasta_project_projects_in_the_foreground_and_stops_on_sigterm(
    settings: Settings, app: CanastaApp
) -> None:
    # A server that runs no read models itself (CANASTA_READ_MODELS=off), and one that would.
    off = ReadModels(settings.model_copy(update={"read_models": "off"}), app=app)
    server = ReadModels(settings, app=app, lease_retry_seconds=0.1)
    projector = Projector({**store_env(settings), "CANASTA_READ_MODELS": "off"})
    try:
        # It leads, although the environment says "off" (that is the servers' setting).
        wait_for(lambda: projector.printed("leading:"), timeout=30, what="for the projector")
        server.start()  # does not get the lease while the projector holds it
        table_id = play(app, 61, "classic", 4, max_deals=1)
        head = off.head()
        wait_for(
            lambda: all(w.has_processed(head) for w in off.workers.values()),
            what="for the projector to project",
        )
        wait_for(lambda: projector.printed(f"log at {head}:"), what="for the progress")
        assert not server.is_leading
        assert_read_models_match(app, off, [table_id])

        code, stderr = projector.terminate()
        assert code == 0, stderr
        assert projector.lines[-1] == "stopped", projector.lines
        assert "Traceback" not in stderr

        # It gave the lease up: the server takes over and projects what follows.
        wait_for(lambda: server.is_leading, what="for the server to take over")
        second = play(app, 62, "classic", 2, max_deals=1)
        off.wait_until(timeout=10)
        assert_read_models_match(app, off, [table_id, second])
    finally:
        projector.kill()
        server.close()
        off.close()


def test_canasta_project_refuses_the_in_memory_store() -> None:
    projector = Projector({"DATABASE_URL": "memory"})
    try:
        _, stderr = projector.proc.communicate(timeout=60)
        assert projector.proc.returncode == 2
        assert "in-memory store" in stderr
    finally:
        projector.kill()
