"""The examples of the docs that a reader copies run as written: the one-deal scenario of
docs/scenarios.md passes ``canasta scenario`` (the several-deals one is abbreviated with
``"..."``, and says so). And the operator's reference is whole: every setting of the server
is in the configuration table of docs/operations.md, and the table names no other."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.cli import main
from app.settings import Settings

DOCS = Path(__file__).resolve().parents[2] / "docs"


def json_blocks(page: str) -> list[str]:
    text = (DOCS / page).read_text()
    return re.findall(r"^```json\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def test_the_one_deal_scenario_of_the_format_page_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = json_blocks("scenarios.md")
    complete = [block for block in blocks if '"..."' not in block]
    assert len(complete) == 1 and len(blocks) == 2, "a scenario example was added or removed"
    path = tmp_path / "example.json"
    path.write_text(complete[0])
    assert main(["scenario", str(path)]) == 0, capsys.readouterr()
    assert capsys.readouterr().out.startswith("ok ")


def test_every_setting_is_in_the_configuration_table_and_no_other() -> None:
    page = (DOCS / "operations.md").read_text()
    table = page[page.index("## Configuration") :]
    table = table[: table.find("\n## ", 1)] if "\n## " in table[1:] else table
    documented = set(re.findall(r"^\| `(CANASTA_[A-Z0-9_]+)`", table, flags=re.MULTILINE))
    settings = {f"CANASTA_{name.upper()}" for name in Settings.model_fields}
    assert sorted(settings - documented) == [], "settings missing from the table"
    assert sorted(documented - settings) == [], "the table names settings that do not exist"
