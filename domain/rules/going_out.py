"""Discarding, asking a partner to go out and his answer, going out."""

from __future__ import annotations

from domain import deal_events as ev
from domain.commands import Answer, AskPartner, Discard
from domain.constants import ANSWER, BLACK_THREE_RANK
from domain.errors import RuleViolation
from domain.rules.decision import Decision, check_turn, end_deal, take_from_hand


def discard_card(d: Decision, seat: int, card: str, going_out: bool) -> None:
    st, v = d.state, d.variant
    v.check_discard(st, seat, card, going_out)
    d.emit(ev.CardDiscarded(seat=seat, card=card))
    if st.hands[seat] and not st.stock and v.stock_end == "after_turn":
        end_deal(d, "stock_exhausted")  # R-MA-END-1, R-PT-END-1


def discard(d: Decision, seat: int, cmd: Discard) -> None:
    st, v = d.state, d.variant
    check_turn(st, seat, Discard)
    take_from_hand(d, st.hands[seat], [cmd.card])
    going_out = len(st.hands[seat]) == 1
    if going_out:
        refusal = v.going_out_refusal(st, seat)
        if refusal is not None:
            raise refusal
    discard_card(d, seat, cmd.card, going_out)
    if not st.hands[seat]:
        go_out(d, seat)


def ask_partner(d: Decision, seat: int, cmd: AskPartner) -> None:
    st = d.state
    check_turn(st, seat, AskPartner)
    refusal = d.variant.ask_refusal(st, seat)
    if refusal is not None:
        raise refusal
    partners = st.partners(seat)
    if not partners:
        raise RuleViolation("R-OUT-3", "ask.no_partner")
    if cmd.partner is None:
        if len(partners) > 1:
            raise RuleViolation("R-OUT-3", "ask.which_partner", partners=partners)
        partner = partners[0]
    elif cmd.partner in partners:
        partner = cmd.partner
    else:
        raise RuleViolation("R-OUT-3", "ask.not_partner", seat=cmd.partner)
    d.emit(ev.PartnerAsked(seat=seat, partner=partner))


def answer(d: Decision, seat: int, cmd: Answer) -> None:
    st = d.state
    if st.phase != ANSWER:
        check_turn(st, seat, Answer)
        raise RuleViolation("R-TURN-1", "answer.nobody_asked")
    if seat != st.asked_partner:
        if seat == st.turn:
            raise RuleViolation("R-OUT-3", "turn.await_partner")
        raise RuleViolation("R-TURN-1", "answer.not_asked", seat=st.asked_partner)
    if not isinstance(cmd.yes, bool):
        raise RuleViolation("R-CMD-3", "answer.yes_or_no")
    assert st.turn is not None  # a question is asked during a turn
    d.emit(ev.PartnerAnswered(seat=seat, asker=st.turn, yes=cmd.yes))


def go_out(d: Decision, seat: int) -> None:
    """R-OUT-2/5: going out ends the deal; concealed if nothing laid in an earlier turn and
    seven or more of one rank melded by the player himself this turn."""
    st = d.state
    concealed = not st.melded_before[seat] and any(
        n >= 7 for r, n in st.turn_melded.items() if r != BLACK_THREE_RANK
    )
    d.emit(ev.WentOut(seat=seat, concealed=concealed))
    end_deal(d, "went_out")
