"""The same PostgreSQL's raw insert throughput: pgbench."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg

from benchmarks.server.config import PG_BINDIRS, REPO_ROOT, log
from benchmarks.server.stats import summary_ms

# --- raw inserts: pgbench -------------------------------------------------------------------

INSERT_SQL = "INSERT INTO bench_raw_insert (payload) VALUES (repeat('x', 300));\n"
LOCKED_SQL = (
    "BEGIN;\n"
    "LOCK TABLE bench_raw_insert IN EXCLUSIVE MODE;\n"
    "INSERT INTO bench_raw_insert (payload) VALUES (repeat('x', 300));\n"
    "COMMIT;\n"
)


def find_pgbench() -> str | None:
    for d in PG_BINDIRS:
        if Path(d, "pgbench").exists():
            return str(Path(d, "pgbench"))
    return shutil.which("pgbench")


def pgbench(url: str, script: str, clients: int, seconds: float) -> float:
    """Transactions per second of ``script`` (one transaction per run) with ``clients``."""
    binary = find_pgbench()
    assert binary is not None
    parts = urlsplit(url)
    path = REPO_ROOT / ".bench" / "pgbench.sql"
    path.write_text(script)
    cmd = [
        binary,
        "-n",  # no vacuum of pgbench's own tables (there are none)
        "-f",
        str(path),
        "-c",
        str(clients),
        "-j",
        str(min(clients, os.cpu_count() or 1)),
        "-T",
        str(max(1, round(seconds))),
        "-h",
        parts.hostname or "127.0.0.1",
        "-p",
        str(parts.port or 5432),
        "-U",
        parts.username or "postgres",
        parts.path.lstrip("/"),
    ]
    env = {**os.environ}
    if parts.password:
        env["PGPASSWORD"] = parts.password
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"pgbench failed: {out.stderr.strip()[-500:]}")
    match = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", out.stdout)
    if match is None:
        raise RuntimeError(f"no tps in pgbench's output: {out.stdout[-500:]}")
    return float(match.group(1))


def run_pgbench(url: str, clients: int, seconds: float) -> dict[str, Any]:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_raw_insert")
        conn.execute(
            "CREATE TABLE bench_raw_insert (id bigserial PRIMARY KEY, payload text NOT NULL)"
        )
    counts = sorted({1, clients})
    out: dict[str, Any] = {
        "seconds": seconds,
        "clients": counts,
        "insert_tps": {},
        "locked_tps": {},
    }
    try:
        for n in counts:
            out["insert_tps"][str(n)] = tps = pgbench(url, INSERT_SQL, n, seconds)
            log(f"  single-row INSERT, {n:3d} client(s): {tps:8.0f} tx/s")
        for n in counts:
            out["locked_tps"][str(n)] = tps = pgbench(url, LOCKED_SQL, n, seconds)
            log(
                f"  LOCK TABLE ... IN EXCLUSIVE MODE + INSERT (the library's write path), "
                f"{n:3d} client(s): {tps:8.0f} tx/s"
            )
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS bench_raw_insert")
    return out


# --- the store's own latency at the open loop's rate: pgbench --rate ------------------------


def pgbench_at_rate(url: str, clients: int, seconds: float, rate: float) -> dict[str, Any]:
    """The library's write path (``LOCK TABLE ... IN EXCLUSIVE MODE`` + one INSERT, a durable
    commit) offered at ``rate`` transactions/s in all by ``clients`` connections, on a
    schedule (``pgbench --rate``): each transaction's latency counted from its due time
    (its run time plus its schedule lag, from the per-transaction log), like the open loop's
    commands. The anchor the commands' p99 is judged against (``TARGET_OVER_STORE_MS``)."""
    binary = find_pgbench()
    assert binary is not None
    parts = urlsplit(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_raw_insert")
        conn.execute(
            "CREATE TABLE bench_raw_insert (id bigserial PRIMARY KEY, payload text NOT NULL)"
        )
    script = REPO_ROOT / ".bench" / "pgbench-locked.sql"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(LOCKED_SQL)
    try:
        with tempfile.TemporaryDirectory() as logs:
            cmd = [
                binary, "-n", "-f", str(script), "-c", str(clients),
                "-j", str(min(clients, os.cpu_count() or 1)), "-T", str(max(1, round(seconds))),
                "--rate", str(rate), "-l", "--log-prefix", str(Path(logs, "tx")),
                "-h", parts.hostname or "127.0.0.1", "-p", str(parts.port or 5432),
                "-U", parts.username or "postgres", parts.path.lstrip("/"),
            ]  # fmt: skip
            env = {**os.environ}
            if parts.password:
                env["PGPASSWORD"] = parts.password
            out = subprocess.run(
                cmd, capture_output=True, text=True, env=env, check=False, cwd=logs
            )
            if out.returncode != 0:
                raise RuntimeError(f"pgbench failed: {out.stderr.strip()[-500:]}")
            latencies = []
            for path in Path(logs).glob("tx*"):
                for line in path.read_text().splitlines():
                    fields = line.split()
                    # client, transaction, time (us), script, epoch s, us[, schedule lag us]
                    if len(fields) >= 6 and fields[2].isdigit():
                        lag = int(fields[6]) if len(fields) > 6 else 0
                        latencies.append((int(fields[2]) + lag) / 1e6)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS bench_raw_insert")
    done = len(latencies)
    return {
        "rate": rate,
        "clients": clients,
        "seconds": seconds,
        "per_s": round(done / seconds, 1),
        "latency_ms": summary_ms(latencies),
    }
