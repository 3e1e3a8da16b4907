"""``python -m benchmarks.menu``: the move menu's latency (``make bench`` runs it too).

Deals of each entry are played by the menu player (``app.autoplay.menu_choice``), every
command chosen from the acting player's menu:

- in the domain (in memory): the time of ``domain.menu.menu(state, seat)`` for the seat to
  act, at every step;
- over HTTP: a real ``uvicorn app.main:app`` (one process, SQLite in a temporary directory as
  ``make run`` starts it, or a fresh PostgreSQL database with ``--database-url``), and the
  round trip of every ``GET /deals/{id}/moves`` the players send (one kept-alive connection):
  the acting player's, and the other players' empty ones asked on the way (who acts is learnt
  from the menus, as a client knowing no rule would).

Prints p50, p99 and the maximum per entry, in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from app.application import CanastaApp
from app.autoplay import HOST, SeededRandom, default_teams, menu_choice, new_table
from app.settings import MEMORY, Settings, eventsourcing_env
from benchmarks.server.server_process import free_port
from domain.commands import COMMAND_NAMES
from domain.legal import seat_to_act
from domain.menu import menu

REPO = Path(__file__).resolve().parents[1]
#: The entries at their usual player counts.
TABLES = [("classic", 4), ("extra_six", 6), ("modern_american", 4), ("ponytail", 4)]
PG_DATABASE = "canasta_menu_bench"


def percentiles(samples: list[float], what: str = "menus") -> str:
    ms = sorted(s * 1000 for s in samples)
    p50, p99 = ms[len(ms) // 2], ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    return f"p50 {p50:6.2f} ms  p99 {p99:6.2f} ms  max {ms[-1]:6.2f} ms  ({len(ms)} {what})"


# --- the domain ---------------------------------------------------------------------------------


def domain_times(
    entry: str, players: int, deals: int, seed: int
) -> tuple[list[float], list[float], int]:
    """``menu()`` of the seat to act at every step of ``deals`` deals: the wall-clock times,
    the thread's CPU times (what other work on the machine does not inflate), the moves
    listed."""
    rng = random.Random(f"menu-bench:{seed}")
    app = CanastaApp(
        env=eventsourcing_env(Settings(database_url=MEMORY)), random=SeededRandom(seed)
    )
    times: list[float] = []
    cpu: list[float] = []
    listed = 0
    for _ in range(deals):
        deal_id = app.start_game(new_table(app, entry, players), HOST)
        deal = app.get_deal(deal_id)
        while (seat := seat_to_act(deal.state)) is not None:
            started, started_cpu = time.perf_counter(), time.thread_time()
            m = menu(deal.state, seat)
            times.append(time.perf_counter() - started)
            cpu.append(time.thread_time() - started_cpu)
            listed += len(m.moves)
            move = m.moves[menu_choice([COMMAND_NAMES[type(c)] for c in m.moves], rng)]
            deal = app.act(deal_id, deal.state.player_ids[seat], move)
    app.close()
    return times, cpu, listed


# --- over HTTP ----------------------------------------------------------------------------------


@contextmanager
def server(database_url: str | None) -> Iterator[str]:
    """``uvicorn app.main:app`` on a free port (SQLite in a temporary directory, or
    ``database_url``); yields its base URL."""
    with tempfile.TemporaryDirectory(prefix="canasta-menu-bench-") as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CANASTA_")}
        env.pop("DATABASE_URL", None)
        env["CANASTA_DATA_DIR"] = tmp
        env["CANASTA_RATE_LIMITS"] = "false"  # one client, as fast as it is answered
        if database_url:
            env["DATABASE_URL"] = database_url
        port = free_port()
        cmd = [sys.executable, "-m", "uvicorn", "app.main:app", "--port", str(port)]
        cmd += ["--host", "127.0.0.1", "--no-access-log", "--log-level", "warning"]
        proc = subprocess.Popen(cmd, cwd=REPO, env=env)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{base}/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit("the server did not start")
                time.sleep(0.1)
            yield base
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def http_times(
    http: httpx.Client, entry: str, players: int, deals: int, seed: int
) -> tuple[list[float], list[float], list[float]]:
    """Every ``GET /deals/{id}/moves`` of ``deals`` deals played from the menus over HTTP:
    (the acting player's, the empty ones, and as a baseline under the same load, his
    ``GET /deals/{id}`` right after each of his menus)."""
    rng = random.Random(f"menu-bench-http:{seed}")
    prefix = f"b{seed}{entry[:2]}{players}-{rng.randrange(10**6)}-"
    tokens = []
    for i in range(players):
        answer = http.post("/players", json={"name": f"{prefix}{i}"})
        answer.raise_for_status()
        tokens.append({"Authorization": f"Bearer {answer.json()['token']}"})
    table = http.post("/tables", json={"entry": entry, "players": players}, headers=tokens[0])
    table.raise_for_status()
    table_id = table.json()["id"]
    for seat in range(players):
        http.post(f"/tables/{table_id}/seats", json={"seat": seat}, headers=tokens[seat])
    teams = default_teams(entry, players)
    if teams:
        http.put(f"/tables/{table_id}/teams", json={"teams": teams}, headers=tokens[0])
    acting_times: list[float] = []
    empty_times: list[float] = []
    view_times: list[float] = []
    deal_id = http.post(f"/tables/{table_id}/start", headers=tokens[0]).json()["deal"]
    for number in range(deals):
        if number:
            deal_id = http.post(f"/tables/{table_id}/deals", headers=tokens[0]).json()["deal"]
        last = 0
        while True:
            body: dict[str, Any] | None = None
            for seat in [last, *(s for s in range(players) if s != last)]:
                started = time.perf_counter()
                answer = http.get(f"/deals/{deal_id}/moves", headers=tokens[seat])
                elapsed = time.perf_counter() - started
                answer.raise_for_status()
                if answer.json()["moves"]:
                    acting_times.append(elapsed)
                    body, last = answer.json(), seat
                    break
                empty_times.append(elapsed)
            if body is None:
                break  # the deal is over
            started = time.perf_counter()
            http.get(f"/deals/{deal_id}", headers=tokens[last]).raise_for_status()
            view_times.append(time.perf_counter() - started)
            moves = body["moves"]
            request = {
                "seq": body["next_seq"],
                "expect": body["expect"],
                "command": moves[menu_choice([m["type"] for m in moves], rng)],
            }
            sent = http.post(f"/deals/{deal_id}/commands", json=request, headers=tokens[last])
            if sent.status_code != 200:
                raise SystemExit(f"a move of the menu was refused: {request} -> {sent.text}")
        if http.get(f"/tables/{table_id}").json()["status"] != "playing":
            break
    return acting_times, empty_times, view_times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--deals", type=int, default=2, help="deals per entry (default 2)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database-url", help="PostgreSQL (a fresh database is made in it)")
    parser.add_argument("--no-http", action="store_true", help="the domain's figures only")
    args = parser.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"move menu latency: {args.deals} deals per entry played from the menus")
    print(f"  ({os.cpu_count()} cores, load average {load}: other work on the machine shows)")
    print("  domain.menu.menu() for the seat to act, in memory:")
    for entry, players in TABLES:
        times, cpu, listed = domain_times(entry, players, args.deals, args.seed)
        print(
            f"    {entry:16} {players}p  wall: {percentiles(times)}, {listed / len(times):.1f} moves"
        )
        print(f"    {'':16}     CPU:  {percentiles(cpu)}")
    if args.no_http:
        return
    url = None
    if args.database_url:
        from benchmarks.server.database import fresh_database

        url = fresh_database(args.database_url, PG_DATABASE)
    store = "PostgreSQL" if url else "SQLite"
    print(f"  GET /deals/{{id}}/moves round trip, uvicorn (one process) on {store}:")
    with server(url) as base, httpx.Client(base_url=base, timeout=60) as http:
        for entry, players in TABLES:
            acting, empty, views = http_times(http, entry, players, args.deals, args.seed)
            print(f"    {entry:16} {players}p  acting seat: {percentiles(acting)}")
            print(f"    {'':16}     other seats: {percentiles(empty)}")
            print(f"    {'':16}     GET /deals/{{id}} (baseline): {percentiles(views, 'views')}")


if __name__ == "__main__":
    main()
