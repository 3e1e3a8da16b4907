"""The examples of the docs that a reader copies run as written: the one-deal scenario of
docs/scenarios.md passes ``canasta scenario`` (the several-deals one is abbreviated with
``"..."``, and says so). And the operator's reference is whole: every setting of the server
is in the configuration table of docs/operations.md, and the table names no other; every
``CANASTA_...`` variable the docs name anywhere is read by the code, and every option the docs
give a ``canasta`` command is one of its options."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from app.cli import build_parser, main
from app.settings import Settings

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"


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


#: A span of code in a page: a fenced block, or an inline span.
CODE = re.compile(r"^```[a-z]*\n(.*?)^```|`([^`\n]+)`", re.MULTILINE | re.DOTALL)
#: ``canasta NAME`` and the words after it, up to a comment, a pipe or the command's end.
CANASTA_LINE = re.compile(r"(?:^|[\s;&|(]|bin/)canasta ([a-z][a-z-]*)((?: +(?!#)[^\s;&|#]+)*)")


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def code_of(page: Path) -> str:
    return "\n".join(block or span for block, span in CODE.findall(page.read_text()))


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_every_option_the_docs_give_a_canasta_command_is_one_of_its_options() -> None:
    """``canasta keys new --out FILE``, ``canasta audit --all``, ``canasta arena --games 40``:
    an option renamed in the code and not in the docs would be refused ("unrecognized
    arguments") when an operator copies the line."""
    commands = subcommands(build_parser())
    unknown, seen = [], 0
    for page in pages():
        for line in code_of(page).splitlines():
            for match in CANASTA_LINE.finditer(line):
                command = commands.get(match[1])
                words = match[2].split()
                if command is None:
                    continue  # an unknown command: test_docs.py says so
                inner = subcommands(command)
                if inner and words and words[0] in inner:
                    command, words = inner[words[0]], words[1:]
                known = {option for action in command._actions for option in action.option_strings}
                for word in words:
                    if word.startswith("--"):
                        seen += 1
                        if word.split("=")[0] not in known:
                            unknown.append(f"{page.relative_to(REPO)}: {line.strip()}")
    assert seen > 10, "the scan found too few options: has the pattern broken?"
    assert not unknown, "options the commands do not have:\n" + "\n".join(unknown)


def test_every_canasta_variable_the_docs_name_is_a_setting_or_read_by_the_code() -> None:
    """A ``CANASTA_...`` variable named anywhere in the README, the docs or deploy/ (not only
    in the configuration table) is a setting of ``app/settings.py``, or one the scripts or
    tests read (``CANASTA_CHROMIUM``): a renamed setting leaves no stale name behind."""
    settings = {f"CANASTA_{name.upper()}" for name in Settings.model_fields}
    code = "\n".join(
        path.read_text()
        for top in ("app", "scripts", "tests", "benchmarks")
        for path in sorted((REPO / top).rglob("*"))
        if path.suffix in (".py", ".sh") and path.name != Path(__file__).name
    )
    read = set(re.findall(r"\bCANASTA_[A-Z0-9_]*[A-Z0-9]\b", code))
    unknown = []
    texts = [*pages(), *sorted(p for p in (REPO / "deploy").rglob("*") if p.is_file())]
    for page in texts:
        for name in sorted(set(re.findall(r"\bCANASTA_[A-Z0-9_]*[A-Z0-9]\b", page.read_text()))):
            if name not in settings and name not in read:
                unknown.append(f"{page.relative_to(REPO)}: {name}")
    assert not unknown, "variables no code reads:\n" + "\n".join(unknown)
