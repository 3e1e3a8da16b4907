"""The web pages' string catalogues (app/web/i18n): every language has every key of the English
one, and every key the pages use exists."""

from __future__ import annotations

import json
import re
from pathlib import Path

from app.web_ui import WEB_DIR
from tests.web.conftest import NewContext
from tests.web.pages import open_lobby

CATALOGUES = WEB_DIR / "i18n"


def catalogue(lang: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((CATALOGUES / f"{lang}.json").read_text(encoding="utf-8"))
    return data


def test_the_chinese_catalogue_has_every_english_key_translated() -> None:
    english, chinese = catalogue("en"), catalogue("zh")
    assert sorted(chinese) == sorted(english)
    for key, text in chinese.items():
        assert text.strip(), key
        placeholders = re.findall(r"\{\w+\}", english[key])
        assert sorted(re.findall(r"\{\w+\}", text)) == sorted(placeholders), key
    # Translated, not copied: the visible sentences differ from the English ones.
    assert all(
        chinese[key] != english[key] for key in english if re.search(r"[a-z]{3}", english[key])
    )


def test_every_key_the_pages_use_is_in_the_catalogue() -> None:
    english = catalogue("en")
    used: set[str] = set()
    for page in Path(WEB_DIR).glob("*.html"):
        used |= set(re.findall(r'data-i18n="(\w+)"', page.read_text(encoding="utf-8")))
    for script in Path(WEB_DIR).glob("*.js"):
        text = script.read_text(encoding="utf-8")
        used |= set(re.findall(r'\bt\("(\w+)"', text))
        used |= set(re.findall(r'\bnotice\("(\w+)"', text))
        # keys built from a prefix: entry_<entry>, status_<status>
        for prefix in re.findall(r"t\(`(\w+_)\$\{", text):
            assert any(key.startswith(prefix) for key in english), prefix
    missing = sorted(used - set(english))
    assert not missing, f"keys used but not in en.json: {missing}"
    assert used, "no key found: the scan is broken"


#: "{count} cards", "{count} deals": a count followed by a plural noun.
COUNTED_PLURAL = re.compile(r"\{count\} (?:\w+ ){0,2}?\w+s\b")


def test_every_counted_plural_has_a_singular_form() -> None:
    """common.js's ``t`` picks ``<key>_one`` for a count of one; a sentence with a counted
    plural noun must have it, or a page says "1 cards in hand"."""
    english = catalogue("en")
    counted = [
        k for k, v in english.items() if COUNTED_PLURAL.search(v) and not k.endswith("_many")
    ]
    assert "table_hand_count" in counted, "the scan is broken"
    for key in counted:
        assert f"{key}_one" in english, f"{key} has no singular form ({key}_one)"
        assert not COUNTED_PLURAL.search(english[f"{key}_one"]), english[f"{key}_one"]


def test_a_count_of_one_is_said_in_the_singular(new_context: NewContext) -> None:
    page, _ = open_lobby(new_context())
    said = page.evaluate(
        """async () => {
          const { t } = await import("/web/common.js");
          return [1, 2, 0].map((count) => t("table_hand_count", { count }));
        }"""
    )
    assert said == ["1 card in hand", "2 cards in hand", "0 cards in hand"]
