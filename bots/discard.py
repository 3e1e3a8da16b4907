"""``basic``'s choice of a discard (docs/bots.md): how likely the next opponent is to use a
card, weighed with what the card is worth to the hand, by the policy's knobs
(``bots.policy``)."""

from __future__ import annotations

from math import comb

from bots.policy import BASIC, Policy
from bots.view import SeatView
from domain.cards import CARDS
from domain.legal import _least_to_start as least_to_start
from domain.menu import Menu
from domain.variants import get_variant


def discard_risk(view: SeatView, menu: Menu, card: str, policy: Policy = BASIC) -> float:
    """How bad discarding ``card`` is: lower is better. Black threes are safest; wild cards
    are kept (a wild discard freezes the pile and throws away a meld's card); a natural's risk
    is what the next opponent may do with it, plus what it is worth to this hand."""
    info = CARDS[card]
    if info.is_black_three:
        return -100.0
    if info.is_wild:
        return 100.0 + info.value
    rank = info.rank
    held = len(menu.hand_by_rank.get(rank, ()))
    risk = 0.0
    nxt = view.next_seat()
    their_side = view.side_of(nxt)
    theirs = view.deal["melds"].get(their_side, [])
    if any(m["rank"] == rank and not m.get("closed") for m in theirs):
        risk += policy.meld_risk  # the top alone may join their meld
    if rank in view.memory.discarded.get(nxt, []):
        # He threw that rank away himself: he hardly holds a pair of it.
        risk -= policy.own_discard_relief
    if any(CARDS[c].rank == rank for s in view.opponents() for c in view.memory.taken.get(s, [])):
        risk += policy.taken_risk  # an opponent took cards of that rank with the pile
    seen, total = _seen(view, rank)
    risk -= policy.seen_relief * min(1.0, seen / total)
    if total - seen < 2:
        risk -= policy.no_pair_relief  # nobody else can hold a natural pair of it
    if policy.pair_odds:
        risk += policy.pair_odds * _pair_odds(view, nxt, total - seen)
    pile = int(view.deal["pile"]["size"])
    risk *= 1 + pile * policy.pile_weight
    # A pair is kept for the pile and melds.
    keep = policy.pair_keep * (held - 1) if held >= 2 else 0.0
    if 3 <= held < least_to_start(view.variant, rank):
        keep = -60  # modern_american: three sevens or aces left in a hand cost 1500
    if any(m.rank == rank for m in menu.melds):
        keep += policy.own_meld_keep  # it would rather join the side's meld
    # High cards go first (they cost the most left in hand) ...
    worth = info.value * policy.value_weight
    if menu.initial_minimum_left >= policy.high_minimum:
        worth = -info.value / 5  # ... unless they are what a high initial meld needs
    return risk + keep - worth


def _pair_odds(view: SeatView, seat: int, unseen: int) -> float:
    """The chance that ``seat`` holds two or more of ``unseen`` cards of a rank, were every
    card out of sight (the other hands, the stock, face-down ponytails) as likely as any other
    to be in his hand."""
    deal = view.deal
    counts = deal["hand_counts"]
    hidden = sum(int(n) for s, n in counts.items() if int(s) != view.seat)
    hidden += int(deal.get("stock_size") or 0)
    hidden += sum(int(n) for n in (deal.get("ponytail_counts") or {}).values())
    return pair_chance(hidden, int(counts[str(seat)]), unseen)


def pair_chance(hidden: int, hand: int, unseen: int) -> float:
    """The chance that a hand of ``hand`` cards drawn from ``hidden`` cards holds two or
    more of ``unseen`` given ones (hypergeometric)."""
    unseen = min(unseen, hidden)
    if unseen < 2 or hand < 2 or hidden < hand:
        return 0.0
    none = comb(hidden - unseen, hand)
    one = unseen * comb(hidden - unseen, hand - 1)
    return max(0.0, 1 - (none + one) / comb(hidden, hand))


def _seen(view: SeatView, rank: str) -> tuple[int, int]:
    """How many of the rank's cards are visible (in this hand, the melds, the pile), of how
    many: the fewer left unseen, the less anybody holds a pair of them."""
    decks = get_variant(view.variant).decks
    seen = sum(1 for c in view.hand if CARDS[c].rank == rank)
    seen += sum(
        1
        for melds in view.deal["melds"].values()
        for m in melds
        for c in m["cards"]
        if CARDS[c].rank == rank
    )
    seen += sum(1 for c in view.memory.pile if CARDS[c].rank == rank)
    return seen, 4 * decks
