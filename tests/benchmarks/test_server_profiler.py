"""``benchmarks.server --profile``: where a worker's samples go, by layer of a command
(docs/performance.md, "5 December 2026"). Stacks as py-spy writes them (its raw format,
frames outermost first), taken from a profile of the real server at 1,000 commands/s."""

from __future__ import annotations

from pathlib import Path

from benchmarks.server.profiler import raw_samples, read_model_part, shares, worker_layer

LOOP = [
    "<module> (<string>:1)",
    "Runner.run (asyncio/runners.py:118)",
    "RequestResponseCycle.run_asgi (uvicorn/protocols/http/httptools_impl.py:420)",
    "ProxyHeadersMiddleware.__call__ (uvicorn/middleware/proxy_headers.py:63)",
    "FastAPI.__call__ (fastapi/applications.py:1224)",
    "ServerErrorMiddleware.__call__ (starlette/middleware/errors.py:164)",
    "StartupRefusals.__call__ (app/main.py:68)",
    "SecurityHeaders.__call__ (app/security_headers.py:116)",
    "Observe.__call__ (app/observability.py:190)",
    "DatabaseOutage.__call__ (app/outage.py:76)",
]
LANE = [*LOOP, "CommandLane.__call__ (app/command_lane.py:63)"]
SERVICE = [
    *LANE,
    "CommandLane._answer (app/command_lane.py:111)",
    "submit_from_cache (app/command_io.py:107)",
    "CommandService.submit_cached (app/services/commands.py:243)",
]
DECIDE = [
    *SERVICE,
    "CommandService._decide (app/services/commands.py:295)",
    "Deal.execute (domain/deal.py:105)",
    "decide (domain/rules/__init__.py:44)",
    "draw (domain/rules/drawing.py:44)",
]
RECORD = [
    *SERVICE,
    "CommandService._decide (app/services/commands.py:295)",
    "Deal.execute (domain/deal.py:105)",
    "Deal.record (domain/deal.py:146)",
    "BaseAggregate.trigger_event (eventsourcing/domain.py:1272)",
    "DealState.apply (domain/state.py:180)",
]
METRICS = [
    *LANE,
    "Observe.__call__.<locals>.observed (app/observability.py:168)",
    "Counter.inc (prometheus_client/metrics.py:339)",
]
SEND = [
    *LANE,
    "SecurityHeaders.__call__.<locals>.send_secured (app/security_headers.py:114)",
    "ServerErrorMiddleware.__call__.<locals>._send (starlette/middleware/errors.py:161)",
    "RequestResponseCycle.send (uvicorn/protocols/http/httptools_impl.py:522)",
]
BETWEEN_DEALS = [
    *LANE,
    "Idempotency.__call__ (app/idempotency.py:250)",
    "Router.__call__ (starlette/routing.py:683)",
    "solve_dependencies (fastapi/dependencies/utils.py:671)",
]
COMMITTER = [
    "Thread._bootstrap (threading.py:995)",
    "GroupCommit._run (app/infra/group_commit.py:181)",
    "PostgresRecorder.insert_events (app/infra/persistence.py:119)",
]


def test_each_sample_is_named_by_the_layer_of_a_command_it_was_in(tmp_path: Path) -> None:
    raw = tmp_path / "py-spy-1.txt"
    lines = [(DECIDE, 3), (RECORD, 2), (METRICS, 1), (SEND, 1), (BETWEEN_DEALS, 1)]
    lines += [(COMMITTER, 1), (LOOP[:2], 1)]
    raw.write_text("".join(f"{';'.join(stack)} {n}\n" for stack, n in lines))

    samples = raw_samples(raw)
    assert [worker_layer(frames) for frames, _ in samples] == [
        "deciding: the rules on a clone of the state",
        "recording: the library's events, the hash chain, the command log",
        "metrics (prometheus-client)",
        "uvicorn's HTTP (httptools' callbacks, a task a request, writing the answer)",
        "requests between deals (FastAPI's routes)",
        "thread: the group committer (writing to PostgreSQL)",
        "the event loop's own work (uvloop, asyncio)",
    ]
    assert shares(samples, worker_layer) == {
        "deciding: the rules on a clone of the state": 30.0,
        "recording: the library's events, the hash chain, the command log": 20.0,
        "uvicorn's HTTP (httptools' callbacks, a task a request, writing the answer)": 10.0,
        "metrics (prometheus-client)": 10.0,
        "requests between deals (FastAPI's routes)": 10.0,
        "thread: the group committer (writing to PostgreSQL)": 10.0,
        "the event loop's own work (uvloop, asyncio)": 10.0,
    }


def test_the_read_models_samples_are_named_by_part() -> None:
    runner = [
        "Thread._bootstrap (threading.py:995)",
        "run (app/infra/projection_runner/runner.py:1)",
    ]
    assert read_model_part([*runner, "Cursor.execute (psycopg/cursor.py:97)"]) == (
        "psycopg (its reads, writes and commits)"
    )
    assert read_model_part(
        [*runner, "Mapper.to_domain_event (eventsourcing/persistence.py:1)"]
    ) == ("decoding stored events")
    assert read_model_part([*runner, "track (app/infra/projection_runner/runner.py:9)"]) == (
        "the runner and its tracking (app/)"
    )
