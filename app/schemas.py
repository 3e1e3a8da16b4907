"""Request and response bodies of the HTTP API (separate from the domain's types)."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from app.schemas_events import DealEventView
from bots import LEVELS
from domain import commands as c
from domain.variants import VARIANTS

# A card in full notation (R-CARD-1), or TOP in a take_pile's first meld. Length-bounded so
# that no request can make the server work hard; whether it is a real card is the engine's call.
CARD_PATTERN = r"^[0-9A-Z/]+$"
CardName = Annotated[str, Field(min_length=2, max_length=6, pattern=CARD_PATTERN)]


def _integral(value: Any) -> Any:
    """``4.0`` is the integer 4, as JSON Schema's ``integer`` reads it (a client may send
    it); ``1.5``, ``true`` and ``"1"`` stay what they are, and the strict check refuses them."""
    return int(value) if type(value) is float and value.is_integer() else value


#: After a strict integer's ``Field`` (placed after it, the OpenAPI document keeps its bounds).
Integral = BeforeValidator(_integral)
#: JSON numbers only: ``true`` or ``"1"`` is not a seat (nor a count, ``n``, ``seq`` or step).
Seat = Annotated[int, Field(strict=True, ge=0, le=5), Integral]
NAME_PATTERN = r"^[A-Za-z0-9._-]+$"
Name = Annotated[str, Field(min_length=1, max_length=32, pattern=NAME_PATTERN)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


Flag = Annotated[bool, Field(strict=True)]


class RegisterIn(Strict):
    name: Name


class RegisterOut(BaseModel):
    name: str
    token: str = Field(description="bearer token; shown once, stored only as a hash")


class NewToken(BaseModel):
    """The player's new bearer token (``POST /me/token``): every token he had is revoked."""

    name: str
    token: str = Field(description="the new bearer token; shown once, stored only as a hash")


class Me(BaseModel):
    name: str
    roles: list[str]


class Options(Strict):
    always_frozen: bool = False


#: A table's turn clock (docs/tables.md, "Turn clock"): seconds a seat has to act, or null.
TurnSeconds = Annotated[
    Annotated[int, Field(strict=True, ge=1, le=3600), Integral] | None,
    Field(
        description="the turn clock: seconds each seat has to act, from the server's minimum "
        "(CANASTA_TURN_SECONDS_MIN, 10 by default; less is refused as R-SEAT-3) to 3600; "
        "null: none"
    ),
]


class TurnClockIn(Strict):
    turn_seconds: TurnSeconds


def _counts(counts: tuple[int, ...]) -> str:
    if len(counts) > 2 and counts == tuple(range(counts[0], counts[-1] + 1)):
        return f"{counts[0]} to {counts[-1]}"
    return " or ".join(map(str, counts))


def _entry_setup() -> str:
    """What each entry takes, from ``domain.variants`` (R-SEAT-1, R-SEAT-3, R-GAME-1)."""
    said = []
    for key, variant in VARIANTS.items():
        targets = f"plays to {variant.target}"
        if variant.selectable_targets:
            choices = ", ".join(map(str, variant.selectable_targets))
            targets += f" (or {choices}: target)"
        options = ", ".join(sorted(variant.options)) or "none"
        said.append(
            f"{key}: {_counts(variant.player_counts)} players, {targets}, options: {options}"
        )
    return "; ".join(said)


#: What a client must know to set a table up without a refusal (400 R-SEAT-1, R-SEAT-3).
ENTRY_SETUP = _entry_setup()


class TableIn(Strict):
    entry: Literal["classic", "extra_six", "modern_american", "ponytail"] = Field(
        "classic",
        description=f"the entry; each takes its own player counts, target and options: "
        f"{ENTRY_SETUP}. Five and six players, and extra_six, need teams "
        "(PUT /tables/{id}/teams) before the start",
    )
    players: Annotated[int, Field(strict=True, ge=2, le=6), Integral] = Field(
        4, description="the number of seats: one of the entry's counts (see entry)"
    )
    options: Options = Field(
        Options(), description="options the entry offers (see entry); others refused"
    )
    target: Annotated[int, Field(strict=True, ge=1, le=1_000_000), Integral] | None = Field(
        None,
        description="the score that ends the game: null for the entry's own; another only "
        "where the entry offers a choice (see entry)",
    )
    private: Flag = Field(False, description="unlisted; a seat needs the invite code")
    spectators: Flag = Field(True, description="people without a seat may watch")
    turn_seconds: TurnSeconds = None


#: An invite code as the server makes them (``secrets.token_urlsafe``).
InviteCode = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]


#: A bot level's name (``bots.LEVELS``); an unknown one is refused as ``bot_level_unknown``.
BotLevel = Annotated[
    str,
    Field(min_length=1, max_length=32, description="a bot level: " + ", ".join(LEVELS)),
]


class JoinIn(Strict):
    seat: Seat | None = None
    invite: InviteCode | None = Field(None, description="a private table's invite code")
    bot: BotLevel | None = Field(
        default=None, description="the host seats a bot of this level instead of himself"
    )


class SpectatorsIn(Strict):
    allowed: Flag


class TeamsIn(Strict):
    teams: Annotated[
        list[Annotated[list[Seat], Field(max_length=6)]], Field(min_length=1, max_length=2)
    ]


class StartIn(Strict):
    """Fixing chance is refused unless the server is set up for tests (R-DEAL-3)."""

    dealer: Seat | None = None
    scores_before: (
        dict[
            Literal["A", "B", "C"],  # the document says so (propertyNames), not just the server
            Annotated[int, Field(strict=True, ge=-(10**7), le=10**7), Integral],
        ]
        | None
    ) = None
    deck: Annotated[list[CardName], Field(max_length=400)] | None = None
    sit_out: Annotated[list[Seat], Field(max_length=2)] | None = None


class NextDealIn(Strict):
    deck: Annotated[list[CardName], Field(max_length=400)] | None = None


class MeldIn(Strict):
    cards: Annotated[list[CardName], Field(min_length=1, max_length=30)]
    rank: Annotated[str, Field(pattern=r"^(A|K|Q|J|10|[4-9]|W)$")] | None = None


Melds = Annotated[list[MeldIn], Field(max_length=20)]


class CutIn(Strict):
    type: Literal["cut"]
    n: Annotated[int, Field(strict=True, ge=1, le=400), Integral]


class DrawIn(Strict):
    type: Literal["draw"]


class TakePileIn(Strict):
    type: Literal["take_pile"]
    melds: Annotated[list[MeldIn], Field(min_length=1, max_length=20)]


class MeldCommandIn(Strict):
    type: Literal["meld"]
    melds: Melds = []
    discard: CardName | None = None


class DiscardIn(Strict):
    type: Literal["discard"]
    card: CardName


class AskPartnerIn(Strict):
    type: Literal["ask_partner"]
    partner: Seat | None = None


class AnswerIn(Strict):
    type: Literal["answer"]
    yes: bool


class DeclinePileIn(Strict):
    type: Literal["decline_pile"]


class PickUpPonytailIn(Strict):
    type: Literal["pick_up_ponytail"]


class TimeOutIn(Strict):
    """Sent only by the turn clock (the bots process): a person gets 403
    ``timeout_not_allowed`` (docs/tables.md, "Turn clock")."""

    type: Literal["time_out"]
    step: Annotated[int, Field(strict=True, ge=1, le=10**9), Integral]


CommandBody = Annotated[
    CutIn
    | DrawIn
    | TakePileIn
    | MeldCommandIn
    | DiscardIn
    | AskPartnerIn
    | AnswerIn
    | DeclinePileIn
    | PickUpPonytailIn
    | TimeOutIn,
    Field(discriminator="type"),
]


def command_body(command: c.Command) -> dict[str, Any]:
    """A domain command as the JSON ``command`` of ``POST /deals/{id}/commands``: the inverse
    of the route's parsing (``app.routes.deals.to_command``), for clients, the demo, the
    benchmark and the tests."""
    body: dict[str, Any] = {"type": c.COMMAND_NAMES[type(command)]}
    if isinstance(command, c.Cut):
        body["n"] = command.n
    elif isinstance(command, c.TakePile | c.Meld):
        body["melds"] = [{"cards": list(s.cards), "rank": s.rank} for s in command.melds]
        if isinstance(command, c.Meld) and command.discard is not None:
            body["discard"] = command.discard
    elif isinstance(command, c.Discard):
        body["card"] = command.card
    elif isinstance(command, c.AskPartner):
        body["partner"] = command.partner
    elif isinstance(command, c.Answer):
        body["yes"] = command.yes
    elif isinstance(command, c.TimeOut):
        body["step"] = command.step
    return body


class ExpectIn(Strict):
    """What the sender believes is current (R-CMD-1)."""

    game: UUID
    deal: Annotated[int, Field(strict=True, ge=1, le=10_000), Integral]
    step: Annotated[int, Field(strict=True, ge=1, le=10**9), Integral]
    turn: Seat | None
    phase: Literal["cut", "draw", "play", "answer", "over"]


class CommandIn(Strict):
    seq: Annotated[
        int,
        Field(
            strict=True, ge=1, le=2**53, description="the sender's sequence number at this table"
        ),
        Integral,
    ]
    expect: ExpectIn
    command: CommandBody


#: A refusal's parameter: a number, a word or card code, or a list of them (domain.refusals).
ParamValue = int | str | list[int | str] | None

KEY_DESCRIPTION = (
    "what the refusal says this time, as a stable key (e.g. init.short); the message is its "
    "English template filled with params. Absent for a refusal worded in English only"
)
PARAMS_DESCRIPTION = (
    "the key's parameters (e.g. points and minimum): numbers, words, card codes of your own "
    "command or of the public table, seat numbers, ranks; present with key"
)


class ErrorDetail(BaseModel):
    code: str
    message: str = Field(description="what was wrong, in English")
    key: str | None = Field(None, description=KEY_DESCRIPTION)
    params: dict[str, ParamValue] | None = Field(None, description=PARAMS_DESCRIPTION)


class ErrorOut(BaseModel):
    error: ErrorDetail


class CommandOut(BaseModel):
    step: int
    events: list[DealEventView] = Field(description="what the command recorded, as you see it")
    replayed: bool = False


class Created(BaseModel):
    id: UUID


class DealRef(BaseModel):
    deal: UUID


class PracticeIn(TableIn):
    """``POST /tables/practice``: a table of this entry with its sender in seat 0 and bots of
    ``bot``'s level in the other seats, started at once."""

    bot: BotLevel = "basic"


class PracticeOut(BaseModel):
    table: UUID
    deal: UUID
