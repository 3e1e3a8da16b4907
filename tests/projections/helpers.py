"""Random games and what the read models must show for them, computed from the events."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from typing import Any
from uuid import UUID

from app.application import CanastaApp
from domain.bot_names import bot_level
from domain.events import CardsDrawn
from domain.table import OPEN
from projections.discard_log import public_discard_log
from projections.read_models import TABLE_DEAL_RECORDED
from tests.support.store import expected_last_move


def expected_discard_log(app: CanastaApp, deal_id: UUID | str) -> list[dict[str, Any]]:
    return public_discard_log(app.events.get(UUID(str(deal_id))))


def expected_draw_log(app: CanastaApp, deal_id: UUID | str, seat: int) -> list[dict[str, Any]]:
    return [
        {
            "step": e.originator_version,
            "seat": e.seat,
            "cards": list(e.cards),
            "replacement": e.replacement,
        }
        for e in app.events.get(UUID(str(deal_id)))
        if isinstance(e, CardsDrawn) and e.seat == seat
    ]


def expected_score_table(app: CanastaApp, table_id: UUID) -> dict[str, Any]:
    """From the table's ``DealRecorded`` events (cumulative totals) and each deal's final
    state (breakdowns, R-SCORE-1); checked against the table aggregate too."""
    table = app.get_table(table_id)
    deals = []
    for recorded in app.events.get(table_id):
        if not isinstance(recorded, TABLE_DEAL_RECORDED):
            continue
        st = app.get_deal(UUID(recorded.deal_id)).state
        assert st.scores is not None
        deals.append(
            {
                "deal_id": recorded.deal_id,
                "number": st.number,
                "reason": st.end_reason,
                "scores": {
                    side: {**st.scores[side], "cumulative": recorded.totals[side]}
                    for side in sorted(recorded.totals)
                },
            }
        )
    # The same numbers as the table aggregate keeps.
    assert [{s: v["total"] for s, v in d["scores"].items()} for d in deals] == table.deal_scores
    totals = {s: v["cumulative"] for s, v in deals[-1]["scores"].items()} if deals else {}
    if deals:
        assert totals == table.totals
    return {"table_id": str(table_id), "deals": deals, "totals": totals}


def utc(moment: Any) -> str:
    """A timestamp as the read models show it (ISO 8601, UTC)."""
    return str(moment.astimezone(UTC).isoformat())


def expected_lobby_row(app: CanastaApp, table_id: UUID | str) -> dict[str, Any]:
    """What the lobby lists for a table: the table aggregate as it is now, the times of
    its first and last events, and of its last move."""
    table = app.get_table(UUID(str(table_id)))
    events: list[Any] = list(app.events.get(table.id))
    return {
        "id": str(table.id),
        "entry": table.entry,
        "players": table.players,
        "options": table.options,
        "target": table.target,
        "host": table.host,
        "seats": table.seats,
        "bots": [bot_level(p) for p in table.seats],
        "free_seats": table.seats.count(None),
        "away": [seat for seat in range(table.players) if table.away(seat)],
        "turn_seconds": table.turn_seconds,
        "sides": table.sides,
        "totals": None if table.status == OPEN else table.totals,
        "status": table.status,
        "deals": len(table.deals),
        "current_deal": table.deals[-1] if table.deals else None,
        "winners": table.winners,
        "version": table.version,
        "created_at": utc(events[0].timestamp),
        "updated_at": utc(events[-1].timestamp),
        "last_move_at": utc(expected_last_move(app, table.id)),
    }


def lobby_row(read_models: Any, table_id: UUID | str) -> dict[str, Any] | None:
    """The table's row in the lobby, whatever its status (None if it is not listed)."""
    for status in ("open", "playing", "finished", "stopped"):
        for row in read_models.lobby(status, limit=100_000):
            if row["id"] == str(table_id):
                return dict(row)
    return None


def assert_read_models_match(app: CanastaApp, read_models: Any, table_ids: Sequence[UUID]) -> None:
    """Every deal's discard log, every seat's draw log, every game's score table and its row
    in the lobby."""
    for table_id in table_ids:
        table = app.get_table(table_id)
        assert lobby_row(read_models, table_id) == expected_lobby_row(app, table_id)
        assert read_models.score_table(table_id) == expected_score_table(app, table_id)
        for deal_id in table.deals:
            assert read_models.discard_log(deal_id) == expected_discard_log(app, deal_id)
            for seat in range(table.players):
                assert read_models.draw_log(deal_id, seat) == expected_draw_log(app, deal_id, seat)


def row_counts(dump: dict[str, list[dict[str, Any]]]) -> dict[str, int]:
    return {table: len(rows) for table, rows in dump.items()}
