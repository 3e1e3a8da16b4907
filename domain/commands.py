"""Commands a seat can send to a deal (imperative names; docs/rules/common.md, "Commands").

Cards are named in full notation (``"QH/2"``). In ``TakePile`` the first meld holds the
pile's top card, written as ``TOP``.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.constants import ANSWER, CUT, DEALING, DRAW, OVER, PLAY, SHUFFLE

TOP = "TOP"


@dataclass(frozen=True)
class MeldSpec:
    """Cards for one meld: a new meld, or cards joining the side's meld of their rank.

    ``rank`` is needed only to add wild cards alone to an existing meld.
    """

    cards: tuple[str, ...]
    rank: str | None = None


@dataclass(frozen=True)
class Cut:
    n: int


@dataclass(frozen=True)
class Draw:
    pass


@dataclass(frozen=True)
class TakePile:
    melds: tuple[MeldSpec, ...]


@dataclass(frozen=True)
class Meld:
    melds: tuple[MeldSpec, ...]
    discard: str | None = None


@dataclass(frozen=True)
class Discard:
    card: str


@dataclass(frozen=True)
class AskPartner:
    partner: int | None = None


@dataclass(frozen=True)
class Answer:
    yes: bool


@dataclass(frozen=True)
class DeclinePile:
    pass


@dataclass(frozen=True)
class PickUpPonytail:
    pass


@dataclass(frozen=True)
class TimeOut:
    """The turn clock ran out for the seat to act (docs/tables.md, "Turn clock"): sent by the
    bots process for that seat, never by a person, decided on deal step ``step`` (the
    ``expect`` it carries). The rules record ``TurnTimedOut``; the ``basic`` bot then plays
    the rest of that turn with ordinary commands."""

    step: int


Command = (
    Cut
    | Draw
    | TakePile
    | Meld
    | Discard
    | AskPartner
    | Answer
    | DeclinePile
    | PickUpPonytail
    | TimeOut
)

COMMAND_NAMES: dict[type[Command], str] = {
    Cut: "cut",
    Draw: "draw",
    TakePile: "take_pile",
    Meld: "meld",
    Discard: "discard",
    AskPartner: "ask_partner",
    Answer: "answer",
    DeclinePile: "decline_pile",
    PickUpPonytail: "pick_up_ponytail",
    TimeOut: "time_out",
}

#: R-TURN-1: the commands each phase of a deal accepts (from the seat whose turn it is; in
#: ``cut`` from the cutter, in ``answer`` from the partner asked). The rules engine refuses
#: any other (``domain.rules``), and the random player proposes only these (``domain.legal``).
ALLOWED: dict[str, frozenset[type[Command]]] = {
    SHUFFLE: frozenset(),
    CUT: frozenset({Cut}),
    DEALING: frozenset(),
    DRAW: frozenset({Draw, TakePile, DeclinePile, AskPartner, PickUpPonytail}),
    PLAY: frozenset({Meld, Discard, AskPartner, PickUpPonytail}),
    ANSWER: frozenset({Answer}),
    OVER: frozenset(),
}

#: How a refusal names each command ("cannot <action> now").
ACTIONS: dict[type[Command], str] = {
    Cut: "cut",
    Draw: "draw",
    TakePile: "take the pile",
    Meld: "meld",
    Discard: "discard",
    AskPartner: "ask your partner",
    Answer: "answer",
    DeclinePile: "decline the pile",
    PickUpPonytail: "pick up your ponytail",
    TimeOut: "time a turn out",
}
