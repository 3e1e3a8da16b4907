"""Read-model endpoints: the public discard log, a player's own draw log, the score table and
the lobby, all read from the projections (``app.infra.projection_runner.ReadModels``).

Read-your-writes: before a query, the projection it reads is given up to
``READ_MODEL_WAIT_SECONDS`` to process the event log up to its head now, so a client sees
whatever it (or anyone) had recorded before asking. If the projection is further behind than
that, or its catch-up fails, the rows it has are served anyway, with the response header
``X-Read-Model-Behind: true``: ask again later for the rest.

Secrecy (R-VIEW-1..4): the discard log, the score table and the lobby are public; a draw log
is shown only to the player whose draws it lists, his seat taken from his token (R-CMD-2),
never from the request.

With a read replica (``app.replica``, docs/scaling.md) the rows come from the replica once its
projection has processed every event the replica holds (the read waits up to
``read_replica_wait_seconds`` for it), so they agree with the replica's deal and table views; a
deal's or table's log whose read carries ``X-Canasta-Min-Step`` needs that step on the replica
first. Otherwise they come from the primary as above.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal
from uuid import UUID

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from app.application import CanastaApp
from app.deps import AccountDep, SettingsDep
from app.infra.projection_runner import ReadModels
from app.outage import DATABASE_ERRORS
from app.replica import DealStore, Reads, ReadsDep, TableStore
from app.schemas import ErrorOut
from app.schemas_events import Entry, SeatNo, Side
from app.watch import WATCH_DEAL, WATCH_TABLE
from domain.errors import Forbidden
from projections.read_models import (
    DiscardLogProjection,
    DrawLogProjection,
    LobbyProjection,
    ReadModelProjection,
    ScoreTableProjection,
)
from projections.seat_views import draws_made_by

log = logging.getLogger("canasta.api")
router = APIRouter(tags=["read models"])

#: How long a query waits for its projection to reach the log's head.
READ_MODEL_WAIT_SECONDS = 2.0
#: Set ("true") on a response whose read model had not caught up with the log.
BEHIND_HEADER = "X-Read-Model-Behind"

Step = Annotated[int, Field(ge=1)]
SeatNumber = Annotated[int, Field(ge=0)]


# --- response bodies ---------------------------------------------------------------------------


class Public(BaseModel):
    """A response body: what the read model holds, as published in the OpenAPI schema."""


class TurnedUpEntry(Public):
    """A card turned up to start the pile (R-DEAL-7); crosswise if it freezes the pile."""

    step: Step
    kind: Literal["turned_up"]
    card: str
    crosswise: bool


class DiscardedEntry(Public):
    step: Step
    kind: Literal["discarded"]
    seat: SeatNumber
    card: str


class PileTakenEntry(Public):
    """Who took the pile, how many cards, and its top card (R-VIEW-2)."""

    step: Step
    kind: Literal["pile_taken"]
    seat: SeatNumber
    top: str
    size: Annotated[int, Field(ge=1)]


class AskedEntry(Public):
    """A player asked his partner whether he may go out."""

    step: Step
    kind: Literal["asked"]
    seat: SeatNumber
    partner: SeatNumber


class AnsweredEntry(Public):
    step: Step
    kind: Literal["answered"]
    seat: SeatNumber
    yes: bool


DiscardLogEntry = Annotated[
    TurnedUpEntry | DiscardedEntry | PileTakenEntry | AskedEntry | AnsweredEntry,
    Field(discriminator="kind"),
]


class DrawLogEntry(Public):
    """Cards the seat drew from the stock at ``step``; ``replacement`` when they replaced a
    red three (R-DEAL-6, R-DRAW-2)."""

    step: Step
    seat: SeatNumber
    cards: list[str]
    replacement: bool


class SideScore(BaseModel):
    """One side's score for one deal: the R-SCORE-1 breakdown (every part is listed once the
    deal is scored), the deal's ``total`` and the side's ``cumulative`` total after it. A
    part the domain adds later appears here as an extra integer field."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, int]

    melds: int | None = None
    natural_canastas: int | None = None
    mixed_canastas: int | None = None
    wild_canastas: int | None = None
    special_canastas: int | None = None
    canasta_bonus: int | None = None
    going_out: int | None = None
    concealed: int | None = None
    red_threes: int | None = None
    hands: int | None = None
    penalties: int | None = None
    ponytails: int | None = None
    cut_bonus: int | None = None
    total: int
    cumulative: int


class DealScores(Public):
    deal_id: UUID
    number: Annotated[int, Field(ge=1)]
    reason: str | None = Field(description="how the deal ended (went_out, pile_declined, ...)")
    scores: dict[str, SideScore] = Field(description="per side")


class ScoreTable(Public):
    """Every completed deal of the game in order (R-SCORE-1), and the totals after the
    last (R-GAME-1). An unfinished or abandoned deal is not listed (R-GAME-2)."""

    table_id: UUID
    deals: list[DealScores]
    totals: dict[str, int]


class LobbyTable(Public):
    """A table as the lobby lists it (all public: R-SEAT-3, R-SEAT-5)."""

    id: UUID
    entry: Entry
    players: Annotated[int, Field(ge=2, le=6)]
    options: dict[str, bool]
    target: int
    host: str
    seats: list[str | None] = Field(description="the player in each room seat, null if free")
    bots: list[str | None] = Field(
        description="per room seat: the level of the bot sitting there, null for a person or "
        "a free seat"
    )
    free_seats: Annotated[int, Field(ge=0)]
    away: list[SeatNumber] = Field(
        description="the room seats the basic bot plays for their absent players "
        "(docs/tables.md, absent players)"
    )
    turn_seconds: int | None = Field(
        description="the turn clock, in seconds a turn; null: none (docs/tables.md)"
    )
    sides: dict[Side, list[SeatNo]] | None = Field(description="room seats per side, once set")
    totals: dict[Side, int] | None = Field(description="each side's total, once started")
    status: Literal["open", "playing", "finished", "stopped"]
    deals: Annotated[int, Field(ge=0)] = Field(description="deals opened so far")
    current_deal: UUID | None = Field(description="the last deal opened: the one to watch")
    winners: list[Side] | None = Field(description="the winning sides once the game is finished")
    version: Annotated[int, Field(ge=1)] = Field(description="the table's step")
    created_at: datetime
    updated_at: datetime = Field(description="the table's last change (its last table event)")
    last_move_at: datetime = Field(
        description="the table's last move: its last table event or public event of its "
        "current deal (a draw, a meld, a discard, ...), up to 60 s early: the lobby stores "
        "a deal's move only when it is at least 60 s past the stored one (docs/api.md)"
    )
    idle: bool = Field(
        description="no move for CANASTA_LOBBY_IDLE_SECONDS (30 minutes by default) by "
        "last_move_at: the lobby shows the table apart"
    )


# --- helpers -------------------------------------------------------------------------------------


def caught_up(
    read_models: ReadModels, response: Response, projection: type[ReadModelProjection]
) -> None:
    """Let ``projection`` reach the log's head (read-your-writes); if it cannot in time,
    the response says so in its headers and the query serves what there is."""
    try:
        read_models.wait_until(timeout=READ_MODEL_WAIT_SECONDS, projections=[projection.name])
    except TimeoutError:
        response.headers[BEHIND_HEADER] = "true"
    except DATABASE_ERRORS:
        raise  # the database does not answer: 503 (app/outage.py), nothing to serve
    except Exception as exc:  # the projection failed: its runner retries; serve what exists
        # No message: it could quote an event (cards) that this requester may not see.
        log.error("read model %s could not catch up: %s", projection.name, type(exc).__name__)
        response.headers[BEHIND_HEADER] = "true"


def serving(
    reads: Reads,
    store: CanastaApp | None,
    response: Response,
    projection: type[ReadModelProjection],
) -> ReadModels:
    """The read models to query: the replica's when the route reads the replica (``store``,
    the application its deal or table was read from; None for the lobby) and the projection
    there has processed what the replica holds; else the primary's, caught up."""
    if reads.replica is not None and (store is None or store is reads.replica):
        models = reads.replica_read_models(projection.name)
        if models is not None:
            return models
    caught_up(reads.primary_models, response, projection)
    return reads.primary_models


_BEHIND: dict[str, Any] = {
    "headers": {
        BEHIND_HEADER: {
            "description": "present (true) when the read model had not caught up with the "
            f"event log within {READ_MODEL_WAIT_SECONDS:g} s: the rows shown may be incomplete",
            "schema": {"type": "string", "enum": ["true"]},
        }
    }
}
_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "no such deal or table"}
}


# --- endpoints -----------------------------------------------------------------------------------


@router.get(
    "/deals/{deal_id}/discard-log",
    response_model=list[DiscardLogEntry],
    responses={200: _BEHIND, **_NOT_FOUND},
    dependencies=[WATCH_DEAL],
)
def discard_log(
    deal_id: UUID,
    canasta: DealStore,
    reads: ReadsDep,
    response: Response,
    after: Annotated[
        int | None, Query(ge=0, le=10**9, description="entries after this step")
    ] = None,
) -> list[dict[str, Any]]:
    """The deal's public discard log (R-VIEW-2), oldest first: every turned-up card, every
    discard, every pile taken (by whom, how many cards, the top card), every partner question
    and answer. Anyone may read it, spectators included."""
    canasta.get_deal(deal_id)  # 404 for an unknown deal
    return serving(reads, canasta, response, DiscardLogProjection).discard_log(deal_id, after)


@router.get(
    "/deals/{deal_id}/draw-log",
    response_model=list[DrawLogEntry],
    responses={
        200: _BEHIND,
        401: {"model": ErrorOut, "description": "no or bad bearer token"},
        403: {"model": ErrorOut, "description": "no seat at this deal's table (R-VIEW-3)"},
        **_NOT_FOUND,
    },
)
def draw_log(
    deal_id: UUID,
    account: AccountDep,
    canasta: DealStore,
    reads: ReadsDep,
    response: Response,
) -> list[dict[str, Any]]:
    """The requester's OWN draws from the stock in this deal (R-VIEW-3), oldest first: his
    seat comes from his token, never from the request. A seat sitting the deal out drew
    nothing (R-SEAT-4). Of a seat whose player changed (docs/tables.md, absent players), only
    the draws made while he played it: as the deal's history shows them to him."""
    deal = canasta.get_deal(deal_id)
    player_ids = deal.state.player_ids
    if account.name not in player_ids:
        raise Forbidden("R-VIEW-3", "draws.private")
    seat = player_ids.index(account.name)
    rows = serving(reads, canasta, response, DrawLogProjection).draw_log(deal_id, seat)
    # Read after the rows, the history holds every step they name.
    mine = draws_made_by(canasta.events.get(deal_id), account.name, seat)
    return [row for row in rows if row["step"] in mine]


@router.get(
    "/tables/{table_id}/scores",
    response_model=ScoreTable,
    response_model_exclude_unset=True,
    responses={200: _BEHIND, **_NOT_FOUND},
    dependencies=[WATCH_TABLE],
)
def score_table(
    table_id: UUID, canasta: TableStore, reads: ReadsDep, response: Response
) -> dict[str, Any]:
    """The game's score table: per completed deal and per side, the breakdown of R-SCORE-1,
    the deal's total and the cumulative total; ``totals`` after the last deal (R-GAME-1)."""
    canasta.get_table(table_id)  # 404 for an unknown table
    return serving(reads, canasta, response, ScoreTableProjection).score_table(table_id)


@router.get("/tables", response_model=list[LobbyTable], responses={200: _BEHIND})
def lobby(
    reads: ReadsDep,
    settings: SettingsDep,
    response: Response,
    status: Annotated[
        Literal["open", "playing", "finished", "stopped"],
        Query(
            description="open: seats being filled; playing; finished (R-GAME-1); "
            "stopped early by the host (R-GAME-2)"
        ),
    ] = "open",
    limit: Annotated[int, Query(ge=1, le=100)] = 100,
    idle: Annotated[
        bool | None,
        Query(
            description="true: only the tables without a move for CANASTA_LOBBY_IDLE_SECONDS "
            "(30 minutes by default); false: only the others; omitted: both"
        ),
    ] = None,
) -> list[dict[str, Any]]:
    """The lobby: tables of one status, at most ``limit``. Tables in play by their last
    move, the latest first (so the live ones come before the idle ones); the others newest
    first. An open table shows who sits where and how many seats are free; a table in play
    its current deal."""
    since = datetime.now(UTC) - timedelta(seconds=settings.lobby_idle_seconds)
    tables = serving(reads, None, response, LobbyProjection).lobby(
        status,
        limit,
        moved_since=since if idle is False else None,
        moved_before=since if idle is True else None,
    )
    for table in tables:
        table["idle"] = datetime.fromisoformat(table["last_move_at"]) < since
    return tables
