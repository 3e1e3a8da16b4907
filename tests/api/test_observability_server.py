"""The operator's view of a real ``uvicorn app.main:app`` (docs/operations.md): JSON log lines
that carry each request's id, the open streams gauge, and ``/metrics`` adding up every
worker's counts in multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``, two workers on
PostgreSQL)."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from app.application import CanastaApp
from app.main import create_app
from app.migrations import upgrade
from app.settings import Settings, eventsourcing_env
from tests.e2e.server import Server
from tests.support.databases import drop_database, own_database
from tests.support.http import open_table, state_reader
from tests.support.keys import key_file

STREAM_ROUTE = "/deals/{deal_id}/stream"


def metric(base_url: str, name: str, **labels: str) -> float:
    """One sample of ``/metrics``, asked on a connection of its own (any worker answers)."""
    text = httpx.get(base_url + "/metrics", timeout=10).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return float(sample.value)
    return 0.0


def test_json_log_lines_carry_each_requests_id(uvicorn_server: Callable[..., Any]) -> None:
    server = uvicorn_server(env={"CANASTA_LOG_FORMAT": "json"}, log_level="info")
    with httpx.Client(base_url=server.url) as http:
        made = http.post("/players", json={"name": "ann"}, headers={"X-Request-ID": "reg-42"})
        assert made.status_code == 201 and made.headers["x-request-id"] == "reg-42"
        generated = http.get("/tables").headers["x-request-id"]
    server.stop()
    lines = [json.loads(line) for line in server.log().splitlines() if line.strip()]
    assert all({"time", "level", "logger", "message"} <= line.keys() for line in lines)
    access = [line for line in lines if line["logger"] == "uvicorn.access"]
    registration = next(line for line in access if line["path"] == "/players")
    assert registration["request_id"] == "reg-42"
    assert (registration["method"], registration["status"]) == ("POST", 201)
    lobby = next(line for line in access if line["path"] == "/tables")
    assert lobby["request_id"] == generated
    # Lines written outside any request (start-up, shut-down) carry none.
    assert any("request_id" not in line for line in lines)


@pytest.mark.parametrize(
    ("log_format", "args"),
    [("text", ()), ("json", ("--workers", "2", "--log-config", "app/log_json.json"))],
)
def test_an_invitation_link_s_code_never_reaches_the_log(
    log_format: str, args: tuple[str, ...], uvicorn_server: Callable[..., Any]
) -> None:
    """The web pages' older invitation links (``/?invite=<table id>:<code>``) send the code
    in the address, which uvicorn's access line wrote whole: anybody reading the log could
    take a seat at the private table, whose code the store keeps only as a hash."""
    server = uvicorn_server(env={"CANASTA_LOG_FORMAT": log_format}, log_level="info", args=args)
    with httpx.Client(base_url=server.url) as http:
        game = open_table(http, ("ann", "bob"), start=False, table={"private": True})
        link = f"{game.table}:{game.invite}"
        for address in (f"/?invite={link}", f"/?lang=en&INVITE={link}&x=1"):
            assert http.get(address).status_code == 200
    server.stop()
    log = server.log()
    assert game.invite is not None and game.invite not in log
    hidden = [line for line in log.splitlines() if "invite=(hidden)" in line.lower()]
    assert len(hidden) == 2, log
    assert "&x=1" in hidden[1]  # the rest of the address stays


def test_with_workers_and_the_log_config_every_line_is_json_the_parents_too(
    uvicorn_server: Callable[..., Any],
) -> None:
    # uvicorn's parent process never imports the application: without --log-config its own
    # lines ("Started parent process", a worker that died...) were uvicorn's plain text.
    server = uvicorn_server(
        env={"CANASTA_LOG_FORMAT": "json"},
        log_level="info",
        args=("--workers", "2", "--log-config", "app/log_json.json"),
    )
    with httpx.Client(base_url=server.url) as http:
        assert http.get("/tables", headers={"X-Request-ID": "lobby-7"}).status_code == 200
    server.stop()
    lines = [json.loads(line) for line in server.log().splitlines() if line.strip()]
    messages = [line["message"] for line in lines]
    assert any(m.startswith("Started parent process") for m in messages), messages
    assert any(m.startswith("Stopping parent process") for m in messages), messages
    assert sum(m.startswith("Application startup complete") for m in messages) == 2
    access = next(line for line in lines if line.get("path") == "/tables")
    assert (access["logger"], access["request_id"]) == ("uvicorn.access", "lobby-7")


def test_the_open_streams_gauge_follows_streams_opening_and_closing(
    uvicorn_server: Callable[..., Any],
) -> None:
    server = uvicorn_server(env={"CANASTA_STREAM_POLL_SECONDS": "0.05"})
    with httpx.Client(base_url=server.url) as http:
        game = open_table(http)
    assert metric(server.url, "canasta_open_streams", route=STREAM_ROUTE) == 0
    url = f"{server.url}/deals/{game.deal}/stream"
    with httpx.stream("GET", url, timeout=10) as stream:
        assert stream.status_code == 200
        lines = stream.iter_lines()  # kept: a dropped iterator closes the connection
        next(lines)  # the stream runs: its first message came
        assert metric(server.url, "canasta_open_streams", route=STREAM_ROUTE) == 1
    deadline = time.monotonic() + 10
    while metric(server.url, "canasta_open_streams", route=STREAM_ROUTE) != 0:
        assert time.monotonic() < deadline, "the closed stream is still counted"
        time.sleep(0.05)


@pytest.mark.postgres
def test_metrics_add_up_every_workers_counts_in_multiprocess_mode(
    migrated_postgres_url: str, tmp_path: Path
) -> None:
    prometheus_dir = tmp_path / "prometheus"
    prometheus_dir.mkdir()
    server = Server(
        tmp_path,
        database_url=migrated_postgres_url,
        workers=2,
        extra_env={
            "PROMETHEUS_MULTIPROC_DIR": str(prometheus_dir),
            "CANASTA_POSTGRES_POOL_SIZE": "4",
        },
    )
    reader = CanastaApp(
        env=eventsourcing_env(
            Settings(database_url=migrated_postgres_url, aggregate_cache_maxsize=0)
        )
    )
    try:
        server.start()
        # No kept-alive connections: each request may reach either worker.
        limits = httpx.Limits(max_keepalive_connections=0)
        with httpx.Client(base_url=server.url, limits=limits, timeout=10) as http:
            game = open_table(http)
            sent = 12
            game.play_commands(state_reader(reader), random.Random(8), sent)
        writers = {path.name.rsplit("_", 1)[1] for path in prometheus_dir.glob("counter_*.db")}
        assert len(writers) == 2, f"both workers count, in files of their own: {writers}"
        totals = {metric(server.url, "canasta_commands_accepted_total") for _ in range(8)}
        assert totals == {float(sent)}, "every scrape, whichever worker answers, adds up both"
        assert metric(server.url, "canasta_store_up") == 1
    finally:
        reader.close()
        server.stop()
    assert "PROMETHEUS_MULTIPROC_DIR is not set" not in server.log()


@pytest.mark.postgres
def test_ready_answers_503_once_the_database_is_gone_and_health_still_200(
    postgres_url: str, tmp_path: Path
) -> None:
    with own_database(postgres_url) as (url, name):
        upgrade(url)
        settings = Settings(
            database_url=url,
            postgres_pool_size=2,
            ready_timeout_seconds=3,
            signing_key_file=key_file(tmp_path),
        )
        with TestClient(create_app(settings)) as client:
            answer = client.get("/ready")
            assert answer.status_code == 200, answer.text
            drop_database(postgres_url, name)  # its connections are ended with it
            began = time.monotonic()
            answer = client.get("/ready")
            assert answer.status_code == 503
            assert answer.json()["error"]["code"] == "database_unreachable"
            assert time.monotonic() - began < 10
            assert client.get("/health").status_code == 200
            scraped = client.get("/metrics").text
            assert "canasta_store_up 0.0" in scraped


def test_a_worker_without_the_multiprocess_directory_says_so(tmp_path: Path) -> None:
    server = Server(tmp_path, workers=2)
    server.start()
    server.stop()
    assert server.log().count("PROMETHEUS_MULTIPROC_DIR is not set") == 2, server.log()


def test_a_multiprocess_directory_that_is_not_there_is_made_not_a_crash(tmp_path: Path) -> None:
    """`PROMETHEUS_MULTIPROC_DIR` naming a directory not made yet (a typo, a /run emptied by
    a reboot, the shell lines of docs/operations.md without their mkdir): the server makes it
    and both workers count there. Before, every worker died at import with a traceback
    (FileNotFoundError: .../counter_PID.db) and uvicorn started new ones for ever."""
    prometheus_dir = tmp_path / "run" / "metrics"
    server = Server(
        tmp_path, workers=2, extra_env={"PROMETHEUS_MULTIPROC_DIR": str(prometheus_dir)}
    )
    try:
        server.start()
        assert httpx.get(server.url + "/metrics", timeout=10).status_code == 200
        writers = {path.name.rsplit("_", 1)[1] for path in prometheus_dir.glob("counter_*.db")}
        assert len(writers) == 2, f"both workers count there: {writers}"
    finally:
        server.stop()
    assert "Traceback" not in server.log()
    assert f"made the directory PROMETHEUS_MULTIPROC_DIR={prometheus_dir}" in server.log()
