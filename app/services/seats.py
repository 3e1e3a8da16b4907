"""Absent players (docs/tables.md): leaving a seat, the basic bot standing in, taking the
seat back, the host giving a vacant seat to another person.

Every change of who plays a seat is recorded on the table (``SeatLeft``, ``SeatTakenOver``,
``SeatTakenBack``, ``SeatGiven``) and, while a deal is not over, on the deal too
(``SeatPlayerChanged``), in one transaction. The deal's record is what every command, view,
replay and stream reads to know who plays which seat, so a command from a player who left
and his leave race like any two commands on the deal: exactly one wins. A deal opened later
seats whoever plays each seat then (``Table.players_now``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from uuid import UUID

from app.services.tables import TableService
from domain.deal import Deal
from domain.errors import RACE_LOST, Conflict, Forbidden, SetupError
from domain.state import OVER
from domain.table import (
    GIVEN,
    LEFT,
    PLAYING,
    TAKEN_BACK,
    Table,
)

#: A command (or the move menu) from a player away from his seat (docs/rules/common.md).
SEAT_NOT_YOURS = "seat_not_yours"
#: A change of seat that loses a race with a command (both write the deal) is tried again
#: on the new state this many times before the race is answered (409 ``race_lost``).
ATTEMPTS = 3


#: A change of seat on the table at a time: the seat, and who plays it now (None: nobody).
Change = Callable[[Table, str], tuple[int, str | None]]


def refuse_away(table: Table, player_ids: Sequence[str], player: str) -> None:
    """Why ``player``, who plays no seat of a deal of ``table`` (``player_ids``), is refused:
    a seated player away from his seat gets 403 ``seat_not_yours`` (else the caller's
    refusal, R-CMD-2)."""
    seat = table.seat_of(player)
    if seat is not None and seat < len(player_ids) and player_ids[seat] != player:
        raise Forbidden(SEAT_NOT_YOURS, "seat.away_played", seat=seat, player=table.plays(seat))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class SeatService(TableService):
    def join_table(
        self, table_id: UUID, player: str, seat: int | None = None, invite: str | None = None
    ) -> int:
        """A player away from his seat in a game in play takes it back with the call that
        seats him; anybody else joins as before."""
        table = self.get_table(table_id)
        if table.status == PLAYING and table.away_seat(player) is not None:
            return self.take_seat_back(table_id, player, seat)
        return super().join_table(table_id, player, seat, invite)

    def set_missed_turns_limit(self, table_id: UUID, player: str, limit: int) -> None:
        table = self.get_table(table_id)
        table.set_missed_turns_limit(player, limit)
        self._save(table)

    def leave_table(self, table_id: UUID, player: str) -> tuple[int, str | None]:
        """``player`` leaves his seat; returns it and the bot that plays it now (None before
        the start: the seat is free)."""
        return self._change(table_id, lambda table, at: table.leave(player, at), LEFT)

    def take_seat_back(self, table_id: UUID, player: str, seat: int | None = None) -> int:
        def back(table: Table, at: str) -> tuple[int, str]:
            own = table.away_seat(player)
            if seat is not None and own is not None and seat != own:
                raise SetupError("R-SEAT-5", "seat.not_yours", own=own, seat=seat)
            return table.take_back(player, at), player

        return self._change(table_id, back, TAKEN_BACK)[0]

    def give_seat(self, table_id: UUID, host: str, seat: int, player: str) -> str:
        """The host gives a vacant seat to ``player`` (an account: the caller checks); returns
        the player who had it."""
        previous: list[str] = []

        def give(table: Table, at: str) -> tuple[int, str]:
            previous.append(table.give_seat(host, seat, player, at))
            return seat, player

        self._change(table_id, give, GIVEN)
        return previous[-1]

    def take_over_seat(self, table_id: UUID, seat: int, reason: str) -> str:
        """The bot takes ``seat`` over for its player (``reason``: ``left`` or
        ``missed_turns``). The turn clock calls this with ``missed_turns`` once a seat's
        player has missed ``Table.missed_turns_limit`` turns in a row (docs/tables.md)."""
        _seat, by = self._change(
            table_id, lambda table, at: (seat, table.take_over(seat, reason, at)), reason
        )
        assert by is not None
        return by

    def _change(self, table_id: UUID, change: Change, reason: str) -> tuple[int, str | None]:
        """Apply ``change(table, at) -> (seat, who plays it now)`` to the table and, when it
        changes who plays and a deal is under way, to the deal; saved together."""
        for attempt in range(ATTEMPTS):
            table = self.get_table(table_id)
            seat, now = change(table, _now())
            aggregates: list[Table | Deal] = [table]
            if now is not None and table.status == PLAYING and table.deals:
                deal = self.get_deal(UUID(table.deals[-1]))
                if deal.state.phase != OVER and deal.state.player_ids[seat] != now:
                    deal.change_player(seat, now, reason)
                    aggregates.append(deal)
            try:
                self._save(*aggregates)
            except Conflict as lost:
                if lost.code != RACE_LOST or attempt == ATTEMPTS - 1:
                    raise
                continue
            return seat, now
        raise AssertionError("unreachable")  # pragma: no cover
