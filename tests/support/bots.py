"""Bots at tables, for the tests: a table whose every seat the host gave a bot, and waiting
for the bot process (``app.bot_runner``) to bring a deal to its end."""

from __future__ import annotations

from uuid import UUID

from app.application import CanastaApp
from domain.legal import seat_to_act
from domain.seating import default_teams

BOT_HOST = "hal"


def bot_table(canasta: CanastaApp, entry: str, players: int, level: str = "basic") -> UUID:
    """A table hosted by ``hal`` (not seated) with a bot of ``level`` in every seat, started;
    returns the table's id."""
    table_id = canasta.create_table(BOT_HOST, entry, players)
    for seat in range(players):
        canasta.seat_bot(table_id, BOT_HOST, level, seat)
    teams = default_teams(entry, players)
    if teams:
        canasta.choose_teams(table_id, BOT_HOST, teams)
    canasta.start_game(table_id, BOT_HOST)
    return table_id


def deal_over(canasta: CanastaApp, deal_id: UUID) -> bool:
    return seat_to_act(canasta.get_deal(deal_id).state) is None
