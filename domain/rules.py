"""The rules engine: ``decide(state, seat, command)`` returns the events a legal command
records, or raises ``RuleViolation`` with a RULES.md id and records nothing (R-CMD-3).

Deciding works on a clone of the state and folds each event into it as it is emitted,
so multi-step commands (melds plus a discard, a pile taken with its melds) are checked
against the state they really produce and are applied atomically.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from domain import deal_events as ev
from domain.cards import CARDS, info
from domain.commands import (
    ACTIONS,
    ALLOWED,
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
    PickUpPonytail,
    TakePile,
)
from domain.constants import ANSWER, BLACK_THREE_RANK, CUT, DRAW, OVER, WILD_RANK
from domain.errors import RuleViolation
from domain.state import DealState
from domain.variants import get_variant
from domain.variants.base import MeldPlan

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


def decide(state: DealState, seat: int, command: Command) -> list[Event]:
    """The events ``command`` from room seat ``seat`` records, or a RuleViolation."""
    d = Decision(state)
    match command:
        case Draw():
            _draw(d, seat, command)
        case Meld():
            _meld(d, seat, command)
        case Discard():
            _discard(d, seat, command)
        case TakePile():
            _take_pile(d, seat, command)
        case Cut():
            _cut(d, seat, command)
        case AskPartner():
            _ask_partner(d, seat, command)
        case Answer():
            _answer(d, seat, command)
        case DeclinePile():
            _decline_pile(d, seat, command)
        case PickUpPonytail():
            _pick_up_ponytail(d, seat, command)
        case _:
            raise RuleViolation("R-CMD-3", f"unknown command {type(command).__name__}")
    return d.events


# --- guards -------------------------------------------------------------------------------


def _check_turn(st: DealState, seat: int, command: type[Command]) -> None:
    """R-TURN-1: right seat, right phase (``commands.ALLOWED``)."""
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
    if command not in ALLOWED[st.phase]:
        step = "draw" if st.phase == DRAW else "meld or discard"
        raise RuleViolation("R-TURN-1", f"cannot {ACTIONS[command]} now: it is time to {step}")


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
    d.emit(ev.DeckCut(seat=seat, n=cmd.n))
    # R-DEAL-5: one card at a time, clockwise, starting on the dealer's left.
    first = st.left_of(st.dealer)
    start = st.order.index(first)
    seats = st.order[start:] + st.order[:start]
    d.emit(ev.CardsDealt(cards=_deal_round(st.stock, seats, v.hand_size_for(st.players))))
    if v.ponytail_size:  # R-PT-DEAL-1: then a face-down ponytail each, the same way
        d.emit(ev.PonytailsDealt(cards=_deal_round(st.stock, seats, v.ponytail_size)))
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
        _turn_up(d)
    d.emit(ev.PlayStarted(seat=first))


def _deal_round(stock: list[str], seats: list[int], size: int) -> list[ev.Dealt]:
    """(seat, card) pairs dealt one card at a time from the top (the stock's end)."""
    dealt: list[ev.Dealt] = []
    k = len(stock)
    for _ in range(size):
        for s in seats:
            k -= 1
            dealt.append((s, stock[k]))
    return dealt


def _turn_up(d: Decision) -> None:
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


# --- drawing ------------------------------------------------------------------------------


def _draw_from_stock(d: Decision, seat: int, count: int, *, replacement: bool) -> list[str]:
    st = d.state
    cards = st.stock[len(st.stock) - count :][::-1]
    d.emit(ev.CardsDrawn(seat=seat, cards=cards, replacement=replacement))
    if not st.stock and cards:
        d.last_stock_card = cards[-1]
    return cards


def _lay_bonus_cards(d: Decision, seat: int, cards: list[str]) -> bool:
    """R-DRAW-2/3 (R-MA-THREE-1): lay the bonus cards among ``cards`` (now in the hand)
    and replace each from the stock; True when the deal ended."""
    v = d.variant
    queue = list(cards)
    while queue:
        card = queue.pop(0)
        if not v.is_bonus_card(card):
            continue
        if card == d.last_stock_card and v.last_card_bonus_stays_in_hand():
            _end_deal(d, "three_last_card")  # R-MA-THREE-1: it stays in the hand
            return True
        d.emit(ev.RedThreeLaid(seat=seat, card=card))
        if card == d.last_stock_card:
            _end_deal(d, "red_three_last_card")  # R-DRAW-3
            return True
        if d.state.stock:
            queue += _draw_from_stock(d, seat, 1, replacement=True)
    return False


def _draw(d: Decision, seat: int, cmd: Draw) -> None:
    st, v = d.state, d.variant
    _check_turn(st, seat, Draw)
    if not st.stock:
        raise RuleViolation("R-END-1", "the stock is empty: take the pile or decline it")
    count = min(v.draw_count_for(st.players), len(st.stock))  # R-DRAW-1
    drawn = _draw_from_stock(d, seat, count, replacement=False)
    _lay_bonus_cards(d, seat, drawn)


def _pick_up_ponytail(d: Decision, seat: int, cmd: PickUpPonytail) -> None:
    """R-PT-PONY-1: after his side's first canasta, a player picks up his own ponytail."""
    st = d.state
    _check_turn(st, seat, PickUpPonytail)
    if not d.variant.ponytail_size:
        raise RuleViolation("R-CMD-3", f"{st.variant} has no ponytails")
    if st.ponytail_up[seat]:
        raise RuleViolation("R-PT-PONY-1", "you have already picked up your ponytail")
    if not st.completed(st.side_of[seat]):
        raise RuleViolation(
            "R-PT-PONY-1", "your side must complete its first canasta before the ponytails"
        )
    cards = list(st.ponytails[seat])
    d.emit(ev.PonytailPickedUp(seat=seat, cards=cards))
    if _lay_bonus_cards(d, seat, cards):
        return
    if st.phase == DRAW and not st.stock and d.variant.stock_end == "after_turn":
        _end_deal(d, "stock_exhausted")  # R-PT-END-1: he would have to draw from nothing


# --- melding ------------------------------------------------------------------------------


def _lay_meld(d: Decision, seat: int, spec: MeldSpec, plan: MeldPlan) -> None:
    """Lay one meld or addition of a command, checked against the running state."""
    st, v = d.state, d.variant
    side = st.side_of[seat]
    cards = list(spec.cards)
    if not cards:
        raise RuleViolation(v.meld_rule, "an empty meld")
    infos = [CARDS[c] for c in cards]
    if any(c.is_red_three for c in infos):
        raise RuleViolation("R-MELD-4", "a red three is never melded")
    if any(c.is_black_three for c in infos):
        # R-OUT-4 (R-PT-MELD-2): black threes alone, only when going out.
        black = len(cards)
        most = v.black_three_meld_max
        if not all(c.is_black_three for c in infos) or not 3 <= black <= most:
            allowed = "three or four" if most == 4 else "three or more"
            raise RuleViolation(v.three_meld_rule, f"black threes meld only as {allowed} alone")
        plan.black_three_meld = True
        plan.cards += cards
        plan.new_melds.append((BLACK_THREE_RANK, cards))
        d.emit(ev.MeldLaid(seat=seat, side=side, rank=BLACK_THREE_RANK, cards=cards))
        return
    ranks = {c.rank for c in infos if c.is_natural}
    if len(ranks) > 1:
        raise RuleViolation("R-MELD-1", f"a meld is of one rank, not {' and '.join(sorted(ranks))}")
    if ranks:
        rank = ranks.pop()
        if spec.rank is not None and spec.rank != rank:
            raise RuleViolation("R-MELD-1", f"cards of {rank} cannot join a meld of {spec.rank}")
    elif spec.rank is not None and spec.rank != WILD_RANK:
        rank = spec.rank
        if st.open_meld(side, rank) is None:
            if any(m.rank == rank for m in st.melds[side]):  # complete: takes no more
                raise RuleViolation(v.meld_rule, f"your meld of {rank}s is complete")
            raise RuleViolation(
                "R-MELD-4", f"wild cards alone can only join an existing meld; no meld of {rank}"
            )
    elif v.wild_melds:
        rank = WILD_RANK  # a wild-card meld (R-MA-MELD-4, R-PT-MELD-1)
    else:
        raise RuleViolation("R-MELD-4", "wild cards never form a meld on their own")
    v.may_meld_rank(st, rank)
    existing = st.open_meld(side, rank)
    if rank != WILD_RANK and any(c.is_wild for c in infos):
        plan.wilds_outside_wild_meld = True
    if existing is None:
        v.check_meld(st, side, rank, [], cards, plan)
        plan.new_melds.append((rank, cards))
        d.emit(ev.MeldLaid(seat=seat, side=side, rank=rank, cards=cards))
    else:
        index, meld = existing
        v.check_meld(st, side, rank, meld.cards, cards, plan)
        d.emit(ev.MeldExtended(seat=seat, side=side, rank=rank, index=index, cards=cards))
    plan.cards += cards


def _check_black_threes(d: Decision, seat: int, plan: MeldPlan, discard: str | None) -> None:
    """R-OUT-4: a black-three meld only in the command that empties the hand."""
    left = len(d.state.hands[seat]) - (1 if discard is not None else 0)
    if plan.black_three_meld and left > 0:
        raise RuleViolation("R-OUT-4", "black threes may be melded only when going out")


def _finish_melding(d: Decision, seat: int, plan: MeldPlan, discard: str | None) -> None:
    """After the melds of a command: the optional discard and the going-out rules."""
    st, v = d.state, d.variant
    left = len(st.hands[seat])
    going_out = left == 0 or (discard is not None and left == 1)
    if left == 0 and v.must_discard_to_go_out():
        raise RuleViolation("R-MA-OUT-1", "keep a card: you go out with a discard")
    refusal = v.going_out_refusal(st, seat)
    if going_out:
        if refusal is not None:
            raise refusal
    elif discard is None and left == 1 and refusal is not None:
        raise refusal  # his only move would be to discard his last card (R-OUT-1)
    if discard is not None:
        _discard_card(d, seat, discard, going_out)
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
    _check_turn(st, seat, Meld)
    if not cmd.melds and cmd.discard is None:
        raise RuleViolation("R-MELD-STEP-1", "nothing to meld")
    named = [c for spec in cmd.melds for c in spec.cards]
    if cmd.discard is not None:
        named.append(cmd.discard)
    _take_from_hand(d, st.hands[seat], named)
    plan = MeldPlan(opening=not d.opened_before[st.side_of[seat]])
    for spec in cmd.melds:
        _lay_meld(d, seat, spec, plan)
    _check_black_threes(d, seat, plan, cmd.discard)
    side = st.side_of[seat]
    d.variant.check_command_melds(st, side, plan)
    if cmd.melds and not d.opened_before[side]:
        d.variant.check_initial(st, side, plan)
    _finish_melding(d, seat, plan, cmd.discard)


# --- the discard pile ---------------------------------------------------------------------


def _take_pile(d: Decision, seat: int, cmd: TakePile) -> None:
    st, v = d.state, d.variant
    _check_turn(st, seat, TakePile)
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
    if any(
        not (CARDS[c].is_wild or (CARDS[c].is_natural and CARDS[c].rank == rank)) for c in first
    ):
        raise RuleViolation("R-MELD-1", f"the top card's meld holds only {rank}s and wild cards")
    v.may_meld_rank(st, rank)
    existing = st.open_meld(side, rank)
    v.check_pile_take(st, side, top, first, existing[1] if existing else None)
    pile_cards = list(st.pile)
    d.emit(ev.PileTaken(seat=seat, top=top, size=len(pile_cards), cards=pile_cards))
    plan = MeldPlan(opening=not d.opened_before[side], pile_top=top)
    for spec in _resolve(cmd.melds, top):
        _lay_meld(d, seat, spec, plan)
    _check_black_threes(d, seat, plan, None)
    v.check_command_melds(st, side, plan)
    if not d.opened_before[side]:
        v.check_initial(st, side, plan)  # R-INIT-2: top + hand cards only
    for card in pile_cards:  # R-DRAW-2: red threes in the pile are laid, not replaced
        if v.is_bonus_card(card):
            d.emit(ev.RedThreeLaid(seat=seat, card=card))
    _finish_melding(d, seat, plan, None)


def _discard_card(d: Decision, seat: int, card: str, going_out: bool) -> None:
    st, v = d.state, d.variant
    v.check_discard(st, seat, card, going_out)
    d.emit(ev.CardDiscarded(seat=seat, card=card))
    if st.hands[seat] and not st.stock and v.stock_end == "after_turn":
        _end_deal(d, "stock_exhausted")  # R-MA-END-1, R-PT-END-1


def _discard(d: Decision, seat: int, cmd: Discard) -> None:
    st, v = d.state, d.variant
    _check_turn(st, seat, Discard)
    _take_from_hand(d, st.hands[seat], [cmd.card])
    going_out = len(st.hands[seat]) == 1
    if going_out:
        refusal = v.going_out_refusal(st, seat)
        if refusal is not None:
            raise refusal
    _discard_card(d, seat, cmd.card, going_out)
    if not st.hands[seat]:
        _go_out(d, seat)


# --- partners, going out, the end -----------------------------------------------------------


def _ask_partner(d: Decision, seat: int, cmd: AskPartner) -> None:
    st = d.state
    _check_turn(st, seat, AskPartner)
    refusal = d.variant.ask_refusal(st, seat)
    if refusal is not None:
        raise refusal
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
    d.emit(ev.PartnerAsked(seat=seat, partner=partner))


def _answer(d: Decision, seat: int, cmd: Answer) -> None:
    st = d.state
    if st.phase != ANSWER:
        _check_turn(st, seat, Answer)
        raise RuleViolation("R-TURN-1", "nobody asked you a question")
    if seat != st.asked_partner:
        if seat == st.turn:
            raise RuleViolation("R-OUT-3", "waiting for your partner's answer")
        raise RuleViolation("R-TURN-1", f"only seat {st.asked_partner} was asked")
    if not isinstance(cmd.yes, bool):
        raise RuleViolation("R-CMD-3", "the answer is yes (true) or no (false)")
    assert st.turn is not None  # a question is asked during a turn
    d.emit(ev.PartnerAnswered(seat=seat, asker=st.turn, yes=cmd.yes))


def _go_out(d: Decision, seat: int) -> None:
    """R-OUT-2/5: going out ends the deal; concealed if nothing laid in an earlier turn and
    seven or more of one rank melded by the player himself this turn."""
    st = d.state
    concealed = not st.melded_before[seat] and any(
        n >= 7 for r, n in st.turn_melded.items() if r != BLACK_THREE_RANK
    )
    d.emit(ev.WentOut(seat=seat, concealed=concealed))
    _end_deal(d, "went_out")


def _forced_take(d: Decision, seat: int) -> bool:
    """R-END-1: forced when the entry says so and taking it by adding the top to the meld
    is legal (a take that would break another rule leaves him free to decline)."""
    st = d.state
    if not d.variant.forced_to_take(st, st.side_of[seat]):
        return False
    try:
        decide(st, seat, TakePile(melds=(MeldSpec(cards=(TOP,)),)))
    except RuleViolation:
        return False
    return True


def _decline_pile(d: Decision, seat: int, cmd: DeclinePile) -> None:
    st = d.state
    _check_turn(st, seat, DeclinePile)
    if st.stock:
        raise RuleViolation("R-END-1", "the pile may be declined only when the stock is empty")
    if _forced_take(d, seat):
        raise RuleViolation(
            "R-END-1", "the top card matches your side's meld: you must take the pile"
        )
    d.emit(ev.PileDeclined(seat=seat))
    _end_deal(d, "pile_declined")


def _end_deal(d: Decision, reason: str) -> None:
    # The deal's reason is folded first, so the scoring hook sees how it ended.
    d.state.end_reason = reason
    d.emit(ev.DealScored(reason=reason, scores=d.variant.score_deal(d.state)))


def abandon(state: DealState) -> list[Event]:
    """R-GAME-2: the host stopped the game; the unfinished deal is not scored."""
    if state.phase == OVER:
        return []
    return [ev.DealAbandoned(reason="stopped")]
