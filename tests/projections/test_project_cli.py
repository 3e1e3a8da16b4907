"""``canasta project``: the read models in a process of their own, in the foreground. It takes
the lease (or waits for it), projects what the servers write, reports its progress, and exits 0
on SIGTERM, after which another process takes over."""

from __future__ import annotations

import signal
import subprocess
import threading
from collections.abc import Sequence
from typing import IO

from app.application import CanastaApp
from app.infra.projection_runner import ReadModels
from app.settings import Settings
from tests.projections.helpers import assert_read_models_match
from tests.projections.test_rebuild_cli import store_env
from tests.support.cli import CANASTA, REPO, cli_env
from tests.support.games import random_game
from tests.support.waiting import wait_for


class Projector:
    """``canasta project`` as a subprocess; its output lines are collected as they come."""

    DEFAULT_ARGS = ("project", "--progress-seconds", "0.1", "--retry-seconds", "0.1")

    def __init__(self, env: dict[str, str], args: Sequence[str] = DEFAULT_ARGS) -> None:
        """``args``: the command line after ``canasta`` (another foreground command, such as
        ``bots``, is driven the same way)."""
        self.proc = subprocess.Popen(
            [*CANASTA, *args],
            cwd=REPO,
            env=cli_env(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self.errors: list[str] = []
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._readers = [
            threading.Thread(target=self._read, args=(pipe, lines), daemon=True)
            for pipe, lines in ((self.proc.stdout, self.lines), (self.proc.stderr, self.errors))
        ]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(pipe: IO[str], lines: list[str]) -> None:
        for line in pipe:
            lines.append(line.rstrip("\n"))

    def printed(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def wait(self) -> tuple[int, str]:
        """Its exit code and stderr, once it has exited and its output is read to the end."""
        code = self.proc.wait(timeout=60)
        for reader in self._readers:
            reader.join(timeout=10)
        return code, "\n".join(self.errors)

    def terminate(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGTERM)
        return self.wait()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


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
        table_id = random_game(app, 61, "classic", 4, max_deals=1)
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
        second = random_game(app, 62, "classic", 2, max_deals=1)
        off.wait_until(timeout=10)
        assert_read_models_match(app, off, [table_id, second])
    finally:
        projector.kill()
        server.close()
        off.close()


def test_canasta_project_refuses_the_in_memory_store() -> None:
    projector = Projector({"DATABASE_URL": "memory"})
    try:
        code, stderr = projector.wait()
        assert code == 2
        assert "in-memory store" in stderr
    finally:
        projector.kill()


def test_canasta_project_rides_out_a_database_outage_while_it_reports_progress(
    migrated_postgres_url: str,
) -> None:
    """The database goes away under a leading ``canasta project`` that reports its progress
    often: the report it cannot read is skipped (the runner says once that the database does
    not answer), the process lives on, leads again once the database is back, and still exits
    0 on SIGTERM. (It once died of the progress report's query: the CI's
    tests/e2e/test_db_outage.py found it exited 1 with a traceback.)"""
    import time

    from tests.support.relay import Relay

    relay, url = Relay.to_url(migrated_postgres_url)
    projector = Projector(
        {"DATABASE_URL": url, "CANASTA_DATABASE_WAIT_SECONDS": "1"},
        ("project", "--progress-seconds", "0.05", "--retry-seconds", "0.1"),
    )
    try:
        wait_for(lambda: projector.printed("log at"), timeout=30, what="for the progress")
        relay.cut()
        time.sleep(4.0)  # longer than a query waits for the database (1 s)
        assert projector.proc.poll() is None, "\n".join(projector.errors)
        relay.resume()
        wait_for(
            lambda: sum(line.startswith("leading:") for line in projector.lines) == 2,
            timeout=30,
            what="for the projector to lead again",
        )
        code, stderr = projector.terminate()
        assert code == 0, stderr
        assert "Traceback" not in stderr
    finally:
        projector.kill()
        relay.cut()


def test_the_progress_report_is_skipped_while_the_database_does_not_answer(
    migrated_postgres_url: str,
) -> None:
    """What the loop of ``canasta project`` reads for its progress line, asked while the
    database is away (as it may be, between the lease taken again and the log's pool
    reconnected): no line, no exception; the positions again once it is back."""
    from app.cli_read_models import _positions
    from tests.support.relay import Relay

    relay, url = Relay.to_url(migrated_postgres_url)
    settings = Settings(database_url=url, database_wait_seconds=1)
    with ReadModels(settings) as read_models:
        assert _positions(read_models) == (0, dict.fromkeys(read_models.workers, None))
        relay.cut()
        assert _positions(read_models) is None
        relay.resume()
        wait_for(lambda: _positions(read_models) is not None, what="for the database")
    relay.cut()
