"""The project documents itself (docs/rules/, README.md, docs/*.md), and the documents hold.

- Every rule id the code can put in an error is defined in docs/rules/, and every rule defined
  there is raised by the code or cited by a test or scenario (R-CMD-3: refusals carry stable ids).
- No file of the project sends its reader to documents outside it.
- The links of the README and of docs/ lead somewhere, and the ``make`` targets and ``canasta``
  commands they name exist.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
CODE_DIRS = ("app", "domain", "projections")
#: A rule id: R-, one or more upper-case words, a number (R-PILE-3, R-MA-MELD-1, R-MELD-STEP-1).
RULE_ID = re.compile(r"R-[A-Z]+(?:-[A-Z]+)*-[0-9]+")
#: A rule defined in docs/rules/: its id in bold, followed by a full stop.
DEFINED = re.compile(r"\*\*(" + RULE_ID.pattern + r")\.\*\*")
#: Directories that are not the project's own text.
SKIPPED_DIRS = {".git", ".venv", ".pg", ".bench", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
SKIPPED_DIRS |= {".hypothesis", "__pycache__", "data", "node_modules"}
#: Written on another branch of the same change; the link is checked once it exists here.


def rule_docs() -> list[Path]:
    return sorted([*DOCS.glob("rules*.md"), *DOCS.glob("rules/**/*.md")])


def defined_ids() -> set[str]:
    return {m for path in rule_docs() for m in DEFINED.findall(path.read_text())}


def raised_ids() -> dict[str, list[str]]:
    """Every string constant of the code that is exactly a rule id, with where it is."""
    found: dict[str, list[str]] = {}
    for top in CODE_DIRS:
        for path in sorted((REPO / top).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and RULE_ID.fullmatch(node.value)
                ):
                    where = f"{path.relative_to(REPO)}:{node.lineno}"
                    found.setdefault(node.value, []).append(where)
    return found


def cites(rule: str) -> re.Pattern[str]:
    """``rule`` as written in a test: R-PILE-3, r-pile-3 (file names) or r_pile_3 (test names)."""
    words = rule.lower().split("-")
    return re.compile(
        r"(?<![a-z0-9])" + r"[-_]".join(map(re.escape, words)) + r"(?![a-z0-9])", re.IGNORECASE
    )


def text_of_the_tests() -> str:
    """The text of every test and scenario (paths included), this directory's own tests aside."""
    here = Path(__file__).resolve().parent
    parts = []
    for path in sorted((REPO / "tests").rglob("*")):
        if path.suffix not in (".py", ".json") or not path.is_file():
            continue
        rel = path.relative_to(REPO)
        if here in path.resolve().parents or rel.parts[:2] == ("tests", "fixtures"):
            continue
        parts.append(f"{rel}\n{path.read_text()}")
    return "\n".join(parts)


def project_files() -> list[Path]:
    """The project's own files: the skipped directories are not even entered."""
    files: list[Path] = []
    for top, dirs, names in os.walk(REPO):
        rel = Path(top).relative_to(REPO)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in SKIPPED_DIRS
            and not d.endswith(".egg-info")
            and (rel / d).parts != ("tests", "fixtures")
        )
        files.extend(Path(top) / name for name in sorted(names))
    return files


def test_the_rule_docs_define_the_rules_of_every_entry() -> None:
    ids = defined_ids()
    families = {rule.rsplit("-", 1)[0] for rule in ids}
    # The common rules, the option's and every entry's own.
    assert {"R-CARD", "R-MELD", "R-PILE", "R-MELD-STEP", "R-FROZEN", "R-MA-INIT"} <= families
    assert {"R-PT-PONY", "R-PT-SCORE", "R-PT-END", "R-GAME", "R-DEAL", "R-CMD"} <= families
    duplicates = [
        rule
        for rule in ids
        if sum(path.read_text().count(f"**{rule}.**") for path in rule_docs()) > 1
    ]
    assert not duplicates, f"defined twice in docs/rules/: {duplicates}"


def test_every_rule_id_mentioned_in_the_docs_is_defined() -> None:
    """A typo in a cross-reference (R-PILE-6) would send the reader nowhere."""
    defined = defined_ids()
    texts = [*rule_docs(), REPO / "README.md", *DOCS.glob("*.md")]
    mentioned = {
        (path.relative_to(REPO).as_posix(), rule)
        for path in texts
        if path.exists()
        for rule in RULE_ID.findall(path.read_text())
    }
    undefined = sorted(f"{where}: {rule}" for where, rule in mentioned if rule not in defined)
    assert not undefined, (
        "rule ids the docs mention but docs/rules/ does not define:\n" + "\n".join(undefined)
    )


def test_every_rule_id_the_code_raises_is_documented_r_cmd_3() -> None:
    raised = raised_ids()
    assert "R-PILE-3" in raised and "R-MA-MELD-1" in raised, "the scan finds the code's ids"
    missing = {rule: where for rule, where in raised.items() if rule not in defined_ids()}
    assert not missing, f"raised by the code but not defined in docs/rules/: {missing}"


def test_every_documented_rule_is_raised_or_tested() -> None:
    raised = raised_ids()
    tests = text_of_the_tests()
    untested = sorted(
        rule for rule in defined_ids() if rule not in raised and not cites(rule).search(tests)
    )
    assert not untested, f"defined in docs/rules/ but neither raised nor tested: {untested}"


def test_no_file_refers_the_reader_outside_the_project() -> None:
    """The project documents its rules and formats itself (docs/): no file sends the reader to
    the contract documents it was written from, which users of the project do not have."""
    # Spelt in pieces, so that this file does not match itself.
    names = "|".join(["RULES", "SCENARIOS", "STYLE", "EVENTSOURCING"])
    outside = re.compile(r"\.\./" + "shared" + r"|\b(?:" + names + r")\.md\b|rules-" + "decisions")
    offending = []
    for path in project_files():
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if outside.search(line):
                offending.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:100]}")
    assert not offending, "references outside the project:\n" + "\n".join(offending)


#: What a page shows as code: fenced blocks and inline spans.
CODE = re.compile(r"^```[a-z]*\n(.*?)^```|`([^`\n]+)`", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
DOC_PATH = re.compile(r"`((?:docs|tests|app|domain|projections|benchmarks|scripts)/[^`\s]*)`")


def test_the_links_of_the_readme_and_the_docs_lead_somewhere() -> None:
    broken = []
    for page in [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]:
        text = page.read_text()
        for target in LINK.findall(text):
            if re.match(r"[a-z]+://", target):
                continue
            resolved = (page.parent / target).resolve()
            if not resolved.exists():
                broken.append(f"{page.relative_to(REPO)}: ({target})")
        for target in DOC_PATH.findall(text):
            path = target.split("::")[0].rstrip("/")
            if "*" in path or "{" in path:
                continue
            if not (REPO / path).exists():
                broken.append(f"{page.relative_to(REPO)}: `{target}`")
    assert not broken, "links to nothing:\n" + "\n".join(broken)


def test_the_make_targets_and_canasta_commands_the_docs_name_exist() -> None:
    makefile = (REPO / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][a-z0-9-]*):", makefile, flags=re.MULTILINE))
    canasta = Path(sys.executable).parent / "canasta"
    usage = subprocess.run([canasta, "--help"], capture_output=True, text=True, check=True).stdout
    commands = set(re.search(r"\{([a-z,-]+)\}", usage)[1].split(","))  # type: ignore[index]
    unknown = []
    for page in [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]:
        code = "\n".join(block or span for block, span in CODE.findall(page.read_text()))
        for target in re.findall(r"(?:^|[\s;&|(])make (?:[A-Z_]+=\S+ )*([a-z][a-z0-9-]*)", code):
            if target not in targets:
                unknown.append(f"{page.relative_to(REPO)}: make {target}")
        for command in re.findall(r"(?:^|[\s;&|(]|bin/)canasta ([a-z][a-z-]*)", code):
            if command not in commands:
                unknown.append(f"{page.relative_to(REPO)}: canasta {command}")
    assert not unknown, "named in the docs but missing:\n" + "\n".join(unknown)


def test_the_test_database_section_says_where_scripts_pg_sh_listens() -> None:
    """An operator whose port 55432 was taken (another checkout's cluster) found his cluster
    elsewhere: the section said "it listens on 127.0.0.1:55432", not that ``scripts/pg.sh``
    moves to the next free port, nor how to find the URL. It says both, with the script's
    own default port, range and message."""
    script = (REPO / "scripts" / "pg.sh").read_text()
    default = int(re.search(r"^DEFAULT_PORT=(\d+)$", script, flags=re.MULTILINE)[1])  # type: ignore[index]
    last = int(re.search(r"seq \"\$first\" \$\(\(first \+ (\d+)\)\)", script)[1])  # type: ignore[index]
    moving = re.search(r'log "port \$p (is in use, [^"]+)"', script)[1]  # type: ignore[index]
    text = (DOCS / "operations.md").read_text()
    section = text.split("\n## The test database\n", 1)[1].split("\n## ", 1)[0]
    section = " ".join(section.split())  # its lines joined
    assert f"127.0.0.1:{default}" in section
    assert f"{default + 1} ... {default + last}" in section, "the ports it moves to"
    assert f"port {default} {moving}" in section, "what it says when it moves"
    assert "scripts/pg.sh url" in section
