"""Bots at tables (docs/bots.md): the host seats a bot in a free seat, and a player starts a
practice table (himself in seat 0, bots in the others) in one call.

A bot sits under the name ``bot:<level>:<seat>`` (``domain.bot_names.bot_name``), recorded like a
person's seat (``PlayerSeated``); the bot process (``app.bot_runner``) plays its turns
through ``submit``, the command path of every player."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID

from app.services.tables import TableService
from bots import LEVELS
from domain.errors import SetupError
from domain.seating import default_teams
from domain.table import Table

#: The error code of a bot level that does not exist (docs/rules/common.md).
BOT_LEVEL_UNKNOWN = "bot_level_unknown"


def check_level(level: str) -> None:
    if level not in LEVELS:
        raise SetupError(BOT_LEVEL_UNKNOWN, "table.bot_level", level=level, levels=list(LEVELS))


class BotSeatService(TableService):
    def seat_bot(self, table_id: UUID, player: str, level: str, seat: int | None = None) -> int:
        """The host seats a bot of ``level`` (R-SEAT-3: only the host; R-SEAT-5: a free seat,
        before the start); returns its seat."""
        table = self.get_table(table_id)
        table.check_host(player)
        check_level(level)
        taken = table.seat_bot(player, level, seat)
        self._save(table)
        return taken

    def start_practice(
        self,
        player: str,
        entry: str,
        players: int,
        level: str,
        options: Mapping[str, Any] | None = None,
        target: int | None = None,
        *,
        private: bool = False,
        spectators: bool = True,
        turn_seconds: int | None = None,
    ) -> tuple[UUID, UUID]:
        """A practice table: ``player`` hosts it and sits in seat 0, bots of ``level`` in the
        other seats, the default teams where the host chooses them (team A on the even
        seats), started at once; ``private`` leaves it out of the lobby (its invite code is
        not shown: nobody else can join it); ``turn_seconds``: the turn clock (None: none).
        Returns the table's and the first deal's ids."""
        check_level(level)
        Table.check_setup(entry, players, dict(options or {}), target)  # before any write
        table_id, _code = self.open_table(
            player,
            entry,
            players,
            options,
            target,
            private=private,
            spectators=spectators,
            turn_seconds=turn_seconds,
        )
        table = self.get_table(table_id)
        table.join(player, 0)
        for seat in range(1, players):
            table.seat_bot(player, level, seat)
        teams = default_teams(entry, players)
        if teams:
            table.choose_teams(player, teams)
        self._save(table)
        return table_id, self.start_game(table_id, player)
