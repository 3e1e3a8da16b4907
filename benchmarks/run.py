"""``make bench``: speed of the engine and the store (not a test; figures for the notes).

Measures, for random legal 4-player ``classic`` play with move generation included:
deals per second in memory and on SQLite (one process, one core), and the time to
rebuild a finished game (every deal and the table) from the SQLite store in a fresh
process-like application with an empty cache.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from uuid import UUID

from app.application import CanastaApp
from app.autoplay import new_table, play_deal, play_game
from app.settings import MEMORY, Settings, eventsourcing_env
from benchmarks.interpreter import described, interpreter
from domain.table import PLAYING
from domain.variants import VARIANTS


def deals_per_second(
    app: CanastaApp, entry: str, players: int, seconds: float, seed: int
) -> tuple[float, int, int]:
    """Play whole games for about ``seconds``; count complete deals and commands."""
    rng = random.Random(seed)
    deals = commands = 0
    counter = {"n": 0}

    def count(_deal: object) -> None:
        counter["n"] += 1

    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        table_id = new_table(app, entry, players)
        deal_id = app.start_game(table_id, "player0")
        while True:
            play_deal(app, deal_id, rng, count)
            deals += 1
            if app.get_table(table_id).status != PLAYING or time.perf_counter() - started > seconds:
                break
            deal_id = app.start_next_deal(table_id, "player0")
    elapsed = time.perf_counter() - started
    commands = counter["n"]
    return deals / elapsed, deals, commands


def rebuild_times(
    store: Path, entry: str, players: int, seed: int, repeats: int
) -> tuple[list[float], list[float], int, int]:
    """Finish a game on SQLite, then rebuild it `repeats` times from a cold application."""
    settings = Settings(data_dir=store)
    app = CanastaApp(env=eventsourcing_env(settings))
    table_id = new_table(app, entry, players)
    table = play_game(app, table_id, random.Random(seed), max_deals=30)
    deals = list(table.deals)
    events = sum(app.get_deal(UUID(d)).version for d in deals)
    app.close()
    times, full = [], []
    for _ in range(repeats):
        cold = CanastaApp(
            env=eventsourcing_env(settings.model_copy(update={"aggregate_cache_maxsize": 0}))
        )
        started = time.perf_counter()
        rebuilt = cold.get_table(table_id)
        for deal_id in rebuilt.deals:
            cold.get_deal(UUID(deal_id))
        times.append(time.perf_counter() - started)
        started = time.perf_counter()
        for deal_id in rebuilt.deals:  # every event folded again, snapshots ignored
            aggregate: Any = None
            event: Any
            for event in cold.events.get(UUID(deal_id)):
                aggregate = event.mutate(aggregate)
        full.append(time.perf_counter() - started)
        cold.close()
    return times, full, len(deals), events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0, help="per throughput figure")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--entry", default="classic", choices=sorted(VARIANTS))
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args()
    entry, players = args.entry, args.players
    target = "   target >= 100" if (entry, players) == ("classic", 4) else ""

    print(
        f"canasta-ledger benchmark: random legal {players}-player {entry}, move generation included"
    )
    print("  " + described(sys.version.split()[0], interpreter()))
    memory = CanastaApp(env=eventsourcing_env(Settings(database_url=MEMORY)))
    deals_per_second(memory, entry, players, 1.0, args.seed)  # warm up
    rate, deals, commands = deals_per_second(memory, entry, players, args.seconds, args.seed)
    print(
        f"  in memory : {rate:8.1f} deals/s  ({deals} deals, {commands} commands, "
        f"{commands / deals:.0f} commands/deal){target}"
    )
    with tempfile.TemporaryDirectory(prefix="canasta-bench-") as tmp:
        sqlite = CanastaApp(env=eventsourcing_env(Settings(data_dir=Path(tmp))))
        rate, deals, commands = deals_per_second(sqlite, entry, players, args.seconds, args.seed)
        sqlite.close()
        print(f"  on SQLite : {rate:8.1f} deals/s  ({deals} deals, {commands} commands)")
    with tempfile.TemporaryDirectory(prefix="canasta-bench-") as tmp:
        times, full, deals, events = rebuild_times(Path(tmp), entry, players, args.seed, 20)
        ms = [t * 1000 for t in times]
        full_ms = [t * 1000 for t in full]
        print(
            f"  rebuild a finished game from SQLite ({deals} deals, {events} events, cold cache): "
            f"median {statistics.median(ms):.1f} ms, max {max(ms):.1f} ms   target < 50 ms"
        )
        print(
            f"  the same, folding every stored event (no snapshots): "
            f"median {statistics.median(full_ms):.1f} ms, max {max(full_ms):.1f} ms"
        )


if __name__ == "__main__":
    main()
