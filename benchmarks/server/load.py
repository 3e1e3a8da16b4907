"""One load run (closed or open loop) and its figures."""

from __future__ import annotations

import asyncio
import gc
import math
import os
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from app.settings import Settings
from benchmarks.server.config import REPO_ROOT, SERVER_LOG, log
from benchmarks.server.cpu import CpuWindow
from benchmarks.server.driver import Driver, event_loop_runner, watch_own_loop
from benchmarks.server.mirror import Reader
from benchmarks.server.probes import DiskProbe, SpeedProbe, clear_of
from benchmarks.server.profiler import Profiler
from benchmarks.server.stats import in_window, slice_counts, summary_ms, timeline


def wait_for_read_models(url: str, timeout: float = 300.0) -> float | None:
    """After a run: seconds until every projection had processed every event of its topics
    up to the log's head at the run's end (``PullWorker.has_processed``, a query: this
    process processes nothing), so that the next run does not start while they are still
    catching up, and a projection that fell behind shows. None if not within ``timeout``."""
    from app.infra.projection_runner import ReadModels

    started = time.perf_counter()
    with ReadModels(Settings(database_url=url, read_models="off")) as read_models:
        head = read_models.head()
        while True:
            if all(worker.has_processed(head) for worker in read_models.workers.values()):
                waited = time.perf_counter() - started
                log(
                    f"  read models caught up with notification {head} {waited:.1f} s after the run"
                )
                return round(waited, 1)
            if time.perf_counter() - started > timeout:
                log(f"  read models NOT caught up with notification {head} in {timeout:.0f} s")
                return None
            time.sleep(0.1)


def run_load(
    base: str,
    url: str,
    games: int,
    seconds: float,
    warmup: float,
    views: bool,
    seed: int,
    cpu: CpuWindow,
    count_rows: Callable[[], int],
    profile: Callable[[], Profiler] | None = None,
    rate: float | None = None,
    nice: int = 0,
    going_on: list[Driver] | None = None,
) -> tuple[dict[str, Any], list[Driver]]:
    """Drive ``games`` games: flat out (closed loop) or, with ``rate``, an offered rate of
    ``rate`` commands per second in all (open loop, each game 1/games of it, the games'
    schedules spread evenly over one interval). The games are tasks of one event loop
    (uvloop when installed) in a thread of their own; this thread reports progress.
    New games are set up, or, with ``going_on``, the games of an earlier run go on where
    they are. Returns the figures and the games."""
    speed = SpeedProbe()
    disk = DiskProbe(REPO_ROOT / ".bench")
    reader = Reader(url, pool_size=4)
    if going_on:
        drivers = going_on
        for d in drivers:
            d.new_run(reader)
    else:
        prefix = f"r{rate:.0f}g" if rate else "g"  # each run its own players
        drivers = [Driver(i, base, reader, seed * 1000 + i, views, prefix) for i in range(games)]
    interval = games / rate if rate else None
    clock: dict[str, float] = {}
    stalls: list[tuple[float, float]] = []
    set_up = threading.Event()
    failure: list[BaseException] = []

    def first_at(index: int) -> float:
        """When game ``index`` starts: the games start one after another over the first
        half of the warm-up (each player's first command, which creates his command log,
        goes through the route), so that at the window's start they are at every point of
        a deal, as the games of a server that has been up for a while are. (Started
        together, their first deals all ended together, 64 deal ends and next-deal set-ups
        within about a second, and that wave fell at the start of the window.) Open loop: a
        whole number of intervals later than its slot, so the offered commands stay evenly
        spread over an interval. Games that go on from an earlier run are already at every
        point of a deal, and of a game: they all start within the first interval."""
        delay = 0.0 if going_on else warmup / 2 * index / games
        if interval is None:
            return clock["t0"] + delay
        return clock["t0"] + interval * (index / games + math.floor(delay / interval))

    async def drive() -> None:
        if going_on:
            log(f"the {games} games of the closed loop go on, each where that run left it")
        else:
            log(
                f"setting up {games} games over HTTP (4 players each: register, table, seats, start)"
            )
            started = time.perf_counter()
            results = await asyncio.gather(*(d.register() for d in drivers), return_exceptions=True)
            results += await asyncio.gather(
                *(d.new_game() for d in drivers), return_exceptions=True
            )
            problems = [r for r in results if isinstance(r, BaseException)]
            if problems or any(d.mirror is None for d in drivers):
                raise RuntimeError(f"games could not be set up ({problems[:1]}); see {SERVER_LOG}")
            log(f"  set up in {time.perf_counter() - started:.1f} s")
        # The load generator's own garbage collector would stop every game at once (tens
        # of milliseconds for a full collection), then let them all send together: a
        # burst the server never had. It is off while the games are driven.
        gc.collect()
        gc.freeze()
        gc.disable()
        clock["t0"] = t0 = time.perf_counter()
        clock["end"] = t0 + warmup + seconds
        set_up.set()
        watcher = asyncio.create_task(watch_own_loop(stalls, clock["end"]))
        await asyncio.gather(*(d.run(clock["end"], interval, first_at(d.index)) for d in drivers))
        await watcher

    def loop_thread() -> None:
        if nice:  # this thread and the threads it starts (executor, Linux: per thread)
            os.nice(nice)
        try:
            event_loop_runner()(drive())
        except BaseException as exc:  # reported by the caller
            failure.append(exc)
            set_up.set()
        finally:
            gc.enable()
            gc.unfreeze()
            for d in drivers:
                d.close()

    thread = threading.Thread(target=loop_thread, name="load generator", daemon=True)
    thread.start()
    set_up.wait()
    if failure:
        raise failure[0]
    window_start = clock["t0"] + warmup
    window_end = clock["end"]
    log(
        f"driving {games} games for {warmup:.0f} s warm-up + {seconds:.0f} s measured"
        + (
            f", open loop: {rate:.0f} commands/s offered (one per game every {interval * 1000:.0f} ms)"
            if interval
            else ", closed loop: each game sends its next command when the answer is in"
        )
        + (" (each command preceded by GET /deals/{id} as the acting player)" if views else "")
    )
    speed.start(window_end)
    disk.start(window_end)
    while time.perf_counter() < window_start:
        time.sleep(0.05)
    load_before = os.getloadavg()[0]
    cpu.start()
    profiler = profile() if profile else None
    rows_before = count_rows()
    # Progress from counters: scanning the answers' list here, in this process, held the
    # GIL for tens of milliseconds every 5 s and delayed the games' event loop.
    accepted_before = sum(d.accepted for d in drivers)
    last_report = window_start
    while time.perf_counter() < window_end:
        time.sleep(min(0.1, max(0.0, window_end - time.perf_counter())))
        now = time.perf_counter()
        if now - last_report >= 5 or now >= window_end:
            done = sum(d.accepted for d in drivers) - accepted_before
            log(
                f"  {now - window_start:5.1f} s: {done} commands accepted "
                f"({done / (now - window_start):.0f}/s)"
            )
            last_report = now
    cpu_used = cpu.stop()
    cpu_used["load_average_1min_before"] = round(load_before, 2)
    cpu_used["load_average_1min_after"] = round(os.getloadavg()[0], 2)
    rows_after = count_rows()
    thread.join(timeout=60)
    reader.close()

    commands = [row for d in drivers for row in in_window(d.commands, window_start, window_end)]
    accepted = [row[1] for row in commands if row[2] == 200]
    set_up_waits = [row[3] for row in commands if row[3] > 0]
    statuses = Counter(str(row[2]) for row in commands)
    views_rows = [row for d in drivers for row in in_window(d.view_gets, window_start, window_end)]
    mirror_cpu = [
        row[1] for d in drivers for row in in_window(d.mirror_cpu, window_start, window_end)
    ]
    mirror_loads = [
        row[1] for d in drivers for row in in_window(d.mirror_loads, window_start, window_end)
    ]
    between = [
        row[1] for d in drivers for row in in_window(d.between_deals, window_start, window_end)
    ]
    errors: Counter[str] = Counter()
    for d in drivers:
        errors.update(d.errors)
    per_game = [
        sum(1 for row in in_window(d.commands, window_start, window_end) if row[2] == 200)
        for d in drivers
    ]
    events = rows_after - rows_before
    result = {
        "games": games,
        "seconds": seconds,
        "warmup_s": warmup,
        "views": views,
        "games_from": "the previous run" if going_on else "new",
        "load_generator": "one asyncio event loop, raw HTTP/1.1, one connection per game",
        "offered_per_s": rate,
        "commands_sent": len(commands),
        "commands_accepted": len(accepted),
        "commands_per_s": round(len(accepted) / seconds, 1),
        "latency_ms": summary_ms(accepted),
        # A diagnostic, not the target: the accepted commands that no disk stall (a flush of
        # 20 ms or more, DiskProbe) overlapped while they were in flight.
        "latency_clear_of_disk_stalls_ms": summary_ms(
            clear_of(
                [row for row in commands if row[2] == 200],
                disk.stall_spans(window_start, window_end),
            )
        ),
        "latency_all_statuses_ms": summary_ms([row[1] for row in commands]),
        # Open loop: the commands that fell due while their game was still setting up its
        # next deal or game (other requests), and the latency counted from the set-up's end.
        "fell_due_during_set_up": {"n": len(set_up_waits), "waited_ms": summary_ms(set_up_waits)},
        "latency_from_ready_ms": summary_ms([row[1] - row[3] for row in commands if row[2] == 200]),
        "latency_timeline": timeline(commands, window_start, window_end),
        "window_start_perf_counter": window_start,
        "load_generator_stalls": [
            (round(t - window_start, 3), round(late * 1000, 1))
            for t, late in stalls
            if window_start <= t < window_end
        ],
        "slowest": [
            (round(row[0] - window_start, 3), round(row[1] * 1000, 1))
            for row in sorted(commands, key=lambda row: -row[1])[:40]
        ],
        "sent_late_ms": summary_ms(
            [row[1] for d in drivers for row in in_window(d.lateness, window_start, window_end)]
        ),
        "statuses": dict(statuses),
        "errors": dict(errors),
        "error_samples": [s for d in drivers for s in d.error_samples][:10],
        "mirror_mismatches": sum(d.mismatches for d in drivers),
        "accepted_per_game": {
            "min": min(per_game),
            "median": statistics.median(per_game),
            "max": max(per_game),
        },
        "deals_finished_total": sum(d.deals_finished for d in drivers),
        "games_finished_total": sum(d.games_finished for d in drivers),
        "games_finished_by_slice": slice_counts(
            [t for d in drivers for t in d.game_ends], window_start, window_end
        ),
        "between_deals_ms": summary_ms(between),
        "view_gets": {
            "n": len(views_rows),
            "per_s": round(len(views_rows) / seconds, 1),
            "latency_ms": summary_ms([row[1] for row in views_rows if row[2] == 200]),
            "statuses": dict(Counter(str(row[2]) for row in views_rows)),
        },
        "load_generator_own_cost": {
            "move_choice_and_mirror_cpu_us_mean": round(statistics.fmean(mirror_cpu) * 1e6, 1)
            if mirror_cpu
            else None,
            "move_choice_and_mirror_cpu_s_total": round(sum(mirror_cpu), 3),
            "mirror_store_reads": len(mirror_loads),
            "mirror_store_read_ms": summary_ms(mirror_loads),
        },
        "store": {
            "events_written": events,
            "events_per_s": round(events / seconds, 1),
            "events_per_accepted_command": round(events / len(accepted), 2) if accepted else None,
            "stored_events_total": rows_after,
        },
        "cpu": cpu_used,
        "cpu_speed": speed.summary(window_start, window_end),
        "disk_flush": disk.summary(window_start, window_end),
    }
    if profiler is not None:
        result["profile"] = profiler.summary()
    return result, drivers
