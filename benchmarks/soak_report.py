"""The soak benchmark's report (``benchmarks.soak``): every figure's growth per 1,000 games."""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: A figure is marked as growing when its slope adds at least this share of its value after
#: the warm-up per 1,000 games, and its last quarter is above its first.
GROWING_SHARE = 0.05


def probe_series(directory: Path, roles: dict[int, str]) -> list[dict[str, Any]]:
    """Every probe sample, its keys prefixed by its process's role (``web-1.hub.streams``)."""
    out: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.jsonl")):
        kind, _, pid = path.stem.rpartition("-")
        role = roles.get(int(pid), f"{kind}-{pid}")
        for line in path.read_text().splitlines():
            row = json.loads(line)
            out.append({"t": row.pop("t"), **{f"{role}.{k}": v for k, v in row.items()}})
    return out


def games_at(timeline: Sequence[tuple[float, int]], t: float) -> float:
    """The games finished at time ``t``, interpolated between the driver's samples."""
    times = [at for at, _ in timeline]
    i = bisect_left(times, t)
    if i <= 0:
        return float(timeline[0][1])
    if i >= len(timeline):
        return float(timeline[-1][1])
    (t0, g0), (t1, g1) = timeline[i - 1], timeline[i]
    return g0 + (g1 - g0) * (t - t0) / max(t1 - t0, 1e-9)


def slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    return 0.0 if var == 0 else sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var


def growth(
    samples: list[dict[str, Any]], probes: list[dict[str, Any]], warmup_until: float
) -> dict[str, dict[str, Any]]:
    """Per figure: after the warm-up, at the end, the most, the growth per 1,000 games and
    per hour, and whether it grows (see ``GROWING_SHARE``)."""
    timeline = [(s["t"], int(s["games"])) for s in samples]
    series: dict[str, list[tuple[float, float]]] = {}
    for row in [*samples, *probes]:
        for key, value in row.items():
            if (
                key in ("t", "games")
                or not isinstance(value, int | float)
                or row["t"] < warmup_until
            ):
                continue
            series.setdefault(key, []).append((row["t"], float(value)))
    out: dict[str, dict[str, Any]] = {}
    for key, points in sorted(series.items()):
        points.sort()
        if len(points) < 3:
            continue
        ts = [t for t, _ in points]
        ys = [v for _, v in points]
        gs = [games_at(timeline, t) for t in ts]
        per_game = slope(gs, ys) * 1000 if gs[-1] > gs[0] else 0.0
        per_hour = slope(ts, ys) * 3600
        quarter = max(1, len(ys) // 4)
        first, last = sum(ys[:quarter]) / quarter, sum(ys[-quarter:]) / quarter
        grows = per_game > GROWING_SHARE * max(abs(ys[0]), 1.0) and last > first
        out[key] = {
            "after_warmup": ys[0],
            "end": ys[-1],
            "max": max(ys),
            "per_1000_games": round(per_game, 2),
            "per_hour": round(per_hour, 2),
            "grows": grows,
            # the resources' test (``judge``): the least of the last quarter above the most
            # of the first half
            "last_quarter_min": min(ys[-quarter:]),
            "first_half_max": max(ys[: max(1, len(ys) // 2)]),
        }
    return out


#: The figures that must not grow at all (the targets): every process's file descriptors and
#: threads, and the database's connections.
RESOURCES = (".fds", ".os_threads", ".threads", "pg.connections")  # the last: all of them


def judge(figures: dict[str, dict[str, Any]]) -> list[tuple[str, bool]]:
    """Each process's and the database's resources: none may grow after the warm-up (the
    least of the last quarter of the samples above the most of their first half)."""
    verdicts = []
    for key, f in sorted(figures.items()):
        if key.endswith(RESOURCES):  # not the connections by state: those come and go
            held = f["last_quarter_min"] <= f["first_half_max"]
            verdicts.append((f"{key} does not grow ({f['after_warmup']:g} -> {f['end']:g})", held))
    return verdicts


def print_report(figures: dict[str, dict[str, Any]], *, everything: bool) -> None:
    """The figures that grow first, then (``everything``) the others."""
    growing = {k: v for k, v in figures.items() if v["grows"]}
    print(f"  {len(growing)} of {len(figures)} figures grow (after the warm-up, per 1,000 games):")
    shown = figures if everything else growing
    for key, f in sorted(shown.items(), key=lambda kv: (not kv[1]["grows"], kv[0])):
        mark = "GROWS" if f["grows"] else "     "
        print(
            f"  {mark} {key}: {f['after_warmup']:g} -> {f['end']:g} (max {f['max']:g}); "
            f"{f['per_1000_games']:+g} per 1,000 games, {f['per_hour']:+g} per hour"
        )
