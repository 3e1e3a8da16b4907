"""Physical cards and their notation (R-CARD-1..3, docs/rules/common.md).

A card is represented everywhere by its full notation string, e.g. ``"QH/2"`` or
``"BJ/3"``: the deck number makes every physical card distinct (R-CARD-1). The
string is what events store, what the API shows and what tests write; facts about a
card are looked up in a table built once at import time.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.errors import RuleViolation

NATURAL_RANKS = ("4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("S", "H", "D", "C")
JOKERS = ("BJ", "LJ")
MAX_DECKS = 6


@dataclass(frozen=True, slots=True)
class CardInfo:
    """What the rules need to know about one physical card."""

    code: str  # full notation, e.g. "QH/2"
    face: str  # notation without the deck number, e.g. "QH"
    rank: str  # "A".."K", or "BJ"/"LJ" for jokers
    suit: str | None
    deck: int
    is_wild: bool  # R-CARD-2: all 2s and jokers
    is_natural: bool  # R-CARD-2: A, K..4
    is_red_three: bool
    is_black_three: bool
    value: int  # R-CARD-3 (a red three has none)

    @property
    def is_three(self) -> bool:
        return self.is_red_three or self.is_black_three


def _value(rank: str, suit: str | None) -> int:
    # R-CARD-3
    if rank in JOKERS:
        return 50
    if rank in ("A", "2"):
        return 20
    if rank in ("K", "Q", "J", "10", "9", "8"):
        return 10
    if rank in ("7", "6", "5", "4"):
        return 5
    if rank == "3":
        return 5 if suit in ("S", "C") else 0
    raise AssertionError(rank)


def _faces() -> list[tuple[str, str, str | None]]:
    faces: list[tuple[str, str, str | None]] = []
    for suit in SUITS:
        for rank in RANKS:
            faces.append((rank + suit, rank, suit))
    for joker in JOKERS:
        faces.append((joker, joker, None))
    return faces


FACES = _faces()  # the 54 faces of one deck, in a fixed order

CARDS: dict[str, CardInfo] = {}
for _deck in range(1, MAX_DECKS + 1):
    for _face, _rank, _suit in FACES:
        _code = f"{_face}/{_deck}"
        CARDS[_code] = CardInfo(
            code=_code,
            face=_face,
            rank=_rank,
            suit=_suit,
            deck=_deck,
            is_wild=_rank == "2" or _rank in JOKERS,
            is_natural=_rank in NATURAL_RANKS,
            is_red_three=_rank == "3" and _suit in ("H", "D"),
            is_black_three=_rank == "3" and _suit in ("S", "C"),
            value=_value(_rank, _suit),
        )
FACE_RANK = {face: rank for face, rank, _suit in FACES}


def info(code: str) -> CardInfo:
    """Facts about a card in full notation; unknown notation is refused (R-CARD-1)."""
    try:
        return CARDS[code]
    except KeyError:
        face = code.partition("/")[0]
        if face in FACE_RANK:  # a face without its deck ("KC", the scenarios' short form)
            raise RuleViolation(
                "R-CARD-1", "card.no_deck", code=code, example=f"{face}/1"
            ) from None
        raise RuleViolation("R-CARD-1", "card.unknown", code=code) from None


def full_deck(decks: int) -> list[str]:
    """All physical cards of ``decks`` decks, deck by deck, in a fixed order."""
    return [f"{face}/{deck}" for deck in range(1, decks + 1) for face, _r, _s in FACES]


def points(cards: list[str]) -> int:
    """Sum of the card values (R-CARD-3)."""
    return sum(CARDS[c].value for c in cards)
