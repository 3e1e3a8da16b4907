"""Request and answer models of the dry run, ``POST /deals/{id}/commands/check``
(docs/dry_run.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, RootModel, WithJsonSchema

from app.schemas import KEY_DESCRIPTION, PARAMS_DESCRIPTION, CommandIn, Integral, ParamValue


class CheckIn(CommandIn):
    """The body of ``POST /deals/{id}/commands``, ``seq`` optional: a dry run uses no sequence
    number. When given, it is checked as the command would check it (R-CMD-1: greater than
    the sender's last, at most ``MAX_SEQ_JUMP`` above it), and still not used."""

    seq: (
        Annotated[
            int,
            Field(
                strict=True,
                ge=1,
                le=2**53,
                description="optional: checked as the command would check it, never used",
            ),
            Integral,
        ]
        | None
    ) = None  # type: ignore[assignment]


class Undisclosed(BaseModel):
    """The first event that cards hidden from the requester decide, told as its kind and
    counts only; nothing after it is told."""

    step: int
    kind: str
    seat: int | None = None
    count: int | None = Field(None, description="cards drawn or picked up")
    counts: dict[str, int] | None = Field(None, description="cards dealt, per seat")
    replacement: bool | None = None
    reason: str | None = Field(None, description="how the deal would end (DealScored)")


#: ``events``' schema: the deal's events as the requester sees them (``DealEventView``, the
#: component of ``GET /deals/{id}/events``), sent as ``projections.dry_run`` makes them (a
#: model would add the fields an event leaves out for this viewer, e.g. an empty ``cards``);
#: tests/api/test_typed_views.py validates the answers against the document.
EVENTS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {"$ref": "#/components/schemas/DealEventView"},
}


class CheckAccepted(BaseModel):
    accepted: Literal[True]
    step: int | None = Field(
        description="the step the deal would reach; null when cards hidden from you decide "
        "how many events the command records (a cut, a draw, a pick-up, an end of the deal)"
    )
    events: Annotated[list[dict[str, Any]], WithJsonSchema(EVENTS_SCHEMA)] = Field(
        description="the events it would record, as you would see them (GET /deals/{id}/events)"
        ", up to the first that cards hidden from you decide"
    )
    undisclosed: Undisclosed | None = None
    points: int | None = Field(
        None,
        description="what the cards it lays in melds count; for the side's initial meld, as "
        "the initial-meld rule counts them (null: no card laid)",
    )
    minimum: int | None = Field(
        None, description="the initial-meld minimum, when this would be the side's first meld"
    )


class CheckError(BaseModel):
    code: str = Field(description="the code the command would be refused with")
    message: str
    key: str | None = Field(None, description=KEY_DESCRIPTION)
    params: dict[str, ParamValue] | None = Field(None, description=PARAMS_DESCRIPTION)
    points: int | None = Field(
        None, description="an initial meld short of its minimum: what it counts"
    )
    minimum: int | None = Field(None, description="an initial meld short: the minimum")


class CheckRefused(BaseModel):
    accepted: Literal[False]
    error: CheckError


class CheckOut(RootModel[CheckAccepted | CheckRefused]):
    """The dry run's answer: ``CheckAccepted`` or ``CheckRefused``, told apart by
    ``accepted`` (a plain union: OpenAPI's discriminator takes strings only)."""


def check_answer(answer: dict[str, Any]) -> dict[str, Any]:
    """The dry run's answer validated against ``CheckOut`` and as it is sent: a refusal's
    ``key`` and ``params`` left out when it has none, as the command's own refusal leaves
    them out (``ErrorDetail``, docs/api.md); ``points`` and ``minimum`` always there."""
    out: dict[str, Any] = CheckOut.model_validate(answer).model_dump(mode="json")
    error = out.get("error")
    if error is not None:
        for name in ("key", "params"):
            if error[name] is None:
                del error[name]
    return out
