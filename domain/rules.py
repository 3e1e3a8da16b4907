"""The rules engine: ``decide(state, seat, command)`` returns the events a legal command
records, or raises ``RuleViolation`` with a RULES.md id and records nothing (R-CMD-3).

Deciding works on a clone of the state and folds each event into it as it is emitted,
so multi-step commands (melds plus a discard, a pile taken with its melds) are checked
against the state they really produce and are applied atomically.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from domain import scoring
from domain.cards import CARDS, info
from domain.commands import (
    TOP,
    Answer,
    AskPartner,
    Command,
    Cut,
    DeclinePile,
    Discard,
    Draw,
    Meld,
    MeldSpec,
    TakePile,
)
from domain.errors import RuleViolation
from domain.state import ANSWER, CUT, DRAW, OVER, PLAY, DealState
from domain.variants import get_variant
from domain.variants.base import Variant

Event = tuple[str, dict[str, Any]]


class Decision:
    """Events emitted so far by one command, folded into a private copy of the state."""

    def __init__(self, state: DealState) -> None:
        self.state = state.clone()
        self.variant = get_variant(state.variant)
        self.events: list[Event] = []
        self.last_stock_card: str | None = None  # the card whose draw emptied the stock

    def emit(self, kind: str, **data: Any) -> None:
        self.state.apply(kind, data)
        self.events.append((kind, data))


def decide(state: DealState, seat: int, command: Command) -> list[Event]:
    """The events ``command`` from room seat ``seat`` records, or a RuleViolation."""
    d = Decision(state)
    handler = _HANDLERS.get(type(command))
    if handler is None:
        raise RuleViolation("R-CMD-3", f"unknown command {type(command).__name__}")
    handler(d, seat, command)
    return d.events


# --- guards -------------------------------------------------------------------------------


def _check_turn(st: DealState, seat: int, phases: Sequence[str], action: str) -> None:
    """R-TURN-1: right seat, right phase."""
    if st.phase == OVER:
        raise RuleViolation("R-TURN-1", "the deal is over")
    if seat not in st.order:
        raise RuleViolation("R-TURN-1", f"seat {seat} does not play this deal (R-SEAT-4)")
    if st.phase == ANSWER:
        if seat == st.turn:
            raise RuleViolation("R-OUT-3", "waiting for your partner's answer")
        raise RuleViolation("R-TURN-1", f"waiting for seat {st.asked_partner}'s answer")
    if st.phase == CUT:
        raise RuleViolation("R-TURN-1", f"waiting for seat {st.cutter} to cut")
    if seat != st.turn:
        raise RuleViolation("R-TURN-1", f"it is seat {st.turn}'s turn, not seat {seat}'s")
    if st.phase not in phases:
        step = "draw" if st.phase == DRAW else "meld or discard"
        raise RuleViolation("R-TURN-1", f"cannot {action} now: it is time to {step}")


def _take_from_hand(d: Decision, hand: Sequence[str], cards: Sequence[str]) -> None:
    """Every named card exists in this entry's decks and is held, each once (R-CARD-1,
    R-CMD-3)."""
    held = Counter(hand)
    for card in cards:
        if info(card).deck > d.variant.decks:
            raise RuleViolation(
                "R-CARD-1", f"there is no {card}: this game has {d.variant.decks} decks"
            )
        if held[card] <= 0:
            raise RuleViolation("R-CMD-3", f"you do not hold {card}")
        held[card] -= 1


# --- dealing ------------------------------------------------------------------------------


def _cut(d: Decision, seat: int, cmd: Cut) -> None:
    st, v = d.state, d.variant
    if st.phase != CUT:
        raise RuleViolation("R-TURN-1", "the deck is not waiting to be cut")
    if seat != st.cutter:
        raise RuleViolation("R-TURN-1", f"seat {st.cutter} cuts, not seat {seat} (R-DEAL-4)")
    size = len(st.deck)
    if not isinstance(cmd.n, int) or isinstance(cmd.n, bool) or not 1 <= cmd.n <= size - 1:
        raise RuleViolation("R-DEAL-4", f"the cut must lift 1 to {size - 1} cards")
    d.emit("DeckCut", seat=seat, n=cmd.n)
    # R-DEAL-5: one card at a time, clockwise, starting on the dealer's left.
    first = st.left_of(st.dealer)
    start = st.order.index(first)
    seats = st.order[start:] + st.order[:start]
    hand_size = v.hand_size_for(st.players)
    stock = st.stock
    dealt: list[list[Any]] = []
    k = len(stock)
    for _ in range(hand_size):
        for s in seats:
            k -= 1
            dealt.append([s, stock[k]])
    d.emit("CardsDealt", cards=dealt)
    # R-DEAL-6: red threes laid and replaced, player by player from the dealer's left.
    for s in seats:
        while True:
            bonus = [c for c in st.hands[s] if v.is_bonus_card(c)]
            if not bonus:
                break
            for card in bonus:
                d.emit("RedThreeLaid", seat=s, card=card)
                if st.stock:
                    d.emit("CardsDrawn", seat=s, cards=[st.stock[-1]], replacement=True)
            if not st.stock:
                break
    if v.turn_up:
        _turn_up(d)
    d.emit("PlayStarted", seat=first)


def _turn_up(d: Decision) -> None:
    """R-DEAL-7: turn cards until a natural (or a first black three) is on top."""
    st, v = d.state, d.variant
    first = True
    while st.stock:
        card = st.stock[-1]
        if v.freezes_turn_up(card):
            d.emit("CardTurnedUp", card=card, crosswise=True)
        elif CARDS[card].is_black_three and not first:
            d.emit("CardTurnedUp", card=card, crosswise=False)
        else:
            d.emit("CardTurnedUp", card=card, crosswise=False)
            return
        first = False


# --- drawing ------------------------------------------------------------------------------


def _draw_from_stock(d: Decision, seat: int, count: int, *, replacement: bool) -> list[str]:
    st = d.state
    cards = st.stock[len(st.stock) - count :][::-1]
    d.emit("CardsDrawn", seat=seat, cards=cards, replacement=replacement)
    if not st.stock and cards:
        d.last_stock_card = cards[-1]
    return cards


def _lay_drawn_bonus_cards(d: Decision, seat: int, drawn: list[str]) -> bool:
    """R-DRAW-2/3: lay red threes drawn and replace them; True when the deal ended."""
    queue = list(drawn)
    while queue:
        card = queue.pop(0)
        if not d.variant.is_bonus_card(card):
            continue
        d.emit("RedThreeLaid", seat=seat, card=card)
        if card == d.last_stock_card:
            _end_deal(d, "red_three_last_card")
            return True
        if d.state.stock:
            queue += _draw_from_stock(d, seat, 1, replacement=True)
    return False


def _draw(d: Decision, seat: int, cmd: Draw) -> None:
    st, v = d.state, d.variant
    _check_turn(st, seat, (DRAW,), "draw")
    if not st.stock:
        raise RuleViolation("R-END-1", "the stock is empty: take the pile or decline it")
    count = min(v.draw_count_for(st.players), len(st.stock))  # R-DRAW-1
    drawn = _draw_from_stock(d, seat, count, replacement=False)
    _lay_drawn_bonus_cards(d, seat, drawn)


# --- melding ------------------------------------------------------------------------------


def _classify(cards: Sequence[str]) -> tuple[list[str], list[str], list[str], list[str]]:
    naturals, wilds, black, red = [], [], [], []
    for card in cards:
        c = CARDS[card]
        if c.is_natural:
            naturals.append(card)
        elif c.is_wild:
            wilds.append(card)
        elif c.is_black_three:
            black.append(card)
        else:
            red.append(card)
    return naturals, wilds, black, red


def check_meld(v: Variant, rank: str, cards: Sequence[str], *, new: bool) -> None:
    """R-MELD-1..3 for the meld ``cards`` would form (existing cards included)."""
    naturals = sum(1 for c in cards if CARDS[c].is_natural)
    wilds = len(cards) - naturals
    if new and len(cards) < 3:
        raise RuleViolation("R-MELD-1", f"a new meld of {rank} needs at least three cards")
    if naturals < 2:
        raise RuleViolation("R-MELD-2", f"a meld of {rank} needs at least two natural cards")
    if wilds > v.max_wilds:
        raise RuleViolation(
            "R-MELD-2", f"a meld holds at most {v.max_wilds} wild cards ({rank}: {wilds})"
        )
    if naturals <= wilds:
        raise RuleViolation(
            "R-MELD-3",
            f"a meld needs more natural cards than wild cards ({rank}: {naturals} vs {wilds})",
        )


class _MeldPlan:
    """What one meld command lays: checked card by card against the running state."""

    def __init__(self) -> None:
        self.cards: list[str] = []
        self.black_three_meld = False


def _lay_meld(d: Decision, seat: int, spec: MeldSpec, plan: _MeldPlan) -> None:
    st, v = d.state, d.variant
    side = st.side_of[seat]
    cards = list(spec.cards)
    if not cards:
        raise RuleViolation("R-MELD-1", "an empty meld")
    naturals, wilds, black, red = _classify(cards)
    if red:
        raise RuleViolation("R-MELD-4", "a red three is never melded")
    if black:
        # R-OUT-4: three or four black threes alone, only when going out.
        if naturals or wilds or not 3 <= len(black) <= 4:
            raise RuleViolation("R-OUT-4", "black threes meld only as three or four alone")
        plan.black_three_meld = True
        plan.cards += cards
        d.emit("MeldLaid", seat=seat, side=side, rank="3", cards=cards)
        return
    ranks = {CARDS[c].rank for c in naturals}
    if len(ranks) > 1:
        raise RuleViolation("R-MELD-1", f"a meld is of one rank, not {' and '.join(sorted(ranks))}")
    if ranks:
        rank = ranks.pop()
        if spec.rank is not None and spec.rank != rank:
            raise RuleViolation("R-MELD-1", f"cards of {rank} cannot join a meld of {spec.rank}")
    elif spec.rank is not None:
        rank = spec.rank
        if st.open_meld(side, rank) is None:
            raise RuleViolation(
                "R-MELD-4", f"wild cards alone can only join an existing meld; no meld of {rank}"
            )
    else:
        raise RuleViolation("R-MELD-4", "wild cards never form a meld on their own")
    existing = st.open_meld(side, rank)
    if existing is None:
        check_meld(v, rank, cards, new=True)
        d.emit("MeldLaid", seat=seat, side=side, rank=rank, cards=cards)
    else:
        index, meld = existing
        check_meld(v, rank, meld["cards"] + cards, new=False)
        d.emit("MeldExtended", seat=seat, side=side, rank=rank, index=index, cards=cards)
    plan.cards += cards


def _check_initial_minimum(d: Decision, side: str, cards: Sequence[str]) -> None:
    """R-INIT-1: the side's first meld of the deal reaches its minimum in one command."""
    st = d.state
    minimum = d.variant.initial_minimum(st.scores_before.get(side, 0))
    count = sum(CARDS[c].value for c in cards)
    if count < minimum:
        raise RuleViolation(
            "R-INIT-1", f"the initial meld counts {count}; this side needs at least {minimum}"
        )


def _may_go_out(d: Decision, seat: int) -> RuleViolation | None:
    """Why the player may not go out now, or None if he may (R-OUT-1, R-OUT-3)."""
    st = d.state
    if st.answer is False:
        return RuleViolation("R-OUT-3", "your partner answered no: you may not go out this turn")
    needed = d.variant.canastas_needed(st.players)
    if st.canastas(st.side_of[seat]) < needed:
        plural = "canasta" if needed == 1 else "canastas"
        return RuleViolation(
            "R-OUT-1", f"going out needs {needed} {plural}; keep at least one card"
        )
    return None


def _check_black_threes(d: Decision, seat: int, plan: _MeldPlan, discard: str | None) -> None:
    """R-OUT-4: a black-three meld only in the command that empties the hand."""
    left = len(d.state.hands[seat]) - (1 if discard is not None else 0)
    if plan.black_three_meld and left > 0:
        raise RuleViolation("R-OUT-4", "black threes may be melded only when going out")


def _finish_melding(d: Decision, seat: int, plan: _MeldPlan, discard: str | None) -> None:
    """After the melds of a command: the optional discard and the going-out rules."""
    st = d.state
    left = len(st.hands[seat])
    going_out = left == 0 or (discard is not None and left == 1)
    if going_out:
        refusal = _may_go_out(d, seat)
        if refusal is not None:
            raise refusal
    else:
        if discard is None and left == 1 and _may_go_out(d, seat) is not None:
            refusal = _may_go_out(d, seat)
            assert refusal is not None
            raise refusal
    if discard is not None:
        _discard_card(d, seat, discard)
    if not st.hands[seat]:
        _go_out(d, seat)


def _resolve(specs: Sequence[MeldSpec], top: str | None = None) -> list[MeldSpec]:
    resolved = []
    for spec in specs:
        cards = tuple(top if (c == TOP and top is not None) else c for c in spec.cards)
        resolved.append(MeldSpec(cards=cards, rank=spec.rank))
    return resolved


def _meld(d: Decision, seat: int, cmd: Meld) -> None:
    st = d.state
    _check_turn(st, seat, (PLAY,), "meld")
    if not cmd.melds and cmd.discard is None:
        raise RuleViolation("R-MELD-STEP-1", "nothing to meld")
    named = [c for spec in cmd.melds for c in spec.cards]
    if cmd.discard is not None:
        named.append(cmd.discard)
    _take_from_hand(d, st.hands[seat], named)
    side = st.side_of[seat]
    opening = not st.opened[side]
    plan = _MeldPlan()
    for spec in cmd.melds:
        _lay_meld(d, seat, spec, plan)
    _check_black_threes(d, seat, plan, cmd.discard)
    if opening and cmd.melds:
        _check_initial_minimum(d, side, plan.cards)
    _finish_melding(d, seat, plan, cmd.discard)


# --- the discard pile ---------------------------------------------------------------------


def _take_pile(d: Decision, seat: int, cmd: TakePile) -> None:
    st, v = d.state, d.variant
    _check_turn(st, seat, (DRAW,), "take the pile")
    if not st.pile:
        raise RuleViolation("R-PILE-1", "the discard pile is empty")
    top = st.pile[-1]
    top_card = CARDS[top]
    if top_card.is_wild or top_card.is_three:
        raise RuleViolation("R-PILE-1", f"the pile cannot be taken with {top} on top")
    if not cmd.melds or list(cmd.melds[0].cards).count(TOP) != 1:
        raise RuleViolation("R-PILE-5", "the first meld must hold the pile's top card (TOP)")
    if any(TOP in spec.cards for spec in cmd.melds[1:]):
        raise RuleViolation("R-PILE-5", "only the first meld may hold the top card")
    from_hand = [c for spec in cmd.melds for c in spec.cards if c != TOP]
    _take_from_hand(d, st.hands[seat], from_hand)
    side = st.side_of[seat]
    rank = top_card.rank
    first = [c for c in cmd.melds[0].cards if c != TOP]
    pair = sum(1 for c in first if CARDS[c].is_natural and CARDS[c].rank == rank)
    wild = sum(1 for c in first if CARDS[c].is_wild)
    existing = st.open_meld(side, rank)
    if any(
        not (CARDS[c].is_wild or (CARDS[c].is_natural and CARDS[c].rank == rank)) for c in first
    ):
        raise RuleViolation("R-MELD-1", f"the top card's meld holds only {rank}s and wild cards")
    if st.always_frozen:
        # §9: way 1, a natural pair from the hand; way 2, the top alone onto a meld of <= 6.
        if pair < 2:
            if first:
                raise RuleViolation(
                    "R-PILE-3", "the pile is frozen: meld the top with two naturals"
                )
            if not st.opened[side] or existing is None or len(existing[1]["cards"]) > 6:
                raise RuleViolation(
                    "R-FROZEN-1",
                    "the top card alone may join only your side's meld of six cards or fewer",
                )
    elif st.frozen_for(side):
        if pair < 2:  # R-PILE-3 (frozen, or R-PILE-2: the side has not melded)
            why = "the pile is frozen" if st.pile_frozen else "your side has not melded yet"
            raise RuleViolation(
                "R-PILE-3", f"{why}: meld the top card with two natural {rank}s from your hand"
            )
    elif pair < 2 and not (pair >= 1 and wild >= 1) and existing is None:
        raise RuleViolation(
            "R-PILE-4",
            f"meld the top with two natural {rank}s, or one and a wild, or add it to your meld",
        )
    opening = not st.opened[side]
    pile_cards = list(st.pile)
    d.emit("PileTaken", seat=seat, top=top, size=len(pile_cards), cards=pile_cards)
    plan = _MeldPlan()
    for spec in _resolve(cmd.melds, top):
        _lay_meld(d, seat, spec, plan)
    _check_black_threes(d, seat, plan, None)
    if opening:
        _check_initial_minimum(d, side, plan.cards)  # R-INIT-2: top + hand cards only
    for card in pile_cards:  # R-DRAW-2: red threes in the pile are laid, not replaced
        if v.is_bonus_card(card):
            d.emit("RedThreeLaid", seat=seat, card=card)
    _finish_melding(d, seat, plan, None)


def _discard_card(d: Decision, seat: int, card: str) -> None:
    if CARDS[card].is_red_three:
        raise RuleViolation("R-DISC-1", "a red three can never be discarded")
    d.emit("CardDiscarded", seat=seat, card=card)


def _discard(d: Decision, seat: int, cmd: Discard) -> None:
    st = d.state
    _check_turn(st, seat, (PLAY,), "discard")
    _take_from_hand(d, st.hands[seat], [cmd.card])
    if len(st.hands[seat]) == 1:
        refusal = _may_go_out(d, seat)
        if refusal is not None:
            raise refusal
    _discard_card(d, seat, cmd.card)
    if not st.hands[seat]:
        _go_out(d, seat)


# --- partners, going out, the end -----------------------------------------------------------


def _ask_partner(d: Decision, seat: int, cmd: AskPartner) -> None:
    st = d.state
    _check_turn(st, seat, (DRAW, PLAY), "ask your partner")
    if st.asked:
        raise RuleViolation("R-OUT-3", "you may ask only once per turn")
    if st.turn_melded:
        raise RuleViolation("R-OUT-3", "ask before your first meld of the turn")
    partners = st.partners(seat)
    if not partners:
        raise RuleViolation("R-OUT-3", "you have no partner playing this deal")
    if cmd.partner is None:
        if len(partners) > 1:
            raise RuleViolation("R-OUT-3", f"name the partner to ask: one of {partners}")
        partner = partners[0]
    elif cmd.partner in partners:
        partner = cmd.partner
    else:
        raise RuleViolation("R-OUT-3", f"seat {cmd.partner} is not your partner in this deal")
    d.emit("PartnerAsked", seat=seat, partner=partner)


def _answer(d: Decision, seat: int, cmd: Answer) -> None:
    st = d.state
    if st.phase != ANSWER:
        _check_turn(st, seat, (), "answer")
        raise RuleViolation("R-TURN-1", "nobody asked you a question")
    if seat != st.asked_partner:
        if seat == st.turn:
            raise RuleViolation("R-OUT-3", "waiting for your partner's answer")
        raise RuleViolation("R-TURN-1", f"only seat {st.asked_partner} was asked")
    if not isinstance(cmd.yes, bool):
        raise RuleViolation("R-CMD-3", "the answer is yes (true) or no (false)")
    d.emit("PartnerAnswered", seat=seat, asker=st.turn, yes=cmd.yes)


def _go_out(d: Decision, seat: int) -> None:
    """R-OUT-2/5: going out ends the deal; concealed if nothing laid in an earlier turn and
    seven or more of one rank melded by the player himself this turn."""
    st = d.state
    concealed = not st.melded_before[seat] and any(
        n >= 7 for r, n in st.turn_melded.items() if r != "3"
    )
    d.emit("WentOut", seat=seat, concealed=concealed)
    _end_deal(d, "went_out")


def _forced_take(d: Decision, seat: int) -> bool:
    """R-END-1: stock empty, pile not frozen for him, top matches a meld of his side."""
    st = d.state
    if st.always_frozen or not st.pile:  # §9: nobody is forced under always_frozen
        return False
    side = st.side_of[seat]
    top = CARDS[st.pile[-1]]
    if st.frozen_for(side) or top.is_wild or top.is_three:
        return False
    if st.open_meld(side, top.rank) is None:
        return False
    try:
        decide(st, seat, TakePile(melds=(MeldSpec(cards=(TOP,)),)))
    except RuleViolation:
        return False  # taking it would break another rule, so he may decline
    return True


def _decline_pile(d: Decision, seat: int, cmd: DeclinePile) -> None:
    st = d.state
    _check_turn(st, seat, (DRAW,), "decline the pile")
    if st.stock:
        raise RuleViolation("R-END-1", "the pile may be declined only when the stock is empty")
    if _forced_take(d, seat):
        raise RuleViolation(
            "R-END-1", "the top card matches your side's meld: you must take the pile"
        )
    d.emit("PileDeclined", seat=seat)
    _end_deal(d, "pile_declined")


def _end_deal(d: Decision, reason: str) -> None:
    d.emit("DealScored", reason=reason, scores=scoring.score_deal(d.state, d.variant))


def abandon(state: DealState) -> list[Event]:
    """R-GAME-2: the host stopped the game; the unfinished deal is not scored."""
    if state.phase == OVER:
        return []
    return [("DealAbandoned", {"reason": "stopped"})]


_HANDLERS: dict[type, Callable[[Decision, int, Any], None]] = {
    Cut: _cut,
    Draw: _draw,
    TakePile: _take_pile,
    Meld: _meld,
    Discard: _discard,
    AskPartner: _ask_partner,
    Answer: _answer,
    DeclinePile: _decline_pile,
}
