"""The event words (app/web/words.js): every event kind the API can send has a sentence, and
every catalogue key the words use exists. The sentences themselves are checked in a browser
(tests/web/test_replay_audit.py)."""

from __future__ import annotations

import re
from typing import Any, get_args

from app.schemas_events import DealEventView, TableEventView
from app.schemas_records import DealEventRecord
from app.web_ui import WEB_DIR
from tests.web.test_catalogue import catalogue

WORDS = (WEB_DIR / "words.js").read_text(encoding="utf-8")


def kinds(union: Any) -> set[str]:
    """The ``kind`` literals of a typed event union (a RootModel over an annotated union)."""
    members = get_args(union.model_fields["root"].annotation)
    return {get_args(model.model_fields["kind"].annotation)[0] for model in members}


def described() -> set[str]:
    table = WORDS.split("export const DESCRIBE = {", 1)[1].split("\n};", 1)[0]
    return set(re.findall(r"^  (\w+): ", table, re.MULTILINE))


def test_every_event_kind_has_words() -> None:
    every = kinds(DealEventView) | kinds(DealEventRecord) | kinds(TableEventView)
    assert len(every) > 25, "the union scan is broken"
    assert every - described() == set()
    assert described() - every == set(), "words for a kind the API never sends"


def test_every_key_the_words_use_is_in_the_catalogue() -> None:
    english = catalogue("en")
    used = set(re.findall(r'"(event_\w+)"', WORDS))
    # prefixes, not keys
    used -= {
        "event_CardsDrawn",
        "event_CardsDrawn_replacement",
        "event_CardsDrawn_replacement_black",
    }
    # keys built from parts: the drawn-card sentences and the deal's end reasons
    used |= {
        f"event_CardsDrawn{kind}_{n}"
        for kind in ("", "_replacement", "_replacement_black")
        for n in ("one", "many", "cards")
    }
    used |= {
        f"event_reason_{reason}"
        for reason in ("went_out", "stock_exhausted", "pile_declined", "stopped")
    }
    # the singular forms common.js's t() picks for a count of one ("..._one")
    used |= {f"{key}_one" for key in used if f"{key}_one" in english}
    assert sorted(used - set(english)) == []
    assert {key for key in english if key.startswith("event_")} == used
