"""The printed report."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks.interpreter import described
from benchmarks.server.config import (
    TARGET_COMMANDS_PER_S,
    TARGET_OVER_STORE_MS,
    TARGET_P99_MS,
    TARGET_REPLAY_MS,
)
from benchmarks.server.experiments import EXPERIMENTS

# --- the report ----------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "MET " if ok else "MISSED"


def listed(items: Iterable[str], most: int = 12) -> str:
    """The first ``most`` items, comma-separated, and " ..." if there were more."""
    texts = list(items)
    return ", ".join(texts[:most]) + (" ..." if len(texts) > most else "")


def print_load(report: dict[str, Any], load: dict[str, Any]) -> None:
    lat = load["latency_ms"]
    rate = load["commands_per_s"]
    print("-" * 78)
    offered = load.get("offered_per_s")
    mode = (
        f"open loop, {offered:.0f} commands/s offered, latency from each command's due time"
        if offered
        else "closed loop (flat out: latency ~ games / throughput, Little's law)"
    )
    print(
        f"POST /deals/{{id}}/commands, {load['games']} concurrent games, "
        f"{load['seconds']:.0f} s, load generator: one asyncio event loop\n  {mode}"
        + (
            "; the closed loop's games go on"
            if load.get("games_from") == "the previous run"
            else ""
        )
    )
    if offered:
        # Open loop: the server cannot accept more than is offered. It kept up when it
        # accepted what was offered, but for the commands still in flight at the window's end.
        kept_up = offered >= TARGET_COMMANDS_PER_S and rate >= 0.99 * offered
        print(
            f"  accepted commands   {rate:9.1f} /s     target >= {TARGET_COMMANDS_PER_S:.0f}/s  "
            f"{verdict(kept_up)}   ({rate / offered:.1%} of the {offered:.0f}/s offered)"
        )
    else:
        print(
            f"  accepted commands   {rate:9.1f} /s     target >= {TARGET_COMMANDS_PER_S:.0f}/s  "
            f"{verdict(rate >= TARGET_COMMANDS_PER_S)}"
        )
    print(f"  latency p50         {lat.get('p50', float('nan')):9.1f} ms")
    # Flat out, the latency is the queue of the games' commands in flight: about games /
    # throughput (Little's law). The latency target is judged together with the throughput
    # target, at the rate offered in the open loop.
    judged = (
        f"target <  {TARGET_P99_MS:.0f} ms    {verdict(lat.get('p99', 1e9) < TARGET_P99_MS)}"
        if offered
        else "(queueing at full load; the p99 target is judged at the offered rate below)"
    )
    print(f"  latency p99         {lat.get('p99', float('nan')):9.1f} ms     {judged}")
    print(f"  latency p90/max     {lat.get('p90', 0):9.1f} / {lat.get('max', 0):.1f} ms")
    clear = load.get("latency_clear_of_disk_stalls_ms") or {}
    if 0 < clear.get("n", 0) < lat.get("n", 0):
        print(
            f"  p99 of the {clear['n']} of {lat['n']} commands no disk stall overlapped: "
            f"{clear['p99']:.1f} ms (a diagnostic: the target is judged on all of them)"
        )
    slices = load.get("latency_timeline") or []
    if slices:
        print("  p99 by slice of the window (ms):" + "".join(f"{int(s['p99']):>4}" for s in slices))
    ends = load.get("games_finished_by_slice") or []
    if any(ends):  # a game's end sets up a new table, seats and first deal: route work
        print("  games ended, by slice:          " + "".join(f"{n:>4}" for n in ends))
    late = load.get("sent_late_ms") or {}
    if late.get("n"):
        print(
            f"  sent after their due time (the previous answer was late, or the load generator busy): "
            f"p50 {late['p50']:.1f} ms, p99 {late['p99']:.1f} ms"
        )
    unready = load.get("fell_due_during_set_up") or {}
    if unready.get("n"):
        print(
            f"  {unready['n']} commands fell due while their game was setting up its next deal "
            f"(waited p50 {unready['waited_ms']['p50']:.1f}, max {unready['waited_ms']['max']:.1f} ms); "
            f"p99 counted from the set-up's end: {load['latency_from_ready_ms']['p99']:.1f} ms "
            "(a diagnostic: the target counts every command from its due time)"
        )
    print(
        f"  statuses {load['statuses']}  errors {load['errors'] or 'none'}  "
        f"mirror mismatches {load['mirror_mismatches']}"
    )
    if load["views"]:
        v = load["view_gets"]
        print(
            f"  GET /deals/{{id}} before each command: {v['per_s']:.0f}/s, "
            f"p50 {v['latency_ms'].get('p50', 0):.1f} ms, p99 {v['latency_ms'].get('p99', 0):.1f} ms"
        )
    store = load["store"]
    print(
        f"  events written      {store['events_per_s']:9.1f} /s     "
        f"({store['events_per_accepted_command']} per accepted command)"
    )
    print(
        f"  deals finished {load['deals_finished_total']}, games finished "
        f"{load['games_finished_total']}; next-deal set-up p50 "
        f"{load['between_deals_ms'].get('p50', 0):.1f} ms"
    )
    own = load["load_generator_own_cost"]
    print(
        f"  load generator's own move choice + mirror: "
        f"{own['move_choice_and_mirror_cpu_us_mean']} us CPU per command; "
        f"{own['mirror_store_reads']} store reads (p50 "
        f"{own['mirror_store_read_ms'].get('p50', 0):.1f} ms)"
    )
    cpu = load["cpu"]
    print(
        "  CPU over the window (cores busy): "
        + ", ".join(
            f"{k} {cpu[f'{k}_cores']:.2f}"
            for k in ("server", "postgres", "load_generator", "other", "idle")
        )
    )
    if "postgres_sessions_last_seen" in report:
        print(
            f"  PostgreSQL sessions open on the benchmark database at the window's end: "
            f"{report['postgres_sessions_last_seen']}"
        )
    detail = cpu.get("cores_by_process", {}).get("postgres")
    if detail:
        print(
            "  PostgreSQL's cores by process: "
            + ", ".join(f"{k} {v:.2f}" for k, v in list(detail.items())[:6])
        )
    print(
        "  CPU per accepted command: "
        + ", ".join(
            f"{k} {cpu[f'{k}_cpu_s'] / max(1, load['commands_accepted']) * 1e3:.2f} ms"
            for k in ("server", "postgres", "load_generator")
        )
    )
    server_detail = cpu.get("cores_by_process", {}).get("server")
    if server_detail:
        # cores_by_process is per second of the window; per command: x wall / accepted.
        per_command = cpu["wall_s"] / max(1, load["commands_accepted"]) * 1e3
        print(
            "  the server's CPU per accepted command by process: "
            + ", ".join(
                f"{k} {v * per_command:.3f} ms" for k, v in server_detail.items() if v >= 0.001
            )
        )
    if "read_models_caught_up_s" in load:
        caught_up = load["read_models_caught_up_s"]
        print(
            "  read models caught up with the run "
            + (f"{caught_up:.1f} s after its end" if caught_up is not None else "NOT within 300 s")
            + " (the next run starts after that)"
        )
    speed = load.get("cpu_speed") or {}
    if speed:
        print(
            f"  core speed: a fixed piece of Python work took {speed['median_us']:.0f} us CPU "
            f"(median of {speed['probes']}; fastest {speed['fastest_us']:.0f}, slowest "
            f"{speed['slowest_us']:.0f}): compare runs with it, this machine's cores vary"
        )
    disk = load.get("disk_flush") or {}
    if disk:
        stalls = disk["stalls"]
        print(
            f"  disk: an 8 KiB write made durable (fdatasync) every 50 ms took "
            f"{disk['p50_ms']:.2f} ms (median of {disk['flushes']}), at most "
            f"{disk['max_ms']:.0f} ms; {len(stalls)} took {disk['stall_ms']:.0f} ms or more"
            + (
                " (s into the window: ms, and the MB of dirty pages the kernel wrote back "
                "meanwhile, if 1 or more) "
                + listed(
                    f"{t:.1f}: {ms:.0f}"
                    + (f" ({mb:.0f} MB written back)" if mb is not None and mb >= 1 else "")
                    for t, ms, mb in stalls
                )
                if stalls
                else ""
            )
        )
        print("        every commit waits for such a flush: a stall here stalls every command")
        writebacks = disk.get("writebacks")
        if writebacks is not None:
            print(
                f"        the kernel wrote back {disk['writeback_mb']:.0f} MB or more of dirty "
                f"pages at once {len(writebacks)} time{'' if len(writebacks) == 1 else 's'}"
                + (
                    " (s into the window: MB) "
                    + listed(f"{t:.1f}: {mb:.0f}" for t, mb in writebacks)
                    if writebacks
                    else ""
                )
            )
    if cpu["other_cores"] > 0.1 * cpu["cores"]:
        print(
            f"  WARNING: other processes used {cpu['other_cores']:.2f} cores during the "
            "window: the machine was not quiet, the figures are pessimistic"
        )
    prof = load.get("profile")
    if prof:
        print(
            f"  uvicorn workers, by layer of a command (py-spy --gil: the samples in which a "
            f"thread runs Python, {prof['worker_samples']} samples):"
        )
        for name, pct in prof["workers_percent_by_layer"].items():
            print(f"    {pct:5.1f}%  {name}")
        if prof["read_model_samples"]:
            print(f"  read models' process, by part ({prof['read_model_samples']} samples):")
            for name, pct in prof["read_models_percent_by_part"].items():
                print(f"    {pct:5.1f}%  {name}")


def print_report(report: dict[str, Any], path: Path) -> None:
    cfg = report["config"]
    print()
    print("=" * 78)
    print("canasta-ledger server benchmark (PostgreSQL, uvicorn, load generator: one machine)")
    print(
        f"  {cfg['cores']} cores; uvicorn --workers {cfg['workers']}, pool {cfg['pool_size']} "
        f"connections/worker, threadpool {cfg['threads'] or 'default (8)'}; "
        f"{cfg['games']} games"
    )
    if cfg.get("read_models") == "process":
        print("  read models: one `canasta project` process (workers: CANASTA_READ_MODELS=off)")
    elif cfg.get("read_models") == "off":
        print("  read models: not run (workers: CANASTA_READ_MODELS=off; no `canasta project`)")
    else:
        print("  read models: in a thread of one elected worker (CANASTA_READ_MODELS=auto)")
    extras = [m for m, present in cfg["uvicorn_extras"].items() if present]
    print(
        f"  uvicorn extras: {', '.join(extras) or 'none (pure-Python h11 and asyncio)'}; "
        f"synchronous_commit {cfg['synchronous_commit']}"
        + ("; experiment: TCP_NODELAY fix" if cfg["nodelay_fix"] else "")
    )
    if "interpreter" in cfg:
        print(
            f"  {described(cfg['python'], cfg['interpreter'])} "
            "(every process of the run: workers, read models, load generator)"
        )
    for name in cfg["experiments"]:
        print(f"  experiment --experiment {name}: {EXPERIMENTS[name]}")
    probe = report.get("idle_round_trip_ms")
    if probe:
        print(
            f"  idle server, one connection: GET /health p50 {probe['health']['p50']:.1f} ms, "
            f"GET /tables/{{id}} p50 {probe['table']['p50']:.1f} ms"
            + (
                "  <- ~40 ms: Nagle + delayed ACK (see benchmarks/uvicorn_nodelay.py)"
                if probe["health"]["p50"] > 30
                else ""
            )
        )
    for key in ("load", "load_at_rate"):
        if report.get(key):
            print_load(report, report[key])
    store, at_rate = report.get("store_at_rate"), report.get("load_at_rate")
    if store and at_rate:
        own, ours = store["latency_ms"], at_rate["latency_ms"]
        over = ours.get("p99", 1e9) - own.get("p99", 0)
        print("-" * 78)
        print(
            f"the store's own latency at {store['rate']:.0f}/s (pgbench --rate, {store['clients']} "
            f"clients, LOCK TABLE + INSERT, durable commits; from each due time)"
        )
        print(f"  store p50 / p99     {own.get('p50', 0):9.1f} / {own.get('p99', 0):.1f} ms")
        print(
            f"  commands p99 - store p99 {over:6.1f} ms   target <= {TARGET_OVER_STORE_MS:.0f} ms  "
            f"{verdict(over <= TARGET_OVER_STORE_MS)}"
        )
    load = report.get("load")
    pg = report.get("pgbench")
    if pg and load:
        print("-" * 78)
        print(f"raw inserts into the same PostgreSQL (pgbench, {pg['seconds']:.0f} s each)")
        for n, tps in pg["insert_tps"].items():
            print(
                f"  single-row INSERT, {int(n):3d} client(s): {tps:8.0f} tx/s   "
                f"commands/s / inserts/s = {load['commands_per_s'] / tps:.3f}"
            )
        for n, tps in pg["locked_tps"].items():
            print(
                f"  + LOCK TABLE EXCLUSIVE (library's write path), {int(n):3d} client(s): "
                f"{tps:8.0f} tx/s   ratio {load['commands_per_s'] / tps:.3f}"
            )
    replay = report.get("replay")
    if replay:
        g = replay["game"]
        print("-" * 78)
        print(
            f"replay a finished {g['target']}-point classic game ({g['deals']} deals, "
            f"{g['deal_events']} deal events, longest deal {g['longest_deal']}) to random steps, "
            f"{replay['samples']} samples"
        )
        for key, label in (
            ("cold_get_deal_version_ms", "cold app, get_deal(id, version=k)"),
            ("http_replay_player_ms", "GET /deals/{id}/replay?step=k (player)"),
            ("http_replay_spectator_ms", "GET /deals/{id}/replay?step=k (spectator)"),
        ):
            s = replay[key]
            print(
                f"  {label:42s} median {s['p50']:6.1f}  p99 {s['p99']:6.1f}  max {s['max']:6.1f} ms"
                f"   target < {TARGET_REPLAY_MS:.0f} ms  {verdict(s['p99'] < TARGET_REPLAY_MS)}"
            )
        s = replay["cold_rebuild_whole_game_ms"]
        print(f"  cold rebuild of the whole game (table + every deal): median {s['p50']:.1f} ms")
    print("=" * 78)
    print(f"JSON: {path}")
