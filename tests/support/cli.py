"""The ``canasta`` command line as an operator runs it: a process of its own, on the store
(and settings) the test gives it in its environment, not on those of the test's own."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

#: ``canasta`` as the checked-out code runs it (the venv's ``canasta`` script imports the
#: package the venv was installed from, which may be another worktree).
REPO = Path(__file__).resolve().parents[2]
CANASTA = [sys.executable, "-m", "app.cli"]
#: The variables that choose the store: a test's own would otherwise reach the command.
STORE_VARIABLES = ("DATABASE_URL", "CANASTA_DATABASE_URL", "CANASTA_DATA_DIR")
#: Every setting (``CANASTA_*``) and the store's URL: the command sees only the test's ``env``.
ALL_SETTINGS = ("DATABASE_URL", "CANASTA_*")


def cli_env(env: dict[str, str], without: Iterable[str] = STORE_VARIABLES) -> dict[str, str]:
    """This process's environment without the variables ``without`` names (a name ending in
    ``*``: every variable it begins), with ``env`` over it."""
    names = tuple(without)
    exact = {n for n in names if not n.endswith("*")}
    prefixes = tuple(n[:-1] for n in names if n.endswith("*"))
    kept = {k: v for k, v in os.environ.items() if k not in exact and not k.startswith(prefixes)}
    return {**kept, **env}


def run_cli(
    *args: str, env: dict[str, str], without: Iterable[str] = STORE_VARIABLES
) -> subprocess.CompletedProcess[str]:
    """``canasta ARGS`` run to its end (``cli_env(env, without)``), its output captured."""
    return subprocess.run(
        [*CANASTA, *args],
        cwd=REPO,
        env=cli_env(env, without),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,  # a command that hangs fails the test rather than the whole run
    )
