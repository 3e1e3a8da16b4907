"""Deals: views per viewer, sequenced commands, the redacted history and replays."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any, Literal
from uuid import UUID

from eventsourcing.persistence import IntegrityError
from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from pydantic import TypeAdapter

from app.application import Answer, CanastaApp
from app.command_io import render, submission, submit_from_cache
from app.deps import AccountDep, Caller, CanastaDep, MaybeAccount
from app.errors import COMMAND_ERRORS
from app.replica import DealStore
from app.schemas import CommandIn, CommandOut
from app.schemas_events import DealEventView
from app.schemas_views import DealView
from app.watch import WATCH_DEAL
from domain.clock import deadline
from domain.deal import Deal
from projections.seat_views import SeatFollower
from projections.visibility import Viewer, deal_view

router = APIRouter(tags=["deals"])
ViewAs = Annotated[Literal["me", "spectator"], Query(alias="as")]


def viewer_of(deal: Deal, account: Caller | None, view_as: str = "me") -> Viewer:
    """A seated player sees his seat's cards; anyone else is a spectator (R-VIEW-1/2)."""
    if view_as == "me" and account is not None and account.name in deal.state.player_ids:
        return Viewer.player(deal.state.player_ids.index(account.name))
    return Viewer.spectator()


def clock(canasta: CanastaApp, view: dict[str, Any], deal: Deal) -> None:
    """At a table with a turn clock, the deadline of the deal's seat to act (docs/tables.md);
    a deal without a clock shows no ``deadline``."""
    turn_seconds = canasta.get_table(UUID(deal.state.table_id)).turn_seconds
    if turn_seconds is not None:
        view["deadline"] = deadline(deal.turn_since, turn_seconds, deal.state)


@router.get(
    "/deals/{deal_id}",
    response_model=DealView,
    response_model_exclude_unset=True,
    dependencies=[WATCH_DEAL],
)
def get_deal(
    deal_id: UUID, canasta: DealStore, account: MaybeAccount, view_as: ViewAs = "me"
) -> dict[str, Any]:
    """The deal now, as the requester may see it: a seated player gets his own hand,
    everybody else the spectator's view (no hand, no stock, no seed). With a read replica,
    send ``X-Canasta-Min-Step``: your last command's step (docs/api.md)."""
    deal = canasta.get_deal(deal_id)
    view = deal_view(deal.state, viewer_of(deal, account, view_as))
    view.update(id=str(deal_id), table=deal.state.table_id, step=deal.version)
    clock(canasta, view, deal)
    return view


@router.post(
    "/deals/{deal_id}/commands",
    response_model=CommandOut,
    responses=COMMAND_ERRORS,
)
async def send_command(
    deal_id: UUID, body: CommandIn, account: AccountDep, canasta: CanastaDep
) -> Response:
    """One command of the player to act (R-CMD-1): ``seq`` grows per sender and table; a
    retry under a used ``seq`` gets the first answer; ``expect`` must match the deal."""
    args = submission(deal_id, account.name, body)
    # The common case is decided here, in the event loop, from this process's cache (no
    # I/O), and saved by the group committer while this request waits without a thread.
    # Everything else goes to the threadpool, where ``submit`` reads the store.
    answer: Answer | None = None
    try:
        answer = await submit_from_cache(canasta, args)
    except IntegrityError:  # another process changed the deal or the log first
        answer = await run_in_threadpool(partial(canasta.submit, *args, fresh_only=True))
    if answer is None:
        answer = await run_in_threadpool(canasta.submit, *args)
    return Response(render(answer), answer.status, media_type="application/json")


#: The events' JSON as it is: validating a whole history against ``DealEventView`` took about
#: six times as long as this (some 10 µs an event); tests/api/test_typed_views.py validates
#: the answers of whole deals of every entry against the document instead.
_EVENTS_JSON = TypeAdapter(list[dict[str, Any]])


@router.get(
    "/deals/{deal_id}/events", response_model=list[DealEventView], dependencies=[WATCH_DEAL]
)
def events(
    deal_id: UUID,
    canasta: DealStore,
    account: MaybeAccount,
    after: Annotated[int, Query(ge=0, le=10**9)] = 0,
    view_as: ViewAs = "me",
) -> Response:
    """The deal's history after step ``after``, each event redacted for the requester."""
    deal = canasta.get_deal(deal_id)
    follower = follower_of(canasta, deal, account, view_as, after)
    body = _EVENTS_JSON.dump_json(redacted_events(canasta, deal, follower, after))
    return Response(body, media_type="application/json")


def follower_of(
    canasta: CanastaApp, deal: Deal, account: Caller | None, view_as: str, after: int
) -> SeatFollower:
    """The requester's view of each event after step ``after`` as he could see it when it was
    recorded (``viewer_of`` at each step: seats change players, docs/tables.md)."""
    name = account.name if view_as == "me" and account is not None else None
    if name is None or not 0 < after < deal.version:
        return SeatFollower(name, deal.state.player_ids)  # from the start: Started sets it
    return SeatFollower(name, canasta.get_deal(deal.id, version=after).state.player_ids)


def redacted_events(
    canasta: CanastaApp, deal: Deal, follower: SeatFollower, after: int
) -> list[dict[str, Any]]:
    out = []
    for event in canasta.events.get(deal.id, gt=after or None):
        view = follower.view(event, deal.state)
        if view is not None:
            out.append(view)
    return out


@router.get(
    "/deals/{deal_id}/replay",
    response_model=DealView,
    response_model_exclude_unset=True,
    dependencies=[WATCH_DEAL],
)
def replay(
    deal_id: UUID,
    canasta: DealStore,
    account: MaybeAccount,
    step: Annotated[int, Query(ge=1, le=10**9)],
    view_as: ViewAs = "me",
) -> dict[str, Any]:
    """The deal as it was at ``step``, as the requester was allowed to see it then (R-HIST-2)."""
    now = canasta.get_deal(deal_id)
    then = canasta.get_deal(deal_id, version=min(step, now.version))
    view = deal_view(then.state, viewer_of(then, account, view_as))  # seated then
    view.update(id=str(deal_id), table=then.state.table_id, step=then.version)
    clock(canasta, view, then)
    return view
