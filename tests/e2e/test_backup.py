"""The backup of docs/operations.md works: deals played on PostgreSQL through a running server
(two workers), a ``pg_dump`` taken while it runs, restored with ``pg_restore`` into a fresh
database, and ``canasta audit`` pointed at the restored database finds every deal clean
(hash chain, seed commitment, every command re-decided by the rules) and the table's
record of scores matching; the restored store holds exactly the events of the original."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import psycopg
import pytest

from tests.e2e.client import Game
from tests.e2e.conftest import make_backend
from tests.support.cli import ALL_SETTINGS, run_cli
from tests.support.databases import own_database
from tests.support.keys import key_file

#: PostgreSQL 15's programs (Debian), as docs/operations.md names them; else the PATH's.
PG_BIN = Path("/usr/lib/postgresql/15/bin")


def pg_program(name: str) -> str:
    found = PG_BIN / name if (PG_BIN / name).exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed (PostgreSQL's client programs)")
    return str(found)


def store_summary(url: str) -> tuple[int, int, str]:
    """The number of events, the last notification id and the schema's alembic revision."""
    with psycopg.connect(url) as conn:
        events, last = conn.execute(
            "SELECT count(*), max(notification_id) FROM canasta_events"
        ).fetchone()  # type: ignore[misc]
        (revision,) = conn.execute("SELECT version_num FROM alembic_version").fetchone()  # type: ignore[misc]
    return int(events), int(last), str(revision)


def audit(what: str, database_url: str, key: Path) -> tuple[int, dict[str, object]]:
    """``canasta audit`` of the table (or ``--all``: the whole store), with the server's
    signing key (kept outside the database, so a backup must keep it too:
    docs/operations.md)."""
    env = {"DATABASE_URL": database_url, "CANASTA_SIGNING_KEY_FILE": str(key)}
    done = run_cli("audit", what, "--json", env=env, without=ALL_SETTINGS)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.postgres
def test_a_dump_restored_into_a_fresh_database_audits_every_deal_clean(
    migrated_postgres_url: str, postgres_url: str, tmp_path: Path
) -> None:
    backend = make_backend("postgres", tmp_path, migrated_postgres_url)
    backend.server.start()
    try:
        game = Game(api=backend.api(), shadow=backend.shadow(), prefix="bk")
        game.set_up()
        game.play_deal(game.start())
        game.play_deal(game.next_deal())
        in_play = game.next_deal()  # a third deal, left in the middle: a backup is taken live
        for _ in range(6):
            assert game.play_command(in_play) is not None

        dump = tmp_path / "canasta.dump"
        subprocess.run(
            [pg_program("pg_dump"), "--format=custom", f"--file={dump}", migrated_postgres_url],
            check=True,
            timeout=120,
        )
        original = store_summary(migrated_postgres_url)
    finally:
        backend.close()
        backend.server.stop()
    backend.server.assert_clean_log()

    with own_database(postgres_url, "canasta_restore") as (restored, _name):
        subprocess.run(
            [
                pg_program("pg_restore"),
                "--no-owner",
                "--exit-on-error",
                f"--dbname={restored}",
                str(dump),
            ],
            check=True,
            timeout=120,
        )
        assert store_summary(restored) == original

        code, report = audit(game.table_id, restored, key_file(backend.server.data_dir.parent))
        assert code == 0 and report["ok"] is True, json.dumps(report, indent=1)[:3000]
        deals = report["deals"]
        assert isinstance(deals, list)
        assert [deal["deal"] for deal in deals] == game.deals
        assert all(deal["ok"] for deal in deals)
        assert [deal["complete"] for deal in deals] == [True, True, False]
        # The scored deals' signed records verify with the server's key after the restore.
        assert [deal["signature"] for deal in deals] == ["valid", "valid", "not_recorded"]

        # Every deal of the restored store, as the operator audits it without knowing ids.
        code, everything = audit("--all", restored, key_file(backend.server.data_dir.parent))
        assert code == 0 and everything["ok"] is True
        tables = everything["tables"]
        assert isinstance(tables, list) and [t["table"] for t in tables] == [game.table_id]
        assert [deal["deal"] for deal in tables[0]["deals"]] == game.deals
