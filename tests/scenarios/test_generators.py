"""The scenario generators (tests/scenarios/tools/gen_*.py) write the committed files byte for
byte, whatever the interpreter's hash seed: regenerated, a file that only equals its old self
as JSON (its keys in another order) is a diff to read for nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCENARIOS = Path(__file__).resolve().parent
TOOLS = SCENARIOS / "tools"
GENERATORS = sorted(TOOLS.glob("gen_*.py"))

#: Runs one generator's ``main`` with ``write`` catching the files instead of writing them,
#: and prints them as JSON: ``{path: text}``.
CATCH = """
import contextlib, importlib, json, sys
sys.path.insert(0, sys.argv[1])
from scenario_json import dumps
module = importlib.import_module(sys.argv[2])
written = {}
module.write = lambda path, data: written.__setitem__(str(path), dumps(data))
with contextlib.redirect_stdout(sys.stderr):  # what it says of its files
    module.main()
print(json.dumps(written))
"""


def generated(generator: Path, hash_seed: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", CATCH, str(TOOLS), generator.stem],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    files: dict[str, str] = json.loads(done.stdout)
    return files


@pytest.mark.parametrize("generator", GENERATORS, ids=lambda p: p.stem)
def test_a_generator_writes_the_committed_files_under_any_hash_seed(generator: Path) -> None:
    for hash_seed in ("0", "1", "2", "4"):
        files = generated(generator, hash_seed)
        assert files, f"{generator.name} wrote nothing"
        for path, text in files.items():
            committed = Path(path).read_text(encoding="utf-8")
            assert text == committed, f"{path} differs (PYTHONHASHSEED={hash_seed})"
