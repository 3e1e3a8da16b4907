"""The knobs of ``basic``'s rules of thumb (docs/bots.md), as one frozen value.

``BASIC`` holds the values the ``basic`` level plays with (hand-set; it is the reference
level and the turn clock's player, so it never changes here); a ``Policy`` with other
values is "``basic`` with parameters P": ``strong`` plays its own tuned set (``TUNED``, and
where an entry needs its own, ``BY_ENTRY``: ``tuned(entry)``), as its default choice and in
its rollouts. ``basic.decide(view, menu, rng, policy)`` reads
every knob from the policy it is given.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Policy:
    #: A wild card spent on taking the pile only for a pile at least this large.
    wild_take_pile: int = 5
    #: The hand size from which a bot spends wild cards and pairs freely to get out.
    endgame_hand: int = 4
    #: How much sooner than ``least_to_start`` a punished rank may be opened with (an
    #: opening is worth more than the risk: modern_american's initial minimum is high).
    opening_slack: int = 2
    #: A partner asked "may I go out?" says no when his own hand holds this many points or
    #: more (they would count against the side; he expects to meld them).
    holding_too_much: int = 150
    #: From this initial minimum on (modern_american from 5,000 points: 180 from the hand
    #: alone), a side that has not opened keeps its high cards and throws its low ones.
    high_minimum: int = 150
    #: Going out waits for a punished meld to be completed while the stock holds this many.
    wait_stock: int = 8
    #: What an unseen card in another hand is assumed to cost its side at the end of a deal.
    unseen_card_cost: int = 8
    # --- the discard's risk (``bots.discard.discard_risk``) ---
    #: The next opponent's side has an open meld of the rank: the top alone may join it.
    meld_risk: float = 40
    #: The next opponent discarded that rank himself.
    own_discard_relief: float = 10
    #: An opponent took cards of that rank with the pile.
    taken_risk: float = 10
    #: Times the share of the rank's cards already in sight.
    seen_relief: float = 20
    #: The risk grows by this share per card in the pile.
    pile_weight: float = 0.1
    #: A pair (and more) is kept: this much per card of the rank beyond the first.
    pair_keep: float = 15
    #: A card that could still join the side's meld is kept by this much.
    own_meld_keep: float = 8
    #: High cards go first: this share of the card's value.
    value_weight: float = 0.1
    # --- taking the pile and laying melds ---
    #: A take of the pile with a natural pair from the hand only for a pile this large.
    pair_take_pile: int = 0
    #: New melds of three naturals are laid only with a hand this small or smaller (larger
    #: hands keep them, for the pile and for more cards of the rank).
    new_meld_hand: int = 99
    #: Ranks whose melds are kept natural: no wild card joins or starts one of them (ponytail
    #: pays 5,000 for a natural sevens canasta and 300 for a mixed one, R-PT-SCORE-1).
    clean_ranks: tuple[str, ...] = ()
    # --- the discard's risk, again ---
    #: The next opponent cannot hold a natural pair of the rank (fewer than two of its cards
    #: are out of sight): no take of the pile with a pair.
    no_pair_relief: float = 0
    #: Times the chance that the next opponent holds a natural pair of the rank (the rank's
    #: unseen cards spread evenly over every place out of sight).
    pair_odds: float = 0

    def but(self, **changes: Any) -> Policy:
        """This policy with some knobs changed."""
        return replace(self, **changes)


#: ``basic``'s own values: the reference level.
BASIC = Policy()
#: ``strong``'s policy (its default choice and its rollouts' player): ``basic`` that will
#: not discard a rank the next opponent's side has an open meld of while another natural can
#: go, and takes the pile with a natural pair only from a pile of three cards (the tuning
#: runs in docs/bots.md: against ``basic``, 246 of 400 classic games, seed 11).
TUNED = BASIC.but(meld_risk=200, pair_take_pile=3)
#: ``strong``'s policy where an entry needs its own (the tuning runs in docs/bots.md).
BY_ENTRY: dict[str, Policy] = {
    # Also the chance of a pair in the discard's risk: it pays in classic too, where the
    # pile is taken with a pair while it is not frozen.
    "classic": TUNED.but(no_pair_relief=50, pair_odds=300),
    # The pile is taken only with a natural pair from the hand (R-MA-PILE-1): discard what
    # the next opponent is least likely to hold a pair of.
    "modern_american": BASIC.but(no_pair_relief=50, pair_odds=300),
    # A sevens meld kept natural: 5,000 for its canasta instead of 300 (R-PT-SCORE-1).
    "ponytail": TUNED.but(clean_ranks=("7",)),
}


def tuned(entry: str) -> Policy:
    """``strong``'s policy in ``entry``: its own where it has one, ``TUNED`` otherwise."""
    return BY_ENTRY.get(entry, TUNED)
