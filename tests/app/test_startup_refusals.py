"""A server that cannot start for a reason its operator must fix says so in one line of its
log, not a traceback (docs/operations.md, "Signing keys"): here, a signing key file that is
not there. uvicorn itself, as `make run` and the operations guide start it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

UVICORN = Path(sys.executable).parent / "uvicorn"


def test_a_missing_signing_key_file_is_one_line_and_the_server_exits(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANASTA_")}
    env.pop("DATABASE_URL", None)
    env["CANASTA_DATA_DIR"] = str(tmp_path / "data")
    env["CANASTA_SIGNING_KEY_FILE"] = str(tmp_path / "no-such-key.json")
    done = subprocess.run(
        [str(UVICORN), "app.main:app", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    log = done.stdout + done.stderr
    said = [line for line in log.splitlines() if "canasta cannot start" in line]
    assert len(said) == 1, log
    assert f"cannot read the signing key file {tmp_path / 'no-such-key.json'}" in said[0]
    assert "canasta keys new --out" in said[0]  # how to make one
    assert "Traceback" not in log, log
    assert "Application startup failed" in log
