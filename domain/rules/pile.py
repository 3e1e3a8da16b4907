"""The discard pile: taking it (with the melds that take it) and declining it at the end."""

from __future__ import annotations

from domain import deal_events as ev
from domain.cards import CARDS
from domain.commands import TOP, DeclinePile, MeldSpec, TakePile
from domain.errors import RuleViolation
from domain.rules.decision import Decision, check_turn, end_deal, take_from_hand
from domain.rules.melding import check_black_threes, finish_melding, lay_meld, resolve
from domain.variants.base import MeldPlan


def take_pile(d: Decision, seat: int, cmd: TakePile) -> None:
    st, v = d.state, d.variant
    check_turn(st, seat, TakePile)
    if not st.pile:
        raise RuleViolation("R-PILE-1", "pile.empty")
    top = st.pile[-1]
    top_card = CARDS[top]
    if top_card.is_wild or top_card.is_three:
        raise RuleViolation("R-PILE-1", "pile.blocked", card=top)
    if not cmd.melds or list(cmd.melds[0].cards).count(TOP) != 1:
        raise RuleViolation("R-PILE-5", "pile.top_first")
    if any(TOP in spec.cards for spec in cmd.melds[1:]):
        raise RuleViolation("R-PILE-5", "pile.top_once")
    from_hand = [c for spec in cmd.melds for c in spec.cards if c != TOP]
    take_from_hand(d, st.hands[seat], from_hand)
    side = st.side_of[seat]
    rank = top_card.rank
    first = [c for c in cmd.melds[0].cards if c != TOP]
    if any(
        not (CARDS[c].is_wild or (CARDS[c].is_natural and CARDS[c].rank == rank)) for c in first
    ):
        raise RuleViolation("R-MELD-1", "pile.top_meld_rank", rank=rank)
    v.may_meld_rank(st, rank)
    existing = st.open_meld(side, rank)
    v.check_pile_take(st, side, top, first, existing[1] if existing else None)
    pile_cards = list(st.pile)
    d.emit(ev.PileTaken(seat=seat, top=top, size=len(pile_cards), cards=pile_cards))
    plan = MeldPlan(opening=not d.opened_before[side], pile_top=top)
    for spec in resolve(cmd.melds, top):
        lay_meld(d, seat, spec, plan)
    check_black_threes(d, seat, plan, None)
    v.check_command_melds(st, side, plan)
    if not d.opened_before[side]:
        v.check_initial(st, side, plan)  # R-INIT-2: top + hand cards only
    for card in pile_cards:  # R-DRAW-2: red threes in the pile are laid, not replaced
        if v.is_bonus_card(card):
            d.emit(ev.RedThreeLaid(seat=seat, card=card))
    finish_melding(d, seat, plan, None)


def forced_take(d: Decision, seat: int) -> bool:
    """R-END-1: forced when the entry says so and taking it by adding the top to the meld
    is legal (a take that would break another rule leaves him free to decline)."""
    st = d.state
    if not d.variant.forced_to_take(st, st.side_of[seat]):
        return False
    try:  # what ``decide`` does with this TakePile, on a Decision of its own
        take_pile(Decision(st), seat, TakePile(melds=(MeldSpec(cards=(TOP,)),)))
    except RuleViolation:
        return False
    return True


def decline_pile(d: Decision, seat: int, cmd: DeclinePile) -> None:
    st = d.state
    check_turn(st, seat, DeclinePile)
    if st.stock:
        raise RuleViolation("R-END-1", "pile.decline_stock")
    if forced_take(d, seat):
        raise RuleViolation("R-END-1", "pile.must_take")
    d.emit(ev.PileDeclined(seat=seat))
    end_deal(d, "pile_declined")
