"""Replay of a finished game to an arbitrary step; idle round trips."""

from __future__ import annotations

import os
import random
import time
from typing import Any
from uuid import UUID

from app.application import CanastaApp
from app.autoplay import new_table, play_game
from app.settings import Settings, eventsourcing_env
from benchmarks.server.config import MIN_DEALS, log
from benchmarks.server.http_client import RawClient
from benchmarks.server.stats import summary_ms

# --- replay ---------------------------------------------------------------------------------


def run_replay(url: str, base: str, samples: int, seed: int) -> dict[str, Any]:
    """Play a whole 5000-point classic game, then replay random deals to random steps."""
    settings = Settings(database_url=url)
    app = CanastaApp(env=eventsourcing_env(settings))
    started = time.perf_counter()
    rng = random.Random(seed)
    # The shuffles are random (the server's own seeds): a game may end after two deals.
    # Keep the longest of up to four games, stopping at the first of MIN_DEALS or more.
    table = None
    for _ in range(4):
        table_id = new_table(app, "classic", 4)  # players player0..player3
        played_game = play_game(app, table_id, rng, max_deals=200)
        if table is None or len(played_game.deals) > len(table.deals):
            table = played_game
        if len(table.deals) >= MIN_DEALS:
            break
    assert table is not None
    table_id = table.id
    deals = [UUID(d) for d in table.deals]
    lengths = {d: app.get_deal(d).version for d in deals}
    app.close()
    played = time.perf_counter() - started
    log(
        f"  played a {table.target}-point game ({played:.1f} s in all): {len(deals)} deals, "
        f"{sum(lengths.values())} deal events, status {table.status}, totals {table.totals}"
    )

    points = [(d := rng.choice(deals), rng.randint(1, lengths[d])) for _ in range(samples)]
    cold_settings = settings.model_copy(update={"aggregate_cache_maxsize": 0})
    cold = CanastaApp(env=eventsourcing_env(cold_settings))
    first_started = time.perf_counter()
    cold.get_deal(points[0][0], version=points[0][1])  # the very first read opens connections
    first = time.perf_counter() - first_started
    in_process = []
    for deal_id, step in points:
        t = time.perf_counter()
        deal = cold.get_deal(deal_id, version=step)
        in_process.append(time.perf_counter() - t)
        assert deal.version == step
    whole_game = []
    for _ in range(5):
        t = time.perf_counter()
        rebuilt = cold.get_table(table_id)
        for rebuilt_deal in rebuilt.deals:
            cold.get_deal(UUID(rebuilt_deal))
        whole_game.append(time.perf_counter() - t)
    cold.close()

    over_http: dict[str, list[float]] = {"player": [], "spectator": []}
    client = RawClient(base)
    try:
        r = client.request("POST", "/players", {"name": "player1"})  # seat 1 of that game
        r.raise_for_status()
        player = {"Authorization": f"Bearer {r.json()['token']}"}
        for deal_id, step in points:
            for who, headers in (("player", player), ("spectator", {})):
                t = time.perf_counter()
                r = client.request("GET", f"/deals/{deal_id}/replay?step={step}", None, headers)
                over_http[who].append(time.perf_counter() - t)
                r.raise_for_status()
                view = r.json()
                assert view["step"] == step
                assert (view["hand"] is None) == (who == "spectator")
    finally:
        client.close()
    return {
        "game": {
            "target": table.target,
            "status": table.status,
            "deals": len(deals),
            "deal_events": sum(lengths.values()),
            "longest_deal": max(lengths.values()),
            "play_s": round(played, 2),
        },
        "samples": samples,
        "first_read_ms": round(first * 1000, 2),
        "cold_get_deal_version_ms": summary_ms(in_process),
        "http_replay_player_ms": summary_ms(over_http["player"]),
        "http_replay_spectator_ms": summary_ms(over_http["spectator"]),
        "cold_rebuild_whole_game_ms": summary_ms(whole_game),
    }


def idle_round_trips(base: str, n: int = 40) -> dict[str, Any]:
    """Sequential requests on one keep-alive connection to the idle server: the floor of
    any latency (and a check for the 40 ms Nagle/delayed-ACK stall, see uvicorn_nodelay)."""
    client = RawClient(base)
    try:
        r = client.request("POST", "/players", {"name": f"probe{os.getpid()}"})
        r.raise_for_status()
        headers = {"Authorization": f"Bearer {r.json()['token']}"}
        r = client.request("POST", "/tables", {"entry": "classic", "players": 4}, headers)
        r.raise_for_status()
        table = r.json()["id"]
        out: dict[str, Any] = {}
        for name, path in (("health", "/health"), ("table", f"/tables/{table}")):
            times = []
            for _ in range(n):
                started = time.perf_counter()
                client.request("GET", path).raise_for_status()
                times.append(time.perf_counter() - started)
            out[name] = summary_ms(times[5:])
        return out
    finally:
        client.close()
