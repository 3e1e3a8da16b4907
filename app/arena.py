"""The arena (``canasta arena``, docs/bots.md): bots of two or more levels play whole games
against each other in memory, in parallel over the machine's cores, and the results are
summed up per level (wins with a Wilson 95% interval, score margin, CPU per move).

Each game is played through the application service on the in-memory store, exactly as a
table's game is: the host's start, every deal, every command decided and recorded by the
rules, the table's totals and the game's end. A game is fully determined by the arena's seed
and its number, so a run gives the same figures whatever the number of jobs.
"""

from __future__ import annotations

import math
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any
from uuid import UUID

from app.application import CanastaApp
from app.autoplay import HOST, SeededRandom, new_table
from bots import Bot, PublicMemory, choose, get_bot
from bots.strong import DEFAULT_MS, ROLLOUTS, Strong
from domain.deal import Deal
from domain.errors import SetupError
from domain.legal import seat_to_act
from domain.state import DealState
from domain.table import FINISHED, PLAYING
from domain.variants import get_variant

MEMORY_ENV = {
    "PERSISTENCE_MODULE": "eventsourcing.popo",
    "AGGREGATE_CACHE_FASTFORWARD": "n",
    "AGGREGATE_CACHE_MAXSIZE": "50",
    "IS_SNAPSHOTTING_ENABLED": "n",
}
#: Safety caps: a game past either counts as unfinished (it should never happen).
MAX_DEALS = 60
MAX_COMMANDS_PER_DEAL = 5000
Z95 = 1.959964


class ArenaError(ValueError):
    """A bad argument (unknown level or entry, a count out of range)."""


@dataclass(frozen=True)
class Setup:
    entry: str
    players: int
    bots: tuple[str, ...]
    games: int
    seed: int = 0
    strong_ms: float | None = DEFAULT_MS  # the strong level's budget (bots.strong)
    strong_rollouts: int = ROLLOUTS

    def bot(self, level: str) -> Bot:
        """The bot of ``level``, the strong one with this run's budget."""
        if level == "strong":
            return Strong(self.strong_rollouts, self.strong_ms)
        return get_bot(level)

    def check(self) -> None:
        try:
            variant = get_variant(self.entry)
        except SetupError as exc:
            raise ArenaError(exc.message) from None
        if self.players not in variant.player_counts:
            counts = ", ".join(map(str, variant.player_counts))
            raise ArenaError(f"{self.entry} is played by {counts} players, not {self.players}")
        if len(self.bots) < 2 or len(set(self.bots)) != len(self.bots):
            raise ArenaError("name two or more different bot levels, e.g. basic,random")
        for level in self.bots:
            try:
                get_bot(level)
            except KeyError as exc:
                raise ArenaError(str(exc.args[0])) from None
        if self.games < 1:
            raise ArenaError(f"the number of games must be at least 1, not {self.games}")
        if self.strong_rollouts < 1 or (self.strong_ms is not None and self.strong_ms < 0):
            raise ArenaError("the strong level needs at least one rollout and a budget >= 0 ms")


@dataclass
class GameResult:
    number: int
    finished: bool
    winners: list[str]  # the levels among the winners
    totals: dict[str, int]  # level -> its best side's final total
    deals: int
    cpu_ms: dict[str, list[float]] = field(default_factory=dict)  # level -> per move


def levels_by_side(setup: Setup, sides: Sequence[str], number: int) -> dict[str, str]:
    """Side i plays level ``i % levels``, shifted by one in every other game, so that each
    level plays each side as often (sides alternate around the table)."""
    shift = number % len(setup.bots)
    return {side: setup.bots[(i + shift) % len(setup.bots)] for i, side in enumerate(sides)}


def play_game(setup: Setup, number: int) -> GameResult:
    """Game ``number`` of the run: its own table, bots and chance, all from the seed."""
    seed = f"{setup.seed}:{number}"
    app = CanastaApp(env=MEMORY_ENV, random=SeededRandom(random.Random(f"arena-table:{seed}")))
    table_id = new_table(app, setup.entry, setup.players)
    deal_id = app.start_game(table_id, HOST)
    table = app.get_table(table_id)
    assert table.sides is not None
    level_of = levels_by_side(setup, sorted(table.sides), number)
    side_of = app.get_deal(deal_id).state.side_of
    rngs = [random.Random(f"arena-bot:{seed}:{s}") for s in range(setup.players)]
    cpu: dict[str, list[float]] = {level: [] for level in setup.bots}
    finished = False
    for _deal in range(MAX_DEALS):
        deal = play_bot_deal(
            app,
            deal_id,
            lambda seat: level_of[side_of[seat]],
            rngs,
            table.target,
            cpu,
            bots={level: setup.bot(level) for level in setup.bots},
        )
        if seat_to_act(deal.state) is not None:
            break  # the deal did not end: unfinished
        table = app.get_table(table_id)
        if table.status != PLAYING:
            finished = table.status == FINISHED
            break
        deal_id = app.start_next_deal(table_id, HOST)
    totals: dict[str, int] = {}
    for side, total in table.totals.items():
        level = level_of[side]
        totals[level] = max(total, totals.get(level, total))
    winners = sorted({level_of[s] for s in table.winners or []}) if finished else []
    return GameResult(number, finished, winners, totals, len(table.deals), cpu)


def play_bot_deal(
    app: CanastaApp,
    deal_id: UUID,
    level_of: Callable[[int], str],
    rngs: Sequence[random.Random],
    target: int,
    cpu: dict[str, list[float]] | None = None,
    *,
    before: Callable[[DealState, int, PublicMemory], None] | None = None,
    max_commands: int = MAX_COMMANDS_PER_DEAL,
    bots: Mapping[str, Bot] | None = None,
) -> Deal:
    """Play a deal with a bot in every seat (``level_of(seat)``, chance from ``rngs[seat]``)
    until it ends or ``max_commands`` were played; every command goes through the application
    service (the rules decide it, and a refusal raises). ``cpu`` collects each level's CPU
    time per move in ms (view, menu and decision); ``before`` sees every decision's input;
    ``bots`` overrides ``bots.LEVELS`` (the strong level's budget)."""
    deal = app.get_deal(deal_id)
    memory = PublicMemory()
    memory.observe_stored(app.events.get(deal_id), deal.state)
    for _ in range(max_commands):
        state = deal.state
        seat = seat_to_act(state)
        if seat is None:
            break
        if before is not None:
            before(state, seat, memory)
        level = level_of(seat)
        started = time.process_time()
        bot = bots[level] if bots and level in bots else get_bot(level)
        command = choose(bot, state, seat, memory, target, rngs[seat])
        if cpu is not None:
            cpu.setdefault(level, []).append((time.process_time() - started) * 1000)
        deal = app.act(deal_id, state.player_ids[seat], command)
        memory.observe_stored(app.events.get(deal_id, gt=memory.version), deal.state)
    return deal


# --- the run -------------------------------------------------------------------------------


def _play(args: tuple[Setup, int]) -> GameResult:
    return play_game(*args)


def run(
    setup: Setup,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[GameResult]:
    """Play the games over ``jobs`` processes (default: one per core), in order of number."""
    setup.check()
    jobs = max(1, min(jobs or os.cpu_count() or 1, setup.games))
    work = [(setup, n) for n in range(setup.games)]
    results: list[GameResult] = []
    if jobs == 1:
        for item in work:
            results.append(_play(item))
            if progress:
                progress(len(results), setup.games)
    else:
        with get_context("spawn").Pool(jobs) as pool:
            for result in pool.imap_unordered(_play, work):
                results.append(result)
                if progress:
                    progress(len(results), setup.games)
    return sorted(results, key=lambda r: r.number)


def wilson(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default)."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def summary(setup: Setup, results: Sequence[GameResult], seconds: float) -> dict[str, Any]:
    """The figures per level (the ``--json`` object, docs/bots.md)."""
    games = len(results)
    done = [r for r in results if r.finished]
    out: dict[str, Any] = {
        "entry": setup.entry,
        "players": setup.players,
        "bots": list(setup.bots),
        "seed": setup.seed,
        "games": games,
        "unfinished": games - len(done),
        "wins": {},
        "win_rate": {},
        "ci95": {},
        "margin": {},
        "cpu_ms_per_move": {},
        "deals_per_game": round(statistics.fmean(r.deals for r in results), 2),
        "seconds": round(seconds, 1),
    }
    for level in setup.bots:
        wins = sum(1 for r in done if r.winners == [level])
        low, high = wilson(wins, games)
        margins = [
            r.totals[level] - max(t for other, t in r.totals.items() if other != level)
            for r in done
        ]
        moves = sorted(ms for r in results for ms in r.cpu_ms.get(level, []))
        out["wins"][level] = wins
        out["win_rate"][level] = round(wins / games, 4)
        out["ci95"][level] = [round(low, 4), round(high, 4)]
        out["margin"][level] = round(statistics.fmean(margins), 1) if margins else None
        out["cpu_ms_per_move"][level] = {
            "mean": round(statistics.fmean(moves), 3) if moves else None,
            "p99": round(moves[min(len(moves) - 1, int(len(moves) * 0.99))], 3) if moves else None,
            "moves": len(moves),
        }
    return out


def report(s: dict[str, Any]) -> str:
    """The summary as text, one line per level."""
    lines = [
        f"arena: {s['entry']} {s['players']} players, {s['games']} games, seed {s['seed']}, "
        f"{s['deals_per_game']} deals a game, {s['seconds']} s",
        f"  {'bot':<8} {'wins':>5} {'win rate':>9}  {'95% interval':<15} {'margin':>8}  "
        f"{'CPU/move mean':>13} {'p99':>8}",
    ]
    for level in s["bots"]:
        low, high = s["ci95"][level]
        cpu = s["cpu_ms_per_move"][level]
        margin = "-" if s["margin"][level] is None else f"{s['margin'][level]:+.0f}"
        mean = "-" if cpu["mean"] is None else f"{cpu['mean']:.2f} ms"
        p99 = "-" if cpu["p99"] is None else f"{cpu['p99']:.2f} ms"
        lines.append(
            f"  {level:<8} {s['wins'][level]:>5} {s['win_rate'][level]:>9.1%}  "
            f"{low:>6.1%}–{high:<7.1%} {margin:>8}  {mean:>13} {p99:>8}"
        )
    lines.append(f"  unfinished games: {s['unfinished']}")
    return "\n".join(lines)


def stderr_progress(every: float = 5.0) -> Callable[[int, int], None]:
    """A progress line on stderr at most every ``every`` seconds, and at the end."""
    last = [time.monotonic()]

    def show(done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - last[0] >= every:
            last[0] = now
            print(f"arena: {done}/{total} games", file=sys.stderr, flush=True)

    return show
