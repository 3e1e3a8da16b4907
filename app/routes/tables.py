"""Tables: create, join, teams, start, next deal, stop (R-SEAT-*, R-GAME-2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast
from uuid import UUID

from fastapi import APIRouter

from app.deps import AccountDep, CanastaDep, MaybeAccount
from app.routes.seats_view import seats_view
from app.schemas import DealRef, JoinIn, NextDealIn, StartIn, TableIn, TeamsIn, TurnClockIn
from app.schemas_views import NewTable, SeatTaken, TableForYou, TableView
from app.watch import WATCH_TABLE
from domain.bot_names import bot_level
from domain.table import Table
from domain.variants import get_variant

router = APIRouter(tags=["tables"])


def table_view(table: Table) -> dict[str, Any]:
    """Everything about a table is public: seats, teams, options, scores, deals."""
    return {
        "id": str(table.id),
        "entry": table.entry,
        "players": table.players,
        "options": table.options,
        "target": table.target,
        "max_deals": get_variant(table.entry).max_deals,
        "host": table.host,
        "seats": table.seats,
        "bots": [bot_level(p) for p in table.seats],
        "sides": table.sides,
        "status": table.status,
        "totals": table.totals,
        "deals": table.deals,
        "current_deal": table.deals[-1] if table.deals else None,
        "deal_scores": table.deal_scores,
        "winners": table.winners,
        "version": table.version,
        "private": table.private,
        "spectators": table.spectators,
        "rematch_of": table.rematch_of,
        "rematch": table.rematch,
        **seats_view(table),
        "turn_seconds": table.turn_seconds,
    }


@router.post("/tables", status_code=201, response_model=NewTable, response_model_exclude_none=True)
def create_table(body: TableIn, account: AccountDep, canasta: CanastaDep) -> NewTable:
    """The creator is the host (R-SEAT-3); he still has to take a seat to play. A
    ``private`` table is left out of the lobby and its seats need the invite code, given
    here once (docs/tables.md); ``spectators: false`` lets only its players watch."""
    options = body.options.model_dump()
    table_id, code = canasta.open_table(
        account.name,
        body.entry,
        body.players,
        options,
        body.target,
        private=body.private,
        spectators=body.spectators,
        turn_seconds=body.turn_seconds,
    )
    return NewTable(id=table_id, invite=code)


@router.get("/tables/{table_id}", response_model=TableForYou, dependencies=[WATCH_TABLE])
def get_table(table_id: UUID, canasta: CanastaDep, account: MaybeAccount) -> dict[str, Any]:
    """The table, public; with a bearer token also ``your_last_seq``, the requester's last
    sequence number at this table (R-CMD-1; 0 before his first command; null without a
    token): a client that lost its counter sends its next command above it. ``deadline``:
    when the seat to act in the current deal runs out of time (docs/tables.md)."""
    table = canasta.get_table(table_id)
    view = table_view(table)
    view["deadline"] = canasta.table_deadline(table)
    view["your_last_seq"] = None if account is None else canasta.last_seq(table_id, account.name)
    return view


@router.put("/tables/{table_id}/clock", response_model=TableView)
def set_turn_clock(
    table_id: UUID, body: TurnClockIn, account: AccountDep, canasta: CanastaDep
) -> dict[str, Any]:
    """The host sets the turn clock (seconds, or null: none) before the start
    (docs/tables.md, "Turn clock")."""
    canasta.set_turn_clock(table_id, account.name, body.turn_seconds)
    return table_view(canasta.get_table(table_id))


@router.post("/tables/{table_id}/seats", response_model=SeatTaken)
def join(table_id: UUID, body: JoinIn, account: AccountDep, canasta: CanastaDep) -> SeatTaken:
    """A free seat (or the one asked for); a private table's seat needs ``invite``, its
    invite code (403 ``invite_required`` or ``invite_invalid``; its host needs none). With
    ``bot``, the host seats a bot of that level instead (docs/bots.md)."""
    if body.bot is not None:
        return SeatTaken(seat=canasta.seat_bot(table_id, account.name, body.bot, body.seat))
    return SeatTaken(seat=canasta.join_table(table_id, account.name, body.seat, body.invite))


@router.put("/tables/{table_id}/teams", response_model=TableView)
def choose_teams(
    table_id: UUID, body: TeamsIn, account: AccountDep, canasta: CanastaDep
) -> dict[str, Any]:
    """The host chooses the teams before the start, where there are teams to choose (five and
    six players, ``extra_six``): ``teams`` lists room seats, team A first (R-SEAT-3).
    Answers the table."""
    canasta.choose_teams(table_id, account.name, body.teams)
    return table_view(canasta.get_table(table_id))


@router.post("/tables/{table_id}/start", status_code=201, response_model=DealRef)
def start(
    table_id: UUID, account: AccountDep, canasta: CanastaDep, body: StartIn | None = None
) -> DealRef:
    """The host starts the game (R-SEAT-3) once every seat is taken (and the teams chosen,
    where there are): the first dealer is drawn (R-DEAL-1) and deal 1 shuffled. Answers the
    deal's id. The body may be left out; its fields fix chance, which only a server set up
    for tests accepts (R-DEAL-3)."""
    body = body or StartIn()
    deal_id = canasta.start_game(
        table_id,
        account.name,
        dealer=body.dealer,
        scores_before=cast("Mapping[str, int] | None", body.scores_before),  # sides A, B, C
        deck=body.deck,
        sit_out=body.sit_out,
    )
    return DealRef(deal=deal_id)


@router.post("/tables/{table_id}/deals", status_code=201, response_model=DealRef)
def next_deal(
    table_id: UUID, account: AccountDep, canasta: CanastaDep, body: NextDealIn | None = None
) -> DealRef:
    """Opens the next deal once the current one is over and the game goes on (R-GAME-1): by
    the host, or while he is away by a player who plays his own seat. Answers the new deal's
    id. No body is needed (``deck``: only a server set up for tests accepts it)."""
    body = body or NextDealIn()
    return DealRef(deal=canasta.start_next_deal(table_id, account.name, deck=body.deck))


@router.post("/tables/{table_id}/stop", response_model=TableView)
def stop(table_id: UUID, account: AccountDep, canasta: CanastaDep) -> dict[str, Any]:
    """The host stops the game early (R-GAME-2): the completed deals keep their scores, the
    deal in play is abandoned (any later command on it is refused, R-TURN-1), no winner is
    declared. Answers the table (``status``: ``stopped``); no body."""
    canasta.stop_game(table_id, account.name)
    return table_view(canasta.get_table(table_id))
