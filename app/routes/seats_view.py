"""What a table's view shows of who plays its seats (docs/tables.md, absent players)."""

from __future__ import annotations

from typing import Any

from domain.bot_names import bot_level
from domain.table import Table


def seats_view(table: Table) -> dict[str, Any]:
    playing = []
    for seat in range(table.players):
        now = table.plays(seat)
        change = table.playing.get(seat, {})
        playing.append(
            {
                "player": now,
                "bot": bot_level(now),
                "away": table.away(seat),
                "reason": change.get("reason"),
                "since": change.get("since"),
            }
        )
    return {"playing": playing, "missed_turns_limit": table.missed_turns_limit}
