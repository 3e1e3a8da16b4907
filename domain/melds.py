"""A meld lying on the table, as the deal's state holds it.

Its JSON form (in snapshots and views) is the one the state has always stored:
``{"rank": "7", "cards": [...]}``, plus ``"closed": true`` once a capped meld is complete.
A meld is never changed in place: adding cards replaces it (``extended``), so copies of a
state may share melds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from domain.cards import CARDS
from domain.constants import BLACK_THREE_RANK, CANASTA_SIZE

#: A meld's JSON form: rank and cards, and ``closed`` when it is complete.
MeldJSON = dict[str, str | list[str] | bool]


@dataclass(frozen=True, slots=True)
class LaidMeld:
    rank: str
    cards: tuple[str, ...]
    closed: bool = False  # complete at the entry's cap: it takes no more cards

    @classmethod
    def of(cls, rank: str, cards: Sequence[str], cap: int | None) -> LaidMeld:
        """A meld of ``cards``, closed when it reaches the entry's ``cap``."""
        return cls(rank, tuple(cards), cap is not None and len(cards) >= cap)

    def extended(self, cards: Sequence[str], cap: int | None) -> LaidMeld:
        return LaidMeld.of(self.rank, (*self.cards, *cards), cap)

    @property
    def size(self) -> int:
        return len(self.cards)

    @property
    def is_canasta(self) -> bool:
        """Seven or more cards; a black-three meld is never a canasta."""
        return self.rank != BLACK_THREE_RANK and len(self.cards) >= CANASTA_SIZE

    @property
    def has_wild(self) -> bool:
        return any(CARDS[c].is_wild for c in self.cards)

    def to_json(self) -> MeldJSON:
        out: MeldJSON = {"rank": self.rank, "cards": list(self.cards)}
        if self.closed:
            out["closed"] = True
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> LaidMeld:
        rank, cards = data["rank"], data["cards"]
        assert isinstance(rank, str) and isinstance(cards, list | tuple)
        return cls(rank, tuple(str(c) for c in cards), bool(data.get("closed", False)))
