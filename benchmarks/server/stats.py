"""Percentiles and time slices of the measured latencies."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of ``values``; NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


def summary_ms(seconds: Sequence[float]) -> dict[str, float | int]:
    ms = [s * 1000 for s in seconds]
    if not ms:
        return {"n": 0}
    return {
        "n": len(ms),
        "p50": round(percentile(ms, 50), 2),
        "p90": round(percentile(ms, 90), 2),
        "p99": round(percentile(ms, 99), 2),
        "max": round(max(ms), 2),
        "mean": round(statistics.fmean(ms), 2),
    }


def timeline(
    rows: Sequence[tuple[Any, ...]], start: float, end: float, buckets: int = 20
) -> list[dict[str, float | int]]:
    """Commands (end time, latency s, status) by when they were answered, in ``buckets``
    equal slices of the window: whether a tail comes from a few stalls or from all along."""
    width = (end - start) / buckets
    slices: list[list[float]] = [[] for _ in range(buckets)]
    for row in rows:
        slices[min(buckets - 1, int((row[0] - start) / width))].append(row[1] * 1000)
    return [
        {
            "from_s": round(i * width, 2),
            "n": len(ms),
            "p50": round(percentile(ms, 50), 1) if ms else 0,
            "p99": round(percentile(ms, 99), 1) if ms else 0,
            "max": round(max(ms), 1) if ms else 0,
        }
        for i, ms in enumerate(slices)
    ]


def slice_counts(times: Sequence[float], start: float, end: float, buckets: int = 20) -> list[int]:
    """How many of ``times`` fall in each of ``buckets`` equal slices of the window."""
    counts = [0] * buckets
    width = (end - start) / buckets
    for t in times:
        if start <= t < end:
            counts[min(buckets - 1, int((t - start) / width))] += 1
    return counts


def in_window(rows: Sequence[tuple[Any, ...]], start: float, end: float) -> list[tuple[Any, ...]]:
    return [row for row in rows if start <= row[0] < end]
