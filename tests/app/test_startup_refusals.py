"""A server that cannot start for a reason its operator must fix says so in one line of its
log, not a traceback, and exits (docs/operations.md, "When the server refuses to start"): a
signing key file that is not there, a setting it cannot use, a database that does not answer,
one without its schema or with an older one. uvicorn itself, as `make run` and the operations
guide start it, with several workers where the guide does."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.migrations import upgrade
from app.startup import MIGRATE, schema_revisions
from tests.support.keys import key_file

UVICORN = Path(sys.executable).parent / "uvicorn"
#: A refusal is said within this, workers included (uvicorn's import and the app's).
EXIT_SECONDS = 60


def start(tmp_path: Path, *options: str, **settings: str) -> tuple[int, str, float]:
    """Run ``uvicorn app.main:app`` with ``settings`` (environment variables) until it
    exits: its exit code, its log and the seconds it ran. One that does not exit within
    ``EXIT_SECONDS`` is killed, with its workers, and the test fails."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANASTA_")}
    env.pop("DATABASE_URL", None)
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    env["CANASTA_DATA_DIR"] = str(tmp_path / "data")
    env.update(settings)
    log_path = tmp_path / "server.log"
    began = time.monotonic()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(UVICORN), "app.main:app", "--port", "0", *options],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code = process.wait(timeout=EXIT_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            pytest.fail(f"still running after {EXIT_SECONDS}s:\n{log_path.read_text()[-3000:]}")
    return code, log_path.read_text(errors="replace"), time.monotonic() - began


def refusals(log: str) -> list[str]:
    assert "Traceback" not in log, log
    said = [line for line in log.splitlines() if "canasta cannot start" in line]
    assert said, log
    return said


def test_a_missing_signing_key_file_is_one_line_and_the_server_exits(tmp_path: Path) -> None:
    code, log, _ = start(tmp_path, CANASTA_SIGNING_KEY_FILE=str(tmp_path / "no-such-key.json"))
    assert code != 0
    said = refusals(log)
    assert len(said) == 1, log
    assert f"cannot read the signing key file {tmp_path / 'no-such-key.json'}" in said[0]
    assert "canasta keys new --out" in said[0]  # how to make one
    assert "Application startup failed" in log


def test_settings_it_cannot_use_are_one_line_each_and_the_workers_stop(tmp_path: Path) -> None:
    # Before: a traceback at import in every worker, and uvicorn started new ones for ever.
    # (uvicorn's parent then exits with status 0, its own choice: docs/operations.md.)
    _, log, _ = start(
        tmp_path,
        "--workers",
        "2",
        CANASTA_LOG_FORMAT="yaml",
        CANASTA_POSTGRES_POOL_SIZE="ten",
        CANASTA_READ_DATABASE_URL="postgresql://canasta:s3cret@replica.example/canasta",
        CANASTA_RATE_LIMIT_READS="lots",
    )
    said = refusals(log)
    assert 1 <= len(said) <= 2, log  # each worker that started says it, then uvicorn stops
    line = said[0]
    assert "CANASTA_LOG_FORMAT: Input should be 'text' or 'json'" in line
    assert "CANASTA_POSTGRES_POOL_SIZE: Input should be a valid integer" in line
    # what to write, not the library's "couldn't parse rate limit string"
    assert "CANASTA_RATE_LIMIT_READS: not a rate: write e.g. 20/second;600/minute" in line
    assert "s3cret" not in log  # a setting's value is never repeated: it may hold a password


def test_a_database_that_does_not_answer_is_said_at_once(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, log, took = start(
        tmp_path,
        DATABASE_URL=f"postgresql://canasta:s3cret@127.0.0.1:{port}/canasta",
        CANASTA_SIGNING_KEY_FILE=str(key_file(tmp_path)),
    )
    assert code != 0
    (line,) = refusals(log)
    assert f"the database PostgreSQL 127.0.0.1:{port}/canasta does not answer" in line
    assert "Connection refused" in line
    assert "s3cret" not in log
    assert took < 20, "not the pool's 30 s wait"


@pytest.mark.postgres
def test_a_read_replica_that_does_not_answer_or_has_no_schema_is_one_line(
    migrated_postgres_url: str, tmp_path: Path
) -> None:
    """docs/scaling.md: the read models' tables are looked up on the replica at start-up, so
    it must answer then, with the schema. Before: a traceback of the pool's timeout in every
    worker, or of the missing tables, with no word of the setting to fix."""
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    key = str(key_file(tmp_path))
    code, log, _ = start(
        tmp_path,
        DATABASE_URL=migrated_postgres_url,
        CANASTA_SIGNING_KEY_FILE=key,
        CANASTA_READ_DATABASE_URL=f"postgresql://canasta:s3cret@127.0.0.1:{port}/canasta",
    )
    (line,) = refusals(log)
    assert code != 0
    assert (
        f"the read replica PostgreSQL 127.0.0.1:{port}/canasta (CANASTA_READ_DATABASE_URL)" in line
    )
    assert "does not answer" in line and "Connection refused" in line
    assert "unset CANASTA_READ_DATABASE_URL" in line
    assert "s3cret" not in log

    elsewhere = migrated_postgres_url.rsplit("/", 1)[0] + "/postgres"  # answers, no schema
    code, log, _ = start(
        tmp_path,
        DATABASE_URL=migrated_postgres_url,
        CANASTA_SIGNING_KEY_FILE=key,
        CANASTA_READ_DATABASE_URL=elsewhere,
    )
    (line,) = refusals(log)
    assert code != 0
    assert "has no schema: it is not a streaming replica of the migrated primary" in line


@pytest.mark.postgres
def test_a_database_without_its_schema_or_with_an_older_one_names_the_migration(
    empty_postgres_url: str, tmp_path: Path
) -> None:
    key = str(key_file(tmp_path))
    code, log, _ = start(tmp_path, DATABASE_URL=empty_postgres_url, CANASTA_SIGNING_KEY_FILE=key)
    (line,) = refusals(log)
    assert code != 0 and "has no schema yet: run the migrations: `alembic upgrade head`" in line

    revisions = schema_revisions()
    assert revisions is not None
    head, known = revisions
    older = sorted(known)[-2]
    upgrade(empty_postgres_url, older)
    code, log, _ = start(tmp_path, DATABASE_URL=empty_postgres_url, CANASTA_SIGNING_KEY_FILE=key)
    (line,) = refusals(log)
    assert code != 0
    assert f"has the schema of revision {older}, and this server needs revision {head}" in line
    assert "alembic upgrade head" in line


@pytest.mark.postgres
@pytest.mark.parametrize(
    "command",
    [
        ["audit", "--all"],
        ["grant-auditor", "ann"],
        ["revoke-auditor", "ann"],
        ["bots"],
        ["project"],
        ["rebuild-read-models"],
    ],
)
def test_the_operator_commands_on_a_database_without_its_schema_name_the_migration(
    empty_postgres_url: str, tmp_path: Path, command: list[str]
) -> None:
    """``canasta audit`` (grant-auditor, revoke-auditor, bots, project, rebuild-read-models)
    pointed at a database nobody migrated: one line, as the server says it, and exit 2; not a
    traceback of the first query's "relation canasta_events does not exist" (project and
    rebuild-read-models said "cannot open the read models ...: the read model 'discard_log'
    has no tables ..." with the query's text under it, and, for a database that does not
    answer, only "couldn't get a connection after 3.00 sec")."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANASTA_")}
    env.update(DATABASE_URL=empty_postgres_url, CANASTA_SIGNING_KEY_FILE=str(key_file(tmp_path)))
    canasta = Path(sys.executable).parent / "canasta"
    run = subprocess.run(
        [str(canasta), *command], env=env, capture_output=True, text=True, timeout=EXIT_SECONDS
    )
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    (line,) = run.stderr.splitlines()
    assert line.startswith("cannot open the store: the database PostgreSQL ")
    assert line.endswith("has no schema yet: " + MIGRATE)
