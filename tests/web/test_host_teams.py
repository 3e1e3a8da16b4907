"""The lobby's host controls offer teams exactly where the rules let the host choose them
(R-SEAT-2, R-SEAT-3): ``TEAM_TABLES`` of app/web/host.js against the entries' rule data, and
the sides each offers against the teams an entry may have. Fast: no browser."""

from __future__ import annotations

import json
import re

from app.web_ui import WEB_DIR
from domain.variants import VARIANTS


def team_tables() -> dict[str, dict[int, list[str]]]:
    """``TEAM_TABLES`` of host.js, read as JSON (its keys quoted)."""
    source = (WEB_DIR / "host.js").read_text(encoding="utf-8")
    found = re.search(r"const TEAM_TABLES = (\{.*?\n\});", source, re.S)
    assert found, "host.js has no TEAM_TABLES"
    text = re.sub(r"(\w+):", r'"\1":', found.group(1).replace(",\n}", "\n}"))  # keys quoted
    raw = json.loads(text)
    return {entry: {int(n): teams for n, teams in counts.items()} for entry, counts in raw.items()}


def test_teams_are_offered_where_the_host_chooses_them_and_only_there() -> None:
    tables = team_tables()
    for name, variant in VARIANTS.items():
        offered = tables.get(name, {})
        assert set(offered) == set(variant.host_chooses_teams), name
        for players, teams in offered.items():
            most = max(len(shape) for shape in variant.team_shapes[players])
            assert teams == ["A", "B", "C"][:most], (name, players)
