"""Melding: each meld or addition checked against the running state, the black threes, and
what follows the melds of a command (the discard, going out)."""

from __future__ import annotations

from collections.abc import Sequence

from domain import deal_events as ev
from domain.cards import CARDS
from domain.commands import TOP, Meld, MeldSpec
from domain.constants import BLACK_THREE_RANK, WILD_RANK
from domain.errors import RuleViolation
from domain.rules.decision import Decision, check_turn, take_from_hand
from domain.rules.going_out import discard_card, go_out
from domain.variants.base import MeldPlan


def lay_meld(d: Decision, seat: int, spec: MeldSpec, plan: MeldPlan) -> None:
    """Lay one meld or addition of a command, checked against the running state."""
    st, v = d.state, d.variant
    side = st.side_of[seat]
    cards = list(spec.cards)
    if not cards:
        raise RuleViolation(v.meld_rule, "meld.empty")
    infos = [CARDS[c] for c in cards]
    if any(c.is_red_three for c in infos):
        raise RuleViolation("R-MELD-4", "meld.red_three")
    most = v.black_three_meld_max
    alone = "meld.black_threes_3_4" if most == 4 else "meld.black_threes_3_up"
    if any(c.is_black_three for c in infos):
        # R-OUT-4 (R-PT-MELD-2): black threes alone, only when going out.
        if not all(c.is_black_three for c in infos) or not 3 <= len(cards) <= most:
            raise RuleViolation(v.three_meld_rule, alone)
        if plan.black_three_meld:  # one meld of them (R-MELD-5): six in extra_six are not 3 + 3
            raise RuleViolation(v.three_meld_rule, "meld.black_threes_once")
        plan.black_three_meld = True
        plan.cards += cards
        plan.new_melds.append((BLACK_THREE_RANK, cards))
        d.emit(ev.MeldLaid(seat=seat, side=side, rank=BLACK_THREE_RANK, cards=cards))
        return
    ranks = {c.rank for c in infos if c.is_natural}
    if len(ranks) > 1:
        raise RuleViolation("R-MELD-1", "meld.mixed_ranks", ranks=sorted(ranks))
    if ranks:
        rank = ranks.pop()
        if spec.rank is not None and spec.rank != rank:
            raise RuleViolation("R-MELD-1", "meld.wrong_rank", rank=rank, meld_rank=spec.rank)
    elif spec.rank is not None and spec.rank != WILD_RANK:
        rank = spec.rank
        if rank == BLACK_THREE_RANK and plan.black_three_meld:
            raise RuleViolation(v.three_meld_rule, alone)  # R-OUT-4: no wild card joins them
        if st.open_meld(side, rank) is None:
            if any(m.rank == rank for m in st.melds[side]):  # complete: takes no more
                raise RuleViolation(v.meld_rule, "meld.complete", rank=rank)
            raise RuleViolation("R-MELD-4", "meld.wilds_no_meld", rank=rank)
    elif v.wild_melds:
        rank = WILD_RANK  # a wild-card meld (R-MA-MELD-4, R-PT-MELD-1)
    else:
        raise RuleViolation("R-MELD-4", "meld.wilds_alone")
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


def check_black_threes(d: Decision, seat: int, plan: MeldPlan, discard: str | None) -> None:
    """R-OUT-4: a black-three meld only in the command that empties the hand."""
    left = len(d.state.hands[seat]) - (1 if discard is not None else 0)
    if plan.black_three_meld and left > 0:
        raise RuleViolation("R-OUT-4", "meld.black_threes_out")


def finish_melding(d: Decision, seat: int, plan: MeldPlan, discard: str | None) -> None:
    """After the melds of a command: the optional discard and the going-out rules."""
    st, v = d.state, d.variant
    left = len(st.hands[seat])
    going_out = left == 0 or (discard is not None and left == 1)
    if left == 0 and v.must_discard_to_go_out():
        raise RuleViolation("R-MA-OUT-1", "out.keep_discard")
    refusal = v.going_out_refusal(st, seat)
    if going_out:
        if refusal is not None:
            raise refusal
    elif discard is None and left == 1 and refusal is not None:
        raise refusal  # his only move would be to discard his last card (R-OUT-1)
    if discard is not None:
        discard_card(d, seat, discard, going_out)
    if not st.hands[seat]:
        go_out(d, seat)


def resolve(specs: Sequence[MeldSpec], top: str | None = None) -> list[MeldSpec]:
    resolved = []
    for spec in specs:
        cards = tuple(top if (c == TOP and top is not None) else c for c in spec.cards)
        resolved.append(MeldSpec(cards=cards, rank=spec.rank))
    return resolved


def meld(d: Decision, seat: int, cmd: Meld) -> None:
    st = d.state
    check_turn(st, seat, Meld)
    if not cmd.melds and cmd.discard is None:
        raise RuleViolation("R-MELD-STEP-1", "meld.nothing")
    named = [c for spec in cmd.melds for c in spec.cards]
    if cmd.discard is not None:
        named.append(cmd.discard)
    take_from_hand(d, st.hands[seat], named)
    plan = MeldPlan(opening=not d.opened_before[st.side_of[seat]])
    for spec in cmd.melds:
        lay_meld(d, seat, spec, plan)
    check_black_threes(d, seat, plan, cmd.discard)
    side = st.side_of[seat]
    d.variant.check_command_melds(st, side, plan)
    if cmd.melds and not d.opened_before[side]:
        d.variant.check_initial(st, side, plan)
    finish_melding(d, seat, plan, cmd.discard)
