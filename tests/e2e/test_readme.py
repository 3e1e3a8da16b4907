"""The curl walkthrough (docs/walkthrough.md, linked from the README), run as written
(R-GAME-1, R-CMD-1).

Its ``sh`` blocks are joined into one bash script and run against a fresh server started as
``make run`` starts it (uvicorn on an empty SQLite store), the only change being the server's
address. The walkthrough must play a complete game: every step answers as the page says, and
the game ends with a winner.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from uuid import UUID

import httpx
import pytest

from app.settings import Settings
from tests.e2e.checks import check_stream
from tests.e2e.client import Api, open_shadow
from tests.e2e.server import REPO, Server

WALKTHROUGH = REPO / "docs" / "walkthrough.md"
DEFAULT_API = "API=http://127.0.0.1:8000"
WALKTHROUGH_SECONDS = 600  # a hung walkthrough fails instead of blocking the run


def walkthrough_script() -> str:
    page = WALKTHROUGH.read_text()
    blocks = re.findall(r"^```sh\n(.*?)^```", page, flags=re.DOTALL | re.MULTILINE)
    script = "\n".join(blocks)
    assert DEFAULT_API in script, "the walkthrough must set API to the make run address"
    return script


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("curl") is None or shutil.which("jq") is None,
    reason="the walkthrough needs curl and jq (apt-get install curl jq)",
)
def test_the_walkthrough_plays_a_complete_game_with_curl_r_game_1(tmp_path: Path) -> None:
    server = Server(tmp_path)
    with server:
        # make run: the OpenAPI docs are served at /docs, the schema at /openapi.json.
        docs = httpx.get(f"{server.url}/docs", timeout=10)
        assert docs.status_code == 200 and "swagger" in docs.text.lower()
        assert httpx.get(f"{server.url}/openapi.json", timeout=10).json()["paths"]

        script = walkthrough_script().replace(DEFAULT_API, f"API={server.url}")
        script += '\necho "TABLE=$TABLE"\n'
        run = subprocess.run(
            ["bash", "-c", script],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=WALKTHROUGH_SECONDS,
        )
        out = run.stdout
        assert run.returncode == 0, f"{run.stderr}\n{out[-3000:]}"
        assert not run.stderr.strip(), run.stderr

        # The steps answer as the walkthrough shows.
        assert re.search(r'^\{"name":"ann","token":"[^"]{20,}"\}$', out, re.MULTILINE), out[:500]
        assert all(f'{{"seat":{seat}}}' in out for seat in range(4))
        assert '"kind":"DeckCut"' in out and '"kind":"CardsDealt"' in out
        assert re.search(r'"kind":"CardsDrawn".*"cards":\["', out), "the drawer sees his card"
        assert '"kind":"CardDiscarded"' in out
        assert '400 {"error":{"code":"R-TURN-1"' in out
        assert re.search(r'"replayed":false\}\n\{"step":\d+,"replayed":true\}', out)
        assert '{"error":{"code":"R-CMD-1","message":"stale command' in out

        # The game ended: a side reached the target and won (R-GAME-1).
        lines = out.strip().splitlines()
        table_id = lines[-1].removeprefix("TABLE=")
        final = json.loads(lines[-2])
        assert final["status"] == "finished", final
        assert max(final["totals"].values()) >= 5000 and final["winners"]
        api = Api(server.url)
        try:
            table = api.table(table_id)
        finally:
            api.close()
        assert table["status"] == "finished" and table["winners"] == final["winners"]
        assert len(table["deal_scores"]) == final["deals"]

    server.assert_clean_log()
    store = open_shadow(Settings(database_url=None, data_dir=server.data_dir))
    try:
        for deal_id in table["deals"]:
            check_stream(store, deal_id)
        assert store.get_table(UUID(table_id)).status == "finished"
    finally:
        store.close()
