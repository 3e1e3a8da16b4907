"""Prometheus metrics (``prometheus-client``), served at ``GET /metrics``.

What is counted, and where (docs/operations.md, "Metrics", lists them for operators):

- every HTTP request, by method and *route template* (``/deals/{deal_id}``, never the raw
  path, so that the number of series stays bounded): the time to its answer's status line
  and a count by status (``app.observability.Observe``, an ASGI middleware outside every
  other part of the application, so that the command lane, ``app.command_lane``, and the
  body limit's 413 are counted like the routes);
- commands (``POST /deals/{id}/commands``, lane or route): accepted, answered again (a
  retry under a used ``seq``), refused by error code;
- open live streams (``text/event-stream`` answers still running), by route; the streams
  opened, by where their catch-up came from (the follower's memory or the store);
- whether the process's follower of the store lags past the tokens' bound, and how often
  it did (``app.fanout``: tokens are then read from the store);
- bot moves, by outcome (``app.bot_runner``, in whichever process plays the bots);
- at scrape time, in the process that answers: the event store's head and each read
  model's lag behind it (``app.readiness.projection_lag``).

Several worker processes (``uvicorn --workers N``): each keeps its own counts, and a scrape
reaches one worker. With ``PROMETHEUS_MULTIPROC_DIR`` set to an empty directory *before* the
server starts (the library reads it when it is imported), every process writes its values
to files there and ``/metrics`` adds up all of them, whichever worker answers; live gauges
of processes that died are dropped at each scrape.
"""

from __future__ import annotations

import glob
import logging
import multiprocessing
import os
import re
from collections.abc import Iterable, Iterator

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.registry import Collector

from app import metrics_dir
from app.metrics_dir import MULTIPROC_ENV

#: Latency buckets, in seconds: a command takes a few ms, a view up to tens of ms.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

#: The route label of a request no route answered (unknown paths: bounded all the same).
UNMATCHED = "unmatched"

REQUEST_SECONDS = Histogram(
    "canasta_http_request_duration_seconds",
    "Time from a request's arrival to its answer's status line, by route template",
    ["method", "route"],
    buckets=LATENCY_BUCKETS,
)
RESPONSES = Counter(
    "canasta_http_responses",
    "HTTP answers by route template and status",
    ["method", "route", "status"],
)
COMMANDS_ACCEPTED = Counter(
    "canasta_commands_accepted",
    "Commands accepted and recorded (POST /deals/{id}/commands, command lane included)",
)
COMMANDS_REPLAYED = Counter(
    "canasta_commands_replayed",
    "Commands answered again: a retry under a sequence number already used for it",
)
COMMANDS_REFUSED = Counter(
    "canasta_commands_refused",
    "Commands refused, by error code (a rule id, or e.g. race_lost, malformed)",
    ["code"],
)
OPEN_STREAMS = Gauge(
    "canasta_open_streams",
    "Live streams (Server-Sent Events) open now, by route template",
    ["route"],
    multiprocess_mode="livesum",
)
READS_SERVED = Counter(
    "canasta_reads_served",
    "Reads that may go to the read replica (CANASTA_READ_DATABASE_URL), by what was read "
    "(aggregate, log, read_models) and the database that served it (replica, primary)",
    ["read", "store"],
)
STREAM_CATCHUPS = Counter(
    "canasta_stream_catchups",
    "Live streams opened, by where their catch-up came from (memory: the process's follower "
    "held the aggregate's history, app/fanout.py; store: a read)",
    ["source"],
)
TOKEN_FOLLOWER_LAGGING = Gauge(
    "canasta_token_follower_lagging",
    "1 while a process's follower of the store lags past TOKEN_BOUND (app/fanout.py): it "
    "reads every bearer token from the store instead of trusting the ones it remembers",
    multiprocess_mode="livemax",
)
TOKEN_FOLLOWER_LAGS = Counter(
    "canasta_token_follower_lags",
    "Times a process's follower of the store fell behind TOKEN_BOUND (app/fanout.py)",
)
BOT_MOVES = Counter(
    "canasta_bot_moves",
    "Moves the bots submitted, by outcome (accepted, refused by the rules, stale)",
    ["outcome"],
)


def multiprocess_dir() -> str | None:
    return os.environ.get(MULTIPROC_ENV) or None


def warn_if_alone() -> None:
    """Say so when this process is one of several workers (a spawned child, as uvicorn's
    ``--workers N`` makes them) without ``PROMETHEUS_MULTIPROC_DIR``: its ``/metrics`` then
    shows its own counts only, whichever worker a scrape reaches. Likewise when the
    directory named could not be made, and when it was made here (``app.metrics_dir``)."""
    if metrics_dir.PROBLEM is not None:
        logging.getLogger(__name__).warning(
            "metrics: %s: /metrics shows this process's counts only; make it a directory this "
            "user may write (docs/operations.md, Metrics)",
            metrics_dir.PROBLEM,
        )
    elif metrics_dir.MADE is not None:
        logging.getLogger(__name__).info(
            "metrics: made the directory %s=%s", MULTIPROC_ENV, metrics_dir.MADE
        )
    if multiprocess_dir() is None and multiprocessing.parent_process() is not None:
        logging.getLogger(__name__).warning(
            "metrics: this is a worker process and %s is not set: /metrics shows this "
            "worker's counts only (docs/operations.md, Metrics)",
            MULTIPROC_ENV,
        )


def forget_dead_processes(path: str) -> None:
    """Drop the live gauges (open streams) of processes that are gone: uvicorn restarts a
    dead worker without telling anybody, and its streams closed with it."""
    for name in glob.glob(os.path.join(path, "gauge_live*_*.db")):
        match = re.search(r"_(\d+)\.db$", name)
        if match is None:
            continue
        pid = int(match.group(1))
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            mark_process_dead(pid, path)
        except PermissionError:
            pass  # alive, another user's


class _Fixed(Collector):
    """A collector of metric families computed beforehand."""

    def __init__(self, families: Iterable[Metric]) -> None:
        self._families = list(families)

    def collect(self) -> Iterator[Metric]:
        yield from self._families


def exposition(extra: Iterable[Metric] = ()) -> tuple[bytes, str]:
    """The text exposition of every metric (all processes' in multiprocess mode), then
    ``extra``'s (computed by the process that answers); and its content type."""
    path = multiprocess_dir()
    if path is not None:
        forget_dead_processes(path)
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path)
        body = generate_latest(registry)
    else:
        body = generate_latest(REGISTRY)
    more = CollectorRegistry(auto_describe=False)
    more.register(_Fixed(extra))
    return body + generate_latest(more), CONTENT_TYPE_LATEST


def store_gauges(head: int | None, lags: dict[str, int]) -> Iterator[Metric]:
    """The scrape-time gauges: whether the store answered, its head, each read model's lag."""
    up = GaugeMetricFamily(
        "canasta_store_up", "1 if the event store answered this scrape's queries, else 0"
    )
    up.add_metric([], 0 if head is None else 1)
    yield up
    if head is None:
        return
    yield GaugeMetricFamily(
        "canasta_store_head", "Id of the last notification in the event store", value=head
    )
    lag = GaugeMetricFamily(
        "canasta_projection_lag",
        "Notifications of the log between a read model's position and the store's head "
        "(0: up to date)",
        labels=["projection"],
    )
    for name, behind in sorted(lags.items()):
        lag.add_metric([name], behind)
    yield lag


__all__ = [
    "BOT_MOVES",
    "COMMANDS_ACCEPTED",
    "COMMANDS_REFUSED",
    "COMMANDS_REPLAYED",
    "MULTIPROC_ENV",
    "OPEN_STREAMS",
    "READS_SERVED",
    "REQUEST_SECONDS",
    "RESPONSES",
    "STREAM_CATCHUPS",
    "TOKEN_FOLLOWER_LAGGING",
    "TOKEN_FOLLOWER_LAGS",
    "UNMATCHED",
    "exposition",
    "multiprocess_dir",
    "store_gauges",
]
