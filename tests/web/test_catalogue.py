"""The web pages' string catalogues (app/web/i18n): every language has every key of the English
one with the same placeholders (and plural forms of its own), the pages offer every language,
and every key the pages use exists."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.web_ui import WEB_DIR
from tests.web.conftest import NewContext
from tests.web.pages import open_lobby

CATALOGUES = WEB_DIR / "i18n"


def catalogue(lang: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((CATALOGUES / f"{lang}.json").read_text(encoding="utf-8"))
    return data


#: Every language but English: one catalogue each (zh, ru, th, ...).
LANGUAGES = sorted(p.stem for p in CATALOGUES.glob("*.json") if p.stem != "en")
#: The plural categories a catalogue may add to an English key (common.js's ``t``, docs/web.md
#: "Languages"): ``<key>_one``, ``<key>_few``, ...; the key itself is the "other" form.
PLURAL = re.compile(r"^(?P<base>\w+)_(?:zero|one|two|few|many)$")
#: Languages whose "one" category holds more counts than 1 (Russian: 1, 21, 31, 101, ...).
ONE_IS_NOT_ONLY_1 = {"ru"}


def placeholders(text: str) -> list[str]:
    return sorted(re.findall(r"\{\w+\}", text))


def plural_base(key: str, english: dict[str, str]) -> str | None:
    """The English key a plural form belongs to ("table_hand_count" for "table_hand_count_few"),
    or None when the key is no plural form of one."""
    match = PLURAL.match(key)
    return match["base"] if match and match["base"] in english else None


def test_the_languages_are_the_ones_the_pages_offer() -> None:
    assert {"zh", "ru", "th"} <= set(LANGUAGES)
    common = (Path(WEB_DIR) / "i18n.js").read_text(encoding="utf-8")
    offered = re.search(r"export const LANGS = \[(.*?)\]", common)
    assert offered and sorted(re.findall(r'"(\w+)"', offered[1])) == sorted(["en", *LANGUAGES])
    pages = list(Path(WEB_DIR).glob("*.html"))
    assert len(pages) == 5, "the scan is broken"
    for page in pages:
        menu = re.search(r'<select id="lang">(.*?)</select>', page.read_text("utf-8"), re.S)
        assert menu, f"{page.name} has no language menu"
        assert sorted(re.findall(r'value="(\w+)"', menu[1])) == sorted(["en", *LANGUAGES])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_catalogue_has_every_english_key_translated_with_its_placeholders(
    lang: str,
) -> None:
    english, translated = catalogue("en"), catalogue(lang)
    assert not sorted(set(english) - set(translated)), "keys missing"
    for key, text in translated.items():
        assert text.strip(), key
        base = plural_base(key, english)
        if key not in english:  # a plural form English does not need: "table_hand_count_few"
            assert base, f"{key}: neither an English key nor a plural form of one"
        if base:
            # A plural form may say "1" for the count where the count is always 1 here.
            expected = set(placeholders(english[base]))
            assert expected - {"{count}"} <= set(placeholders(text)) <= expected, key
        else:
            assert placeholders(text) == placeholders(english[key]), key
    # Translated, not copied: the visible sentences (words besides placeholders) differ.
    worded = [k for k, v in english.items() if re.search(r"[a-z]{3}", re.sub(r"\{\w+\}", "", v))]
    assert "meld_of" not in worded and "table_hand_count" in worded, "the scan is broken"
    assert [key for key in worded if translated[key] == english[key]] == []


@pytest.mark.parametrize("lang", sorted(ONE_IS_NOT_ONLY_1))
def test_a_one_form_that_serves_21_says_its_count(lang: str) -> None:
    """Russian's "one" form is used for 21 and 101 too: "21 карта", never "1 карта"."""
    english, translated = catalogue("en"), catalogue(lang)
    for key, text in translated.items():
        base = plural_base(key, english)
        if key.endswith("_one") and base and "{count}" in english[base]:
            assert "{count}" in text, key


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


#: Where a Russian sentence may name a card ("дама червей", a name in the nominative, the only
#: case the pages have): after a colon or a dash ("сбрасывает карту: дама червей"), or after
#: "сверху" ("сверху дама червей", what lies on top), as the whole of a label.
RUSSIAN_NOMINATIVE = re.compile(r"(?:^|: |— |сверху )\{(?:card|cards|top)\}$")


def test_a_russian_sentence_names_a_card_where_its_nominative_is_right() -> None:
    """A card's Russian name is in the nominative; the sentences put it where another case was
    needed, and a screen reader said "kira сбрасывает двойка бубён", "берёт сброс вместе с
    дама пик", "Сброс открыт картой дама червей": each says it after a colon now."""
    named = {k: v for k, v in catalogue("ru").items() if re.search(r"\{(?:card|cards|top)\}", v)}
    assert "event_CardDiscarded" in named, "the scan is broken"
    for key, text in named.items():
        for place in re.finditer(r"\{(?:card|cards|top)\}", text):
            assert RUSSIAN_NOMINATIVE.search(text[: place.end()]), f"{key}: {text}"


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
