"""``make bench``: live streams at scale, ``python -m benchmarks.spectators`` (not a test).

The server (``uvicorn app.main:app``, on PostgreSQL, in a database of its own) is driven by the
server benchmark's games (``benchmarks.server.driver``: each game a task of one event loop,
each sending the acting seat's next legal command, open loop at ``--rate`` commands/s in all),
while ``N`` spectators (``--spectators``, several levels, one run each) follow the games'
deals over ``GET /deals/{id}/stream``: each spectator is one keep-alive TCP connection of the
same event loop, assigned to a game, moving on to the game's next deal at each ``end``.

Per level it reports:
- delivery latency: from the moment the command's answer reached its game (the event was
  committed before) to the moment a spectator read the event's message (p50, p99), for every
  message of a connection opened before the command was answered;
- the commands' latency (p50, p99, from their due time) and how many were accepted per second;
- the database's transactions per second in the benchmark's database
  (``pg_stat_database``: every statement of the server runs in one), and the server's CPU
  (seconds per second of the window, over every uvicorn process);
- what the streams cost the server: its CPU above the run without spectators (scaled to the
  commands served) per message delivered, their openings' reads included, and how many
  streams were opened per second (a spectator opens one per deal);
- the load generator's own CPU (seconds per second): near 1, it is what sets the pace.

Targets (the issue's): delivery p99 under 250 ms with every spectator connected; the
commands' p99 within 25% of the run without spectators; the database's transactions per
second within 10% of the run without spectators (the store is followed once per process,
``app/fanout.py``, not once per stream). The load generator shares the machine's cores with
the server and PostgreSQL: the report says how busy they were.

Run: ``DATABASE_URL=$(scripts/pg.sh url) python -m benchmarks.spectators [--spectators
0,500,2000] [--games 64 --rate 500]``. Figures: ``.bench/spectators-latest.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

import psycopg

from benchmarks.server.config import REPO_ROOT, log
from benchmarks.server.database import fresh_database
from benchmarks.server.driver import Driver, Planned, event_loop_runner
from benchmarks.server.mirror import Reader
from benchmarks.server.server_process import Server
from benchmarks.server.stats import summary_ms

DELIVERY_P99_MS = 250.0
COMMANDS_P99_RATIO = 1.25
DATABASE_RATIO = 0.10
CLK_TCK = os.sysconf("SC_CLK_TCK")
#: A message's ``id:`` line (the HTTP chunk-size lines between messages never match).
MESSAGE_ID = re.compile(rb"^id: (\d+)$", re.MULTILINE)


@dataclass
class TimedDriver(Driver):
    """A game that notes when each of its deal's steps was answered."""

    answered: dict[tuple[UUID, int], float] = field(default_factory=dict)

    def settle(self, planned: Planned, answer: dict[str, Any]) -> bool:
        assert self.mirror is not None and self.deal_id is not None
        now = time.perf_counter()
        for step in range(self.mirror.version + 1, int(answer["step"]) + 1):
            self.answered[(self.deal_id, step)] = now
        return super().settle(planned, answer)


@dataclass
class Spectator:
    game: TimedDriver
    host: str
    port: int
    # (deal, step, time received, time the connection was opened)
    received: list[tuple[UUID, int, float, float]] = field(default_factory=list)
    errors: int = 0
    opened: list[float] = field(default_factory=list)  # when each stream was opened

    async def watch(self, stop_at: float) -> None:
        while time.perf_counter() < stop_at:
            deal = self.game.deal_id
            if deal is None:
                await asyncio.sleep(0.05)
                continue
            try:
                await self._follow(deal, stop_at)
            except (OSError, asyncio.IncompleteReadError):
                self.errors += 1
                await asyncio.sleep(0.1)
            while self.game.deal_id == deal and time.perf_counter() < stop_at:
                await asyncio.sleep(0.05)  # the deal ended: wait for the game's next one

    async def _follow(self, deal: UUID, stop_at: float) -> None:
        """One stream until its ``end`` (or the window's): what arrives is read in chunks,
        and each complete message's ``id`` noted with the chunk's arrival time. (It read a
        line at a time under ``wait_for`` before, a task per line: with hundreds of streams
        the load generator, not the server, set the pace.)"""
        reader, writer = await asyncio.open_connection(self.host, self.port)
        opened = time.perf_counter()
        self.opened.append(opened)
        try:
            writer.write(
                f"GET /deals/{deal}/stream HTTP/1.1\r\nHost: {self.host}\r\n"
                "Accept: text/event-stream\r\n\r\n".encode()
            )
            pending = b""
            while (left := stop_at - time.perf_counter()) > 0:
                try:
                    async with asyncio.timeout(max(0.01, left)):
                        data = await reader.read(65536)
                except TimeoutError:
                    return
                if not data:
                    return
                got = time.perf_counter()
                pending += data
                cut = pending.rfind(b"\n\n")  # complete messages end with a blank line
                if cut < 0:
                    continue
                complete, pending = pending[: cut + 2], pending[cut + 2 :]
                for step in MESSAGE_ID.findall(complete):
                    self.received.append((deal, int(step), got, opened))
                if b"event: end\n" in complete:
                    return
        finally:
            writer.close()


def db_transactions(url: str) -> int:
    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        row = conn.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s",
            (name,),
        ).fetchone()
    assert row is not None
    return int(row[0])


def cpu_seconds(pids: Sequence[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / CLK_TCK


def run_level(
    server: Server, url: str, reader: Reader, spectators: int, args: argparse.Namespace, run: int
) -> dict[str, Any]:
    host, port = "127.0.0.1", server.port

    async def main() -> dict[str, Any]:
        games = [
            TimedDriver(i, server.base, reader, args.seed + i, False, name_prefix=f"s{run}g")
            for i in range(args.games)
        ]
        for game in games:
            await game.register()
            await game.new_game()
        watchers = [Spectator(games[i % len(games)], host, port) for i in range(spectators)]
        start = time.perf_counter() + 1.0
        stop_at = start + args.warmup + args.seconds
        interval = len(games) / args.rate
        tasks = [
            asyncio.create_task(g.run(stop_at, interval, start + i * interval / len(games)))
            for i, g in enumerate(games)
        ]
        for i, w in enumerate(watchers):  # connect them during the first second, spread
            tasks.append(asyncio.create_task(w.watch(stop_at)))
            if i % 50 == 49:
                await asyncio.sleep(0.01)
        await asyncio.sleep(max(0.0, start + args.warmup - time.perf_counter()))
        window_start = time.perf_counter()
        xact0, cpu0 = db_transactions(url), cpu_seconds(server.pids())
        own0 = time.process_time()
        await asyncio.sleep(max(0.0, stop_at - time.perf_counter()))
        window_end = time.perf_counter()
        xact1, cpu1 = db_transactions(url), cpu_seconds(server.pids())
        own1 = time.process_time()
        await asyncio.gather(*tasks)
        for g in games:
            g.close()
        seconds = window_end - window_start
        latencies = [
            lat for g in games for (end, lat, status, _) in g.commands
            if status == 200 and window_start <= end <= window_end
        ]  # fmt: skip
        answered: dict[tuple[UUID, int], float] = {}
        for g in games:
            answered.update(g.answered)
        delivery = []
        for w in watchers:
            for deal, step, got, opened in w.received:
                at = answered.get((deal, step))
                if at is not None and opened < at and window_start <= got <= window_end:
                    delivery.append(max(0.0, got - at))
        return {
            "spectators": spectators,
            "connected": sum(1 for w in watchers if w.received),
            "commands_per_second": round(len(latencies) / seconds, 1),
            "commands_ms": summary_ms(latencies),
            "delivery_ms": summary_ms(delivery),
            "messages_per_second": round(len(delivery) / seconds, 1),
            "streams_opened_per_second": round(
                sum(window_start <= at <= window_end for w in watchers for at in w.opened)
                / seconds,
                1,
            ),
            "db_transactions_per_second": round((xact1 - xact0) / seconds, 1),
            "server_cpu_per_second": round((cpu1 - cpu0) / seconds, 2),
            "load_generator_cpu_per_second": round((own1 - own0) / seconds, 2),
            "errors": sum(sum(g.errors.values()) for g in games) + sum(w.errors for w in watchers),
        }

    result: dict[str, Any] = event_loop_runner()(main())
    return result


def stream_cost(anchor: dict[str, Any], level: dict[str, Any]) -> float | None:
    """The server's CPU the streams took per message delivered, in microseconds: the level's
    CPU less the anchor's (no spectators) scaled to the commands served, over the messages
    (their streams' opening reads included). None for the anchor itself."""
    messages = level["messages_per_second"]
    if level is anchor or not messages or not anchor["commands_per_second"]:
        return None
    commands = level["commands_per_second"] / anchor["commands_per_second"]
    extra = float(level["server_cpu_per_second"] - anchor["server_cpu_per_second"] * commands)
    return round(max(0.0, extra) / float(messages) * 1e6, 1)


def judge(levels: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    base = levels[0]
    verdicts = []
    for level in levels[1:]:
        n = level["spectators"]
        p99 = level["delivery_ms"].get("p99")
        verdicts.append(
            (f"{n} spectators: delivery p99 {p99} ms < {DELIVERY_P99_MS:.0f} ms",
             p99 is not None and p99 < DELIVERY_P99_MS)
        )  # fmt: skip
        ratio = level["commands_ms"]["p99"] / max(base["commands_ms"]["p99"], 1e-9)
        verdicts.append(
            (f"{n} spectators: commands p99 {ratio:.2f}x the run without (<= {COMMANDS_P99_RATIO})",
             ratio <= COMMANDS_P99_RATIO)
        )  # fmt: skip
        db = level["db_transactions_per_second"] / max(base["db_transactions_per_second"], 1e-9)
        verdicts.append(
            (f"{n} spectators: database transactions/s {db:.2f}x the run without "
             f"(within {DATABASE_RATIO:.0%})", abs(db - 1) <= DATABASE_RATIO)
        )  # fmt: skip
    return verdicts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.spectators", description=__doc__)
    parser.add_argument("--spectators", default="0,250,1000", help="levels, comma-separated")
    parser.add_argument("--games", type=int, default=16)
    parser.add_argument("--rate", type=float, default=200.0, help="commands/s offered in all")
    parser.add_argument("--seconds", type=float, default=15.0, help="measured, per level")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--pool-size", type=int, default=10, help="CANASTA_POSTGRES_POOL_SIZE")
    parser.add_argument(
        "--threads", type=int, default=None, help="CANASTA_THREADPOOL_SIZE (default: the server's)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db-name", default="canasta_bench_streams")
    args = parser.parse_args(argv)
    base_url = os.environ.get("DATABASE_URL", "")
    if not base_url:
        raise SystemExit("set DATABASE_URL (e.g. DATABASE_URL=$(scripts/pg.sh url))")
    levels = [int(n) for n in args.spectators.split(",")]
    if levels[0] != 0:
        levels.insert(0, 0)  # the anchor: the same load without spectators
    url = fresh_database(base_url, args.db_name)
    server = Server(url, args.workers, pool_size=args.pool_size, threads=args.threads)
    server.start()
    reader = Reader(url, 4)
    results: list[dict[str, Any]] = []
    try:
        print(
            f"canasta-ledger spectators: {args.games} games at {args.rate:.0f} commands/s, "
            f"{args.workers} worker(s), {args.seconds:.0f} s per level"
        )
        for run, n in enumerate(levels):
            log(f"  {n} spectators ...")
            r = run_level(server, url, reader, n, args, run)
            r["stream_cpu_us_per_message"] = stream_cost(results[0] if results else r, r)
            results.append(r)
            print(
                f"  {n:>5} spectators ({r['connected']} received): commands "
                f"{r['commands_per_second']}/s p50 {r['commands_ms'].get('p50')} "
                f"p99 {r['commands_ms'].get('p99')} ms; delivery p50 "
                f"{r['delivery_ms'].get('p50')} p99 {r['delivery_ms'].get('p99')} ms "
                f"({r['messages_per_second']} messages/s); database "
                f"{r['db_transactions_per_second']} transactions/s; server CPU "
                f"{r['server_cpu_per_second']} s/s (the load generator "
                f"{r['load_generator_cpu_per_second']} s/s), "
                f"{r['stream_cpu_us_per_message']} us a "
                f"message ({r['streams_opened_per_second']} streams opened/s); "
                f"errors {r['errors']}"
            )
    finally:
        reader.close()
        server.stop()
    verdicts = judge(results)
    for what, met in verdicts:
        print(f"  target: {what}: {'met' if met else 'MISSED'}")
    out = REPO_ROOT / ".bench" / "spectators-latest.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"levels": results, "targets": verdicts}, indent=2))
    return 0 if all(met for _, met in verdicts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
