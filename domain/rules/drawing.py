"""Drawing from the stock (bonus cards laid and replaced) and picking up a ponytail."""

from __future__ import annotations

from domain import deal_events as ev
from domain.commands import Draw, PickUpPonytail
from domain.constants import DRAW
from domain.errors import RuleViolation
from domain.rules.decision import Decision, check_turn, end_deal


def draw_from_stock(d: Decision, seat: int, count: int, *, replacement: bool) -> list[str]:
    st = d.state
    cards = st.stock[len(st.stock) - count :][::-1]
    d.emit(ev.CardsDrawn(seat=seat, cards=cards, replacement=replacement))
    if not st.stock and cards:
        d.last_stock_card = cards[-1]
    return cards


def lay_bonus_cards(d: Decision, seat: int, cards: list[str]) -> bool:
    """R-DRAW-2/3 (R-MA-THREE-1): lay the bonus cards among ``cards`` (now in the hand)
    and replace each from the stock; True when the deal ended."""
    v = d.variant
    queue = list(cards)
    while queue:
        card = queue.pop(0)
        if not v.is_bonus_card(card):
            continue
        if card == d.last_stock_card and v.last_card_bonus_stays_in_hand():
            end_deal(d, "three_last_card")  # R-MA-THREE-1: it stays in the hand
            return True
        d.emit(ev.RedThreeLaid(seat=seat, card=card))
        if card == d.last_stock_card:
            end_deal(d, "red_three_last_card")  # R-DRAW-3
            return True
        if d.state.stock:
            queue += draw_from_stock(d, seat, 1, replacement=True)
    return False


def draw(d: Decision, seat: int, cmd: Draw) -> None:
    st, v = d.state, d.variant
    check_turn(st, seat, Draw)
    if not st.stock:
        raise RuleViolation("R-END-1", "draw.stock_empty")
    count = min(v.draw_count_for(st.players), len(st.stock))  # R-DRAW-1
    drawn = draw_from_stock(d, seat, count, replacement=False)
    lay_bonus_cards(d, seat, drawn)


def pick_up_ponytail(d: Decision, seat: int, cmd: PickUpPonytail) -> None:
    """R-PT-PONY-1: after his side's first canasta, a player picks up his own ponytail."""
    st = d.state
    check_turn(st, seat, PickUpPonytail)
    if not d.variant.ponytail_size:
        raise RuleViolation("R-CMD-3", "ponytail.none", entry=st.variant)
    if st.ponytail_up[seat]:
        raise RuleViolation("R-PT-PONY-1", "ponytail.already")
    if not st.completed(st.side_of[seat]):
        raise RuleViolation("R-PT-PONY-1", "ponytail.too_early")
    cards = list(st.ponytails[seat])
    d.emit(ev.PonytailPickedUp(seat=seat, cards=cards))
    if lay_bonus_cards(d, seat, cards):
        return
    if st.phase == DRAW and not st.stock and d.variant.stock_end == "after_turn":
        end_deal(d, "stock_exhausted")  # R-PT-END-1: he would have to draw from nothing
