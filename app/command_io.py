"""A command over HTTP, shared by the route (``app.routes.deals``) and the fast lane
(``app.command_lane``): the body read as ``CommandIn``, turned into ``CanastaApp.submit``'s
arguments, decided from the cache (``submit_from_cache``), and the answer rendered."""

from __future__ import annotations

import hashlib
import json
from uuid import UUID

from fastapi.concurrency import run_in_threadpool
from pydantic import ValidationError

from app.application import Answer, CanastaApp, Expected
from app.schemas import (
    AnswerIn,
    AskPartnerIn,
    CommandBody,
    CommandIn,
    CutIn,
    DeclinePileIn,
    DiscardIn,
    DrawIn,
    MeldCommandIn,
    MeldIn,
    PickUpPonytailIn,
    TakePileIn,
    TimeOutIn,
)
from domain import commands as c


def read_command(body: bytes) -> CommandIn | None:
    """A JSON body validated as ``CommandIn``, as FastAPI validates the route's body; None
    if it is not (the route then answers FastAPI's 422)."""
    try:
        return CommandIn.model_validate(json.loads(body))
    except (ValueError, ValidationError, RecursionError):  # json's are ValueErrors
        return None


def _specs(melds: list[MeldIn]) -> tuple[c.MeldSpec, ...]:
    return tuple(c.MeldSpec(cards=tuple(m.cards), rank=m.rank) for m in melds)


def to_command(body: CommandBody) -> c.Command:
    if isinstance(body, CutIn):
        return c.Cut(body.n)
    if isinstance(body, DrawIn):
        return c.Draw()
    if isinstance(body, TakePileIn):
        return c.TakePile(_specs(body.melds))
    if isinstance(body, MeldCommandIn):
        return c.Meld(_specs(body.melds), discard=body.discard)
    if isinstance(body, DiscardIn):
        return c.Discard(body.card)
    if isinstance(body, AskPartnerIn):
        return c.AskPartner(body.partner)
    if isinstance(body, AnswerIn):
        return c.Answer(body.yes)
    if isinstance(body, PickUpPonytailIn):
        return c.PickUpPonytail()
    if isinstance(body, TimeOutIn):
        return c.TimeOut(body.step)
    assert isinstance(body, DeclinePileIn)
    return c.DeclinePile()


Submission = tuple[UUID, str, int, c.Command, Expected, str]


def expectation(body: CommandIn) -> Expected:
    """What the sender believes is current (R-CMD-1), from a command's (or a dry run's) body."""
    return Expected(
        game=body.expect.game,
        deal=body.expect.deal,
        step=body.expect.step,
        turn=body.expect.turn,
        phase=body.expect.phase,
    )


def expect_body(expected: Expected) -> dict[str, object]:
    """``expectation``'s inverse: a command body's ``expect`` (the bots' commands)."""
    return {
        "game": str(expected.game),
        "deal": expected.deal,
        "step": expected.step,
        "turn": expected.turn,
        "phase": expected.phase,
    }


def submission(deal_id: UUID, player: str, body: CommandIn) -> Submission:
    """``CanastaApp.submit``'s arguments for a request; the digest identifies the command
    (everything but ``seq``) so that a retry under the same ``seq`` is recognised."""
    expected = expectation(body)
    payload = body.model_dump(mode="json", exclude={"seq"})
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    return (deal_id, player, body.seq, to_command(body.command), expected, digest)


async def submit_from_cache(canasta: CanastaApp, args: Submission) -> Answer | None:
    """``submit_cached`` and, for an accepted command, its save by the group committer
    (awaited, no thread); None if ``submit`` must decide. ``IntegrityError``: another
    process wrote first (``submit(fresh_only=True)`` decides)."""
    fast = canasta.submit_cached(*args)
    if fast is None:
        return None
    answer, pending = fast
    if pending is not None:
        if canasta.group_commit is not None:
            await canasta.group_commit.save_async(pending)
        else:
            await run_in_threadpool(canasta.save_pending, pending)
    return answer


def render(answer: Answer) -> bytes:
    """The answer's JSON body, as Starlette's ``JSONResponse`` renders it."""
    content = {**answer.body, "replayed": answer.replayed} if answer.status == 200 else answer.body
    return json.dumps(
        content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    ).encode("utf-8")
