"""Each refusal's detail in the pages' languages (app/web/i18n/details/<lang>.json), which the
pages show under the rule's line instead of the server's English message (common.js,
detailOf; docs/web.md "Refusals"): every key of the domain's catalogue (domain/refusals.py)
has a template in every language but English, with the same parameters, translated; no
template is left for a key that is gone; the words of a fixed set are all translated.
English has no file: the server's message is the English template filled in. Fast: no
server, no browser."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.web_ui import WEB_DIR
from domain.refusals import MESSAGES, WORDS, fields

DETAILS_DIR = Path(WEB_DIR) / "i18n" / "details"
#: The pages' languages (app/web/i18n/<lang>.json) but English.
TRANSLATED = sorted(p.stem for p in (Path(WEB_DIR) / "i18n").glob("*.json") if p.stem != "en")


def details(lang: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DETAILS_DIR / f"{lang}.json").read_text(encoding="utf-8"))
    return data


def test_every_language_but_english_has_its_file() -> None:
    assert TRANSLATED == ["ru", "th", "zh"]
    assert sorted(p.stem for p in DETAILS_DIR.glob("*.json")) == TRANSLATED


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_key_has_a_template_with_its_parameters_and_none_is_orphaned(lang: str) -> None:
    said = {k: v for k, v in details(lang).items() if not k.startswith("@")}
    assert sorted(set(MESSAGES) - set(said)) == [], f"keys without a template in {lang}"
    assert sorted(set(said) - set(MESSAGES)) == [], f"templates in {lang} for keys that are gone"
    for key, template in said.items():
        assert isinstance(template, str) and template.strip() == template and template, key
        assert fields(template) == fields(MESSAGES[key]), f"{lang} {key}: other parameters"
        assert template != MESSAGES[key], f"{lang} {key}: not translated"


@pytest.mark.parametrize("lang", TRANSLATED)
def test_every_word_of_a_fixed_set_is_translated(lang: str) -> None:
    words = {k[1:]: v for k, v in details(lang).items() if k.startswith("@")}
    assert sorted(words) == sorted(WORDS)
    for name, values in WORDS.items():
        assert sorted(words[name]) == sorted(values), f"{lang} @{name}"
        assert all(words[name][v] and words[name][v] != v for v in values), f"{lang} @{name}"
