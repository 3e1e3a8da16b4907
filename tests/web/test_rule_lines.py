"""Each rule's one-line statement (app/web/i18n/rules/<lang>.json), which the pages show for a
refusal by that rule in the page's language (common.js, errorNodes; docs/web.md "Refusals"):
every rule id of docs/rules/ has a line in every language, and no line is left for a rule id
that is gone. Fast: no server, no browser."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.web_ui import WEB_DIR

RULES_DIR = Path(__file__).resolve().parents[2] / "docs" / "rules"
LINES_DIR = Path(WEB_DIR) / "i18n" / "rules"
#: A rule, as docs/rules/ defines it: a bold id opening its paragraph, ``**R-PILE-3.**``.
DEFINED = re.compile(r"\*\*(R-[A-Z]+(?:-[A-Z]+)*-[0-9]+)\.\*\*")
#: The pages' languages: one catalogue each (app/web/i18n/<lang>.json).
LANGUAGES = sorted(p.stem for p in (Path(WEB_DIR) / "i18n").glob("*.json"))


def rule_ids() -> set[str]:
    ids: set[str] = set()
    for page in RULES_DIR.glob("*.md"):
        ids |= set(DEFINED.findall(page.read_text(encoding="utf-8")))
    return ids


def lines(lang: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((LINES_DIR / f"{lang}.json").read_text(encoding="utf-8"))
    return data


def test_the_scan_finds_the_rules() -> None:
    ids = rule_ids()
    assert {"R-PILE-3", "R-MA-MELD-5", "R-FROZEN-1", "R-PT-OUT-1", "R-CMD-3"} <= ids
    assert len(ids) > 80
    assert LANGUAGES == ["en", "ru", "th", "zh"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_rule_has_a_line_and_no_line_outlives_its_rule(lang: str) -> None:
    ids, said = rule_ids(), lines(lang)
    assert sorted(ids - set(said)) == [], f"rules without a line in {lang}"
    assert sorted(set(said) - ids) == [], f"lines in {lang} for rules docs/rules/ no longer has"
    for rule, line in said.items():
        assert line.strip() == line and line, rule
        assert "{" not in line, f"{rule}: a line has no placeholders"


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != "en"])
def test_every_line_is_translated(lang: str) -> None:
    english, translated = lines("en"), lines(lang)
    assert [rule for rule in english if translated[rule] == english[rule]] == []
