"""What every command's deciding shares: the ``Decision`` (the events emitted so far, folded
into a private copy of the state), the turn guard, the check that named cards are held, and the
deal's end (its score)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from domain import deal_events as ev
from domain.cards import info
from domain.commands import ACTIONS, ALLOWED, Command
from domain.constants import ANSWER, CUT, DRAW, OVER
from domain.errors import RuleViolation
from domain.state import DealState
from domain.variants import get_variant

Event = ev.DealEvent


class Decision:
    """Events emitted so far by one command, folded into a private copy of the state."""

    def __init__(self, state: DealState) -> None:
        self.state = state.clone()
        self.variant = get_variant(state.variant)
        self.events: list[Event] = []
        self.last_stock_card: str | None = None  # the card whose draw emptied the stock
        self.opened_before = dict(state.opened)  # sides that had melded before this command

    def emit(self, event: Event) -> None:
        self.state.apply(event)
        self.events.append(event)


# --- guards -------------------------------------------------------------------------------


def check_turn(st: DealState, seat: int, command: type[Command]) -> None:
    """R-TURN-1: right seat, right phase (``commands.ALLOWED``)."""
    if st.phase == OVER:
        raise RuleViolation("R-TURN-1", "turn.deal_over")
    if seat not in st.order:
        raise RuleViolation("R-TURN-1", "turn.sits_out", seat=seat)
    if st.phase == ANSWER:
        if seat == st.turn:
            raise RuleViolation("R-OUT-3", "turn.await_partner")
        raise RuleViolation("R-TURN-1", "turn.await_answer", seat=st.asked_partner)
    if st.phase == CUT:
        raise RuleViolation("R-TURN-1", "turn.await_cut", seat=st.cutter)
    if seat != st.turn:
        raise RuleViolation("R-TURN-1", "turn.not_yours", turn=st.turn, seat=seat)
    if command not in ALLOWED[st.phase]:
        step = "turn.time_to_draw" if st.phase == DRAW else "turn.time_to_meld"
        raise RuleViolation("R-TURN-1", step, action=ACTIONS[command])


def take_from_hand(d: Decision, hand: Sequence[str], cards: Sequence[str]) -> None:
    """Every named card exists in this entry's decks and is held, each once (R-CARD-1,
    R-CMD-3)."""
    held = Counter(hand)
    for card in cards:
        if info(card).deck > d.variant.decks:
            raise RuleViolation("R-CARD-1", "card.no_such", code=card, decks=d.variant.decks)
        if held[card] <= 0:
            if card in hand:  # held once, named again in the same command
                raise RuleViolation("R-CMD-3", "hand.twice", card=card)
            raise RuleViolation("R-CMD-3", "hand.not_held", card=card)
        held[card] -= 1


def end_deal(d: Decision, reason: str) -> None:
    # The deal's reason is folded first, so the scoring hook sees how it ended.
    d.state.end_reason = reason
    d.emit(ev.DealScored(reason=reason, scores=d.variant.score_deal(d.state)))
