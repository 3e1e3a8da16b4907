"""Dealing: the cut, the deal one card at a time, the bonus cards, the turned-up card."""

from __future__ import annotations

from domain import deal_events as ev
from domain.cards import CARDS
from domain.commands import Cut
from domain.constants import CUT
from domain.errors import RuleViolation
from domain.rules.decision import Decision


def cut(d: Decision, seat: int, cmd: Cut) -> None:
    st, v = d.state, d.variant
    if st.phase != CUT:
        raise RuleViolation("R-TURN-1", "cut.not_now")
    if seat != st.cutter:
        raise RuleViolation("R-TURN-1", "cut.other_seat", cutter=st.cutter, seat=seat)
    size = len(st.deck)
    if not isinstance(cmd.n, int) or isinstance(cmd.n, bool) or not 1 <= cmd.n <= size - 1:
        raise RuleViolation("R-DEAL-4", "cut.range", most=size - 1)
    d.emit(ev.DeckCut(seat=seat, n=cmd.n))
    # R-DEAL-5: one card at a time, clockwise, starting on the dealer's left.
    first = st.left_of(st.dealer)
    start = st.order.index(first)
    seats = st.order[start:] + st.order[:start]
    d.emit(ev.CardsDealt(cards=deal_round(st.stock, seats, v.hand_size_for(st.players))))
    if v.ponytail_size:  # R-PT-DEAL-1: then a face-down ponytail each, the same way
        d.emit(ev.PonytailsDealt(cards=deal_round(st.stock, seats, v.ponytail_size)))
    # R-DEAL-6: bonus cards laid and replaced, player by player from the dealer's left.
    for s in seats:
        while st.stock:
            bonus = [c for c in st.hands[s] if v.is_bonus_card(c)]
            if not bonus:
                break
            for card in bonus:
                d.emit(ev.RedThreeLaid(seat=s, card=card))
                if st.stock:
                    d.emit(ev.CardsDrawn(seat=s, cards=[st.stock[-1]], replacement=True))
    if v.turn_up:
        turn_up(d)
    d.emit(ev.PlayStarted(seat=first))


def deal_round(stock: list[str], seats: list[int], size: int) -> list[ev.Dealt]:
    """(seat, card) pairs dealt one card at a time from the top (the stock's end)."""
    dealt: list[ev.Dealt] = []
    k = len(stock)
    for _ in range(size):
        for s in seats:
            k -= 1
            dealt.append((s, stock[k]))
    return dealt


def turn_up(d: Decision) -> None:
    """R-DEAL-7 (R-PT-DEAL-2): turn cards until a natural (or a first black three) is on top."""
    st, v = d.state, d.variant
    first = True
    while st.stock:
        card = st.stock[-1]
        if v.freezes_turn_up(card):
            d.emit(ev.CardTurnedUp(card=card, crosswise=True))
        elif CARDS[card].is_black_three and not first and not v.black_three_stops_turn_up:
            d.emit(ev.CardTurnedUp(card=card, crosswise=False))
        else:
            d.emit(ev.CardTurnedUp(card=card, crosswise=False))
            return
        first = False
