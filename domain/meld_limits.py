"""An entry's meld limits as data: the one place the rules of a meld's make-up are checked.

``Variant.meld_limits`` gives the limits that hold for a side right now (some depend on the
state: whether the command makes the side's initial meld, an open wild-card meld); the engine
checks every meld and addition with ``MeldLimits.check``, and the move menu hands the same
limits to clients (``meld_limits``, docs/api.md), so that a page groups the selected cards
into melds the rules accept without copying the rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from domain.cards import CARDS
from domain.constants import WILD_RANK
from domain.errors import RuleViolation
from domain.refusals import MESSAGES


@dataclass(frozen=True)
class WildLimit:
    """A wild card may join a meld of one of ``ranks`` (new or existing) only when that meld,
    with the cards added, holds ``naturals`` natural cards or more; never when ``naturals`` is
    None. Refused as ``rule`` with ``key`` (``domain.refusals``) and the meld's rank."""

    rule: str
    ranks: tuple[str, ...]
    naturals: int | None
    key: str
    #: What the limit says, in English (the move menu's): its refusal without the rank.
    message: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "message", MESSAGES[self.key].removesuffix(" ({rank})"))


@dataclass(frozen=True)
class MeldLimits:
    """What a meld of one natural rank may hold (R-MELD-1..3 and the entries' own)."""

    min_cards: int  # a new meld
    max_cards: int | None  # complete at this size, takes no more (None: no cap)
    min_naturals: int
    max_wilds: int
    wilds_outnumbered: bool  # naturals must outnumber wild cards (R-MELD-3)
    wild_melds: bool  # melds of wild cards alone (rank W)
    size_rule: str  # too few or too many cards
    wilds_rule: str  # too few naturals or too many wild cards
    ratio_rule: str  # wild cards not outnumbered
    wild_meld_rule: str  # a wild-card meld of too few or too many cards
    wild_limits: tuple[WildLimit, ...] = ()  # in the order the rules check them

    def check(self, rank: str, existing: Sequence[str], added: Sequence[str]) -> None:
        """The meld ``existing + added`` of ``rank`` is within the limits, or RuleViolation."""
        cards = [*existing, *added]
        if rank == WILD_RANK:
            if not existing and len(cards) < self.min_cards:
                raise RuleViolation(
                    self.wild_meld_rule, "meld.wild_meld_short", cards=self.min_cards
                )
            if self.max_cards is not None and len(cards) > self.max_cards:
                raise RuleViolation(
                    self.wild_meld_rule, "meld.wild_meld_full", cards=self.max_cards
                )
            return
        naturals = sum(1 for c in cards if CARDS[c].is_natural)
        wilds = len(cards) - naturals
        if not existing and len(cards) < self.min_cards:
            raise RuleViolation(self.size_rule, "meld.short", rank=rank, cards=self.min_cards)
        if self.max_cards is not None and len(cards) > self.max_cards:
            raise RuleViolation(
                self.size_rule, "meld.too_big", most=self.max_cards, rank=rank, cards=len(cards)
            )
        if naturals < self.min_naturals:
            raise RuleViolation(
                self.wilds_rule, "meld.few_naturals", rank=rank, naturals=self.min_naturals
            )
        if wilds > self.max_wilds:
            raise RuleViolation(
                self.wilds_rule, "meld.many_wilds", most=self.max_wilds, rank=rank, wilds=wilds
            )
        if self.wilds_outnumbered and naturals <= wilds:
            raise RuleViolation(
                self.ratio_rule, "meld.wilds_outnumber", rank=rank, naturals=naturals, wilds=wilds
            )
        if any(CARDS[c].is_wild for c in added):
            for limit in self.wild_limits:
                if rank in limit.ranks and (limit.naturals is None or naturals < limit.naturals):
                    raise RuleViolation(limit.rule, limit.key, rank=rank)
