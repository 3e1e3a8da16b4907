"""``GET /ready``: may this process be sent traffic? (``GET /health`` only says it is alive.)

Ready means: the event store answers (its head is read) within ``ready_timeout_seconds``,
and every read model is at most ``ready_max_lag`` notifications behind that head. Otherwise
503 with ``{"error": {"code", "message"}}``: ``database_unreachable`` or
``read_models_behind`` (the message names the read model and its lag). The check runs in a
thread of its own limiter, never in the threadpool that commands use, so a store that hangs
cannot take those threads; a check still hanging makes the next probes answer 503 at once
after their timeout.

A read model's lag is counted in the log's notifications: from the oldest notification of
its topics it has not processed to the head, inclusive (0 when it has processed everything
of its topics up to the head). Notifications of other topics behind its position do not
count: they are not its to process.

With a read replica (docs/scaling.md) the answer also says how many notifications the replica
is behind the head (``replica_behind``; null when it does not answer within
``REPLICA_SECONDS``, or is left aside after a failure). A lagging or failed replica does not
make the process unready: the primary serves the reads it cannot.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio
import anyio.to_thread
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from app.application import error_body
from app.infra.projection_runner import ReadModels
from app.replica import Reads
from app.schemas import ErrorOut

log = logging.getLogger(__name__)

router = APIRouter(tags=["operations"])

#: Store reads of readiness checks and metric scrapes that may run at once (per process).
CHECK_THREADS = 1
#: How long ``/ready`` waits for the read replica's head before it answers without it
#: (``replica_behind`` null): a replica that stopped must not slow the probe down.
REPLICA_SECONDS = 0.5


class Ready(BaseModel):
    """This process may be sent traffic."""

    status: str = "ready"
    head: int  # the id of the last notification in the event store
    read_models: dict[str, int]  # each read model's lag behind the head, in notifications
    #: With a read replica: notifications it has not replayed yet (null if it did not answer).
    replica_behind: int | None = None


def projection_lag(read_models: ReadModels) -> tuple[int, dict[str, int]]:
    """The store's head and each read model's lag behind it (see the module's docstring)."""
    head = read_models.head()
    lags: dict[str, int] = {}
    for name, worker in read_models.workers.items():
        tracked = worker.position() or 0
        pending = (
            worker.recorder.select_notifications(
                start=tracked, limit=1, stop=head, topics=worker.topics, inclusive_of_start=False
            )
            if tracked < head
            else []
        )
        lags[name] = head - pending[0].id + 1 if pending else 0
    return head, lags


def replica_lag(reads: Reads, head: int) -> int | None:
    """Notifications up to ``head`` the replica has not replayed; None if it fails, or
    while it is left aside after a failure (``Reads.replica_head``: no wait for it)."""
    replayed = reads.replica_head()
    return None if replayed is None else max(0, head - replayed)


_limiter: anyio.CapacityLimiter | None = None


def _check_limiter() -> anyio.CapacityLimiter:
    global _limiter
    if _limiter is None:
        _limiter = anyio.CapacityLimiter(CHECK_THREADS)
    return _limiter


async def measured_lag(request: Request) -> tuple[int, dict[str, int]]:
    """``projection_lag`` of this process's read models, in a thread of the checks' own
    limiter, within ``ready_timeout_seconds`` (``TimeoutError`` after it)."""
    timeout = float(request.app.state.settings.ready_timeout_seconds)
    with anyio.fail_after(timeout):
        return await anyio.to_thread.run_sync(
            projection_lag,
            request.app.state.read_models,
            limiter=_check_limiter(),
            abandon_on_cancel=True,
        )


NO_STORE = {"Cache-Control": "no-store"}

#: Since when (``time.monotonic``) the probes of this process find the store unreachable:
#: logged when it starts and when it ends, not at every probe (a load balancer probes every
#: few seconds).
_unreachable_since: float | None = None


def _unreachable(reason: str) -> None:
    global _unreachable_since
    if _unreachable_since is None:
        _unreachable_since = time.monotonic()
        log.warning("not ready: %s (logged once until ready again)", reason)


def _reachable() -> None:
    global _unreachable_since
    if _unreachable_since is not None:
        log.info("the event store answers again after %.0fs", time.monotonic() - _unreachable_since)
        _unreachable_since = None


@router.get(
    "/ready",
    response_model=Ready,
    responses={
        503: {
            "model": ErrorOut,
            "description": "database_unreachable or "
            "read_models_behind: do not send this process traffic now",
        }
    },
)
async def ready(request: Request) -> Any:
    """Readiness probe: the event store answers and every read model is within
    ``CANASTA_READY_MAX_LAG`` notifications of its head (503 otherwise)."""
    settings = request.app.state.settings
    try:
        head, lags = await measured_lag(request)
    except TimeoutError:
        message = f"the event store did not answer within {settings.ready_timeout_seconds:g}s"
        _unreachable(message)
        return JSONResponse(error_body("database_unreachable", message), 503, headers=NO_STORE)
    except Exception as exc:  # the reason is logged; the answer names its kind only
        _unreachable(f"the event store failed: {exc!r}")
        message = f"the event store failed ({type(exc).__name__})"
        return JSONResponse(error_body("database_unreachable", message), 503, headers=NO_STORE)
    _reachable()
    behind = {name: lag for name, lag in lags.items() if lag > settings.ready_max_lag}
    if behind:
        worst = max(behind, key=lambda name: behind[name])
        message = (
            f"read model {worst} is {behind[worst]} notifications behind the store "
            f"(bound {settings.ready_max_lag})"
        )
        return JSONResponse(error_body("read_models_behind", message), 503, headers=NO_STORE)
    body = Ready(head=head, read_models=lags)
    reads: Reads = request.app.state.reads
    if reads.replica is not None:
        try:
            with anyio.fail_after(min(float(settings.ready_timeout_seconds), REPLICA_SECONDS)):
                body.replica_behind = await anyio.to_thread.run_sync(
                    replica_lag, reads, head, limiter=_check_limiter(), abandon_on_cancel=True
                )
        except TimeoutError:
            body.replica_behind = None
        return JSONResponse(body.model_dump(), headers=NO_STORE)
    return JSONResponse(body.model_dump(exclude={"replica_behind"}), headers=NO_STORE)
