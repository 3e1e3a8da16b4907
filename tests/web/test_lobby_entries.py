"""The lobby's create form offers each entry's player counts and no other (R-SEAT-1):
``ENTRIES`` of app/web/lobby_create.js against the entries' rule data. Fast: no browser."""

from __future__ import annotations

import json
import re

from app.web_ui import WEB_DIR
from domain.variants import VARIANTS


def entries() -> dict[str, dict[str, object]]:
    """``ENTRIES`` of lobby_create.js, read as JSON (its keys quoted)."""
    source = (WEB_DIR / "lobby_create.js").read_text(encoding="utf-8")
    found = re.search(r"const ENTRIES = (\{.*?\n\});", source, re.S)
    assert found, "lobby_create.js has no ENTRIES"
    text = re.sub(r"(\w+):", r'"\1":', found.group(1).replace(",\n}", "\n}"))  # keys quoted
    found_entries: dict[str, dict[str, object]] = json.loads(text)
    return found_entries


def test_the_form_offers_each_entry_s_player_counts_and_targets() -> None:
    shown = entries()
    assert set(shown) == set(VARIANTS)
    for name, variant in VARIANTS.items():
        assert shown[name]["players"] == list(variant.player_counts), name
        assert shown[name]["target"] == variant.target, name
        assert shown[name]["targets"] == list(variant.selectable_targets), name
        assert shown[name]["max_deals"] == variant.max_deals, name
