"""``canasta keys rotate`` while the servers run (docs/operations.md, "Signing keys"): an
operator rotates the key of a PostgreSQL server of two workers and a ``canasta bots``
process, restarting nothing. Every worker publishes the new key as its current one at its
next request to ``/.well-known/canasta-keys`` (and still the old one, retired), the next
finished deal is signed by the new key, by a worker (people's moves) as by the bots' process
(a table of bots), and ``canasta audit`` finds the deal signed before the rotation and those
after it valid, each under its own key. Before 4 December 2026 each process kept the
key it read at start-up until it was restarted."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.client import Game
from tests.e2e.conftest import make_backend
from tests.e2e.server import bots_process, stopped_within
from tests.support.cli import ALL_SETTINGS, run_cli
from tests.support.keys import key_file

pytestmark = pytest.mark.postgres

#: Requests to the keys' route, each on a connection of its own: the two workers share the
#: listening socket, and each takes some of them.
ASKED = 40


def canasta(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``canasta ARGS`` with the settings ``env`` gives, none of the test's own."""
    return run_cli(*args, env=env, without=ALL_SETTINGS)


def published(url: str) -> list[list[Any]]:
    """Each answer of the keys' route: its keys as (key_id, current)."""
    answers = []
    for _ in range(ASKED):
        with httpx.Client(base_url=url, timeout=30) as fresh:  # a new connection each time
            keys = fresh.get("/.well-known/canasta-keys").raise_for_status().json()["keys"]
        answers.append([(k["key_id"], k["current"]) for k in keys])
    return answers


def test_a_rotation_takes_effect_in_every_running_worker_without_a_restart(
    migrated_postgres_url: str, tmp_path: Path
) -> None:
    retired = tmp_path / "retired-keys"
    keys = key_file(tmp_path)  # the servers' key file (tests/e2e/server.py)
    env = {"CANASTA_RETIRED_KEYS_DIR": str(retired)}
    # the bots are played by ``canasta bots`` only (it reads the same key file)
    backend = make_backend(
        "postgres", tmp_path, migrated_postgres_url, {**env, "CANASTA_RUN_BOTS": "false"}
    )
    backend.server.start()
    log = tmp_path / "bots.log"
    bots = bots_process(backend.server, log)  # started with the old key
    try:
        game = Game(api=backend.api(), shadow=backend.shadow(), prefix="kr")
        game.set_up()
        game.play_deal(game.start())
        old = json.loads(keys.read_text())["key_id"]
        assert all(answer == [(old, True)] for answer in published(backend.server.url))

        rotated = canasta("keys", "rotate", env={"CANASTA_SIGNING_KEY_FILE": str(keys), **env})
        assert rotated.returncode == 0, rotated.stderr
        assert "without a restart" in rotated.stdout
        new = json.loads(keys.read_text())["key_id"]
        assert new != old

        # Every answer, from either worker, names the new key current and keeps the old one.
        answers = published(backend.server.url)
        assert all(answer == [(new, True), (old, False)] for answer in answers), answers

        game.play_deal(game.next_deal())

        # a table of bots: its deal is recorded, and signed, by the bots' process
        api = backend.api()
        hal = api.register("hal")
        robots = api.create_table(hal, "classic", 4)
        for seat in range(4):
            bot = {"seat": seat, "bot": "basic"}
            api.call("POST", f"/tables/{robots}/seats", player=hal, json=bot, expect=200)
        api.start(hal, robots)
        deadline = time.monotonic() + 300
        while not api.table(robots)["deal_scores"]:
            assert bots.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the bots did not finish their deal"
            time.sleep(0.2)
    finally:
        bots.send_signal(signal.SIGTERM)
        assert stopped_within(bots, 15) == 0, log.read_text()
        backend.close()
        backend.server.stop()
    backend.server.assert_clean_log()

    audit_env = {
        "DATABASE_URL": migrated_postgres_url,
        "CANASTA_SIGNING_KEY_FILE": str(keys),
        **env,
    }
    audited = canasta("audit", game.table_id, "--json", env=audit_env)
    assert audited.returncode == 0, audited.stdout[-3000:] + audited.stderr
    report = json.loads(audited.stdout)
    assert report["ok"] is True
    deals = report["deals"]
    assert [deal["deal"] for deal in deals] == game.deals
    assert [deal["signature"] for deal in deals] == ["valid", "valid"]
    assert [deal["signature_key_id"] for deal in deals] == [old, new]
    audited = canasta("audit", robots, "--json", env=audit_env)
    assert audited.returncode == 0, audited.stdout[-3000:] + audited.stderr
    (deal,) = json.loads(audited.stdout)["deals"]
    assert deal["signature"] == "valid" and deal["signature_key_id"] == new, deal
