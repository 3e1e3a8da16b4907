"""The ``strong`` bot's rollouts (docs/bots.md): ``basic`` plays every seat of a sampled
world, with the engine's own ``decide``, until the searching seat's next turn begins or the
deal ends; ``evaluate`` scores where it stopped.

A rollout step asks ``basic`` on a *light menu* where that is safe (``light_menu``): the
forms of the move menu a mid-deal turn of an opened side uses (the draw, the takes of the
pile, new melds, additions, discards) listed without asking the rules about each one, which
is most of the move menu's cost. The command ``basic`` picks from it is then decided; if the
rules refuse it, the step is asked again on the full menu, so a rollout only ever plays
commands the rules accepted, as ``basic`` would.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from bots import basic
from bots.policy import BASIC, Policy
from bots.view import PublicMemory, SeatView
from domain.commands import Command, Draw
from domain.constants import DRAW, OVER, PLAY
from domain.errors import RuleViolation
from domain.legal import seat_to_act
from domain.menu import Menu, _Builder, going_out, menu
from domain.rules import decide as rules_decide
from domain.state import DealState
from domain.variants import get_variant
from projections.visibility import Viewer, deal_view

#: A rollout stops after this many commands even if the seat's turn has not come back.
MAX_ROLLOUT_COMMANDS = 80
#: Cards left in hand count this share of their penalty in a deal not over yet.
HAND_WEIGHT = 0.3
#: What a card a side holds or has melded is worth while the deal goes on (cards make
#: melds: a pile taken is an asset, not only a penalty; melding keeps the cards' worth).
HAND_CARD = 15
#: The entry's penalties (modern_american: incomplete melds of sevens, aces or wild cards,
#: three sevens or aces in a hand) count this share in a deal not over yet: a rollout of one
#: round swings them by thousands, which drowns every other difference.
PENALTY_WEIGHT = 0.25
#: Credit for a side's open meld nearing a canasta, by its size.
NEAR_CANASTA = {4: 30, 5: 70, 6: 130}
#: What ending the game is worth, won or lost, on top of the final margin.
GAME_WON = 5000
#: The light menu is used only for hands at least this large (no going out in sight).
LIGHT_HAND = 6


def rollout(
    world: DealState,
    view: SeatView,
    move: Command,
    rng: random.Random,
    policy: Policy = BASIC,
) -> float:
    """Play ``move`` in a copy of ``world``, then ``basic`` with ``policy`` in every seat
    until the seat's next turn begins (or the deal ends); the result for the seat's side
    (``evaluate``)."""
    state = world.clone()
    me = view.seat
    if not play(state, me, move):
        return float("-inf")
    memory = view.memory
    for _ in range(MAX_ROLLOUT_COMMANDS):
        seat = seat_to_act(state)
        if seat is None or (seat == me and state.phase == DRAW):
            break
        seen = _cheap_view(state, seat, memory, view.target)
        light = light_menu(state, seat)
        if light is not None and play(state, seat, basic.decide(seen, light, rng, policy)):
            continue
        options = menu(state, seat)
        if not options.moves or not play(state, seat, basic.decide(seen, options, rng, policy)):
            break
    return evaluate(state, view.side, view.memory.scores_before, view.target)


def play(state: DealState, seat: int, command: Command) -> bool:
    """Decide ``command`` and fold its events into ``state``; False if refused."""
    try:
        events = rules_decide(state, seat, command)
    except RuleViolation:
        return False
    for event in events:
        state.apply(event)
    return True


def light_menu(state: DealState, seat: int) -> Menu | None:
    """The move menu's mid-deal forms, unchecked (above); None where the full menu is
    needed: a side that has not opened, a hand near going out, a question asked, a
    ponytail still face down, an empty stock."""
    v = get_variant(state.variant)
    hand = state.hands[seat]
    if (
        state.phase not in (DRAW, PLAY)
        or not state.opened[state.side_of[seat]]
        or len(hand) < LIGHT_HAND
        or state.asked
        or not state.stock
        or (v.ponytail_size and not state.ponytail_up[seat])
    ):
        return None
    full = menu(state, seat, moves=False)
    builder = _Unchecked(state, seat, v, sorted(hand))
    if state.phase == DRAW:
        builder.draw_step()
    else:
        builder.play_step()
    return Menu(
        seat=full.seat,
        moves=tuple(builder.out),
        hand_by_rank=full.hand_by_rank,
        melds=full.melds,
        initial_minimum_left=0,
        go_out=going_out(state, seat, v, acting=True),
        meld_limits=full.meld_limits,
    )


class _Unchecked(_Builder):
    """The menu's builder listing its forms without asking the rules about them."""

    def offer(self, command: Command) -> bool:
        self.trust(command)
        return True

    def draw_step(self) -> None:
        self.out.append(Draw())
        self.takes()

    def play_step(self) -> None:
        self.new_melds()
        self.additions()
        self.discards()


def _cheap_view(state: DealState, seat: int, memory: PublicMemory, target: int) -> SeatView:
    """A rollout player's view: the sampled world is nobody's secret, so its knowledge is
    the world itself (the public memory is the root's, not updated within a rollout)."""
    return SeatView(seat, deal_view(state, Viewer.player(seat)), memory, target, state)


def evaluate(
    state: DealState, side: str, before: Mapping[str, int] | None = None, target: int = 0
) -> float:
    """The side's deal score minus the best other side's: the real scores once the deal is
    over (plus or minus ``GAME_WON`` when they end the game, won or not: totals ``before``
    the deal reach the ``target``), otherwise the entry's score as the table stands with
    hands at ``HAND_WEIGHT`` and a little for melds nearing a canasta."""
    if state.phase == OVER and state.scores is not None:
        totals = {s: float(b["total"]) for s, b in state.scores.items()}
        if before and target:
            final = {s: t + before.get(s, 0) for s, t in totals.items()}
            if max(final.values()) >= target:
                best = max(final.values())
                mine = final[side]
                return (
                    (GAME_WON if mine == best else -GAME_WON)
                    + mine
                    - max(t for s, t in final.items() if s != side)
                )
    else:
        scores = get_variant(state.variant).score_deal(state)
        totals = {}
        for s, b in scores.items():
            near = sum(NEAR_CANASTA.get(m.size, 0) for m in state.melds[s] if not m.is_canasta)
            held = sum(len(state.hands[seat]) for seat in state.order if state.side_of[seat] == s)
            held += sum(m.size for m in state.melds[s])
            total = b["total"] - (1 - HAND_WEIGHT) * b["hands"] + near + HAND_CARD * held
            for part in ("melds", "red_threes"):  # modern_american: negative until a canasta
                total += abs(b[part]) - b[part]
            total -= (1 - PENALTY_WEIGHT) * b["penalties"]
            totals[s] = total
    mine = totals[side]
    return mine - max(t for s, t in totals.items() if s != side)
