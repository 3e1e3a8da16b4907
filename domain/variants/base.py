"""The rule data every entry provides, and the hooks it may override.

The engine (``domain.rules``) owns the turn: phases, drawing, laying melds in order,
taking the pile, discarding, going out. It asks the entry's ``Variant`` only the
questions that differ between entries: is this meld legal, may the pile be taken this
way, does this initial meld count, may this card be discarded, may this side go out,
what does the deal score. ``Variant`` itself answers them as `classic` does (docs/rules/common.md
and classic.md); the other entries are small subclasses (scalachess-style), never forks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property

from domain.cards import CARDS, full_deck
from domain.deal_events import Breakdown
from domain.errors import RuleViolation, SetupError
from domain.meld_limits import MeldLimits
from domain.melds import LaidMeld
from domain.refusals import Param
from domain.scoring import (
    MIXED_CANASTA,
    NATURAL_CANASTA,
    card_values,
    finish,
    side_hands,
    start_breakdown,
)
from domain.state import DealState


@dataclass
class MeldPlan:
    """What one command lays, checked against the running state as it goes."""

    opening: bool = False  # the command makes the side's initial meld
    cards: list[str] = field(default_factory=list)  # every card melded by the command
    pile_top: str | None = None  # the pile's top card, when the command took the pile
    new_melds: list[tuple[str, list[str]]] = field(default_factory=list)  # (rank, cards)
    wilds_outside_wild_meld: bool = False
    black_three_meld: bool = False


@dataclass(frozen=True)
class Lack:
    """One reason why a player may not go out now (R-OUT-1, R-OUT-3 and the entries' own):
    ``code`` is a stable short name (the move menu's ``go_out.lacks``, docs/api.md); ``rule``,
    ``key`` and ``params`` the refusal a going-out command gets when it is the first reason
    (``domain.refusals``)."""

    code: str
    rule: str
    key: str
    params: Mapping[str, Param] = field(default_factory=dict)

    def violation(self) -> RuleViolation:
        return RuleViolation(self.rule, self.key, **self.params)


#: R-OUT-3: the partner asked this turn answered no (every entry).
PARTNER_SAID_NO = Lack("partner_said_no", "R-OUT-3", "out.partner_said_no")


@cache
def needs_canastas(needed: int) -> Lack:
    """R-OUT-1: the side has fewer canastas than the ``needed`` going out needs."""
    if needed == 1:
        return Lack("needs_canasta", "R-OUT-1", "out.needs_canasta")
    return Lack("needs_canasta", "R-OUT-1", "out.needs_canastas", {"needed": needed})


@dataclass(frozen=True)
class Variant:
    key: str
    title: str
    player_counts: tuple[int, ...]
    decks: int
    hand_size: Mapping[int, int]  # by number of seats at the table
    draw_count: Mapping[int, int]  # R-DRAW-1
    canastas_to_go_out: Mapping[int, int]  # R-OUT-1
    target: int  # R-GAME-1
    selectable_targets: tuple[int, ...] = ()
    options: frozenset[str] = field(default_factory=lambda: frozenset({"always_frozen"}))
    # R-INIT-1: (lowest cumulative score, minimum), highest threshold first; the last
    # row applies to everything below the others (negative totals).
    initial_minimums: tuple[tuple[int, int], ...] = ((3000, 120), (1500, 90), (0, 50))
    minimum_below_zero: int = 15
    max_wilds: int = 3  # R-MELD-2
    meld_cap: int | None = None  # melds complete at this size and take no more
    wild_melds: bool = False  # melds of wild cards alone
    # R-SEAT-*: which player counts play in teams chosen by the host
    host_chooses_teams: frozenset[int] = frozenset()
    team_shapes: Mapping[int, tuple[tuple[int, ...], ...]] = field(default_factory=dict)
    sit_outs: bool = False  # teams of three sit one out per deal (R-SEAT-2)
    turn_up: bool = True  # R-DEAL-7: the pile starts with a turned-up card
    cutter_offset: int = 1  # R-DEAL-4: the dealer's left (+1) cuts; -1: his right
    ponytail_size: int = 0  # face-down cards dealt to each player after the hands
    going_out_bonus: int = 100  # R-SCORE-1
    concealed_bonus: int = 100  # R-OUT-5
    # What happens when the stock runs out: "pile" (R-END-1: play on with the pile only)
    # or "after_turn" (the deal ends once the turn that emptied the stock is over).
    stock_end: str = "pile"
    max_deals: int | None = None  # the game also ends after this many deals
    meld_rule: str = "R-MELD-1"  # the rule id refusing a meld of too few or too many cards
    # the rule ids refusing too few naturals or too many wilds, and wilds not outnumbered
    ratio_rules: tuple[str, str] = ("R-MELD-2", "R-MELD-3")
    wilds_outnumbered: bool = True  # R-MELD-3: naturals outnumber wild cards
    wild_meld_rule: str | None = None  # refusing a wild-card meld's size (None: meld_rule)
    initial_rule: str = "R-INIT-1"
    black_three_meld_max: int = 4  # R-OUT-4: three or four black threes
    three_meld_rule: str = "R-OUT-4"  # the rule id refusing a black-three meld
    # R-DEAL-7: a black three turned after a crosswise card does not stop the turning
    # (classic); R-PT-DEAL-2 stops at any card that is not wild, 7 or red three.
    black_three_stops_turn_up: bool = False

    # --- numbers ------------------------------------------------------------------------
    def initial_minimum(self, cumulative: int) -> int:
        """R-INIT-1: the count a side's first meld of a deal must reach."""
        for threshold, minimum in self.initial_minimums:
            if cumulative >= threshold:
                return minimum
        return self.minimum_below_zero

    def cutter(self, order: Sequence[int], dealer: int) -> int:
        """R-DEAL-4 (R-PT-DEAL-1): the seat that cuts, ``cutter_offset`` seats from the dealer
        on the deal's virtual table (+1 his left, -1 his right)."""
        i = order.index(dealer)
        return order[(i + self.cutter_offset) % len(order)]

    def table_options(self, options: Mapping[str, bool]) -> dict[str, bool]:
        """Every option of the entry, each on or off (R-SEAT-3: an option left off is off)."""
        return {name: bool(options.get(name, False)) for name in sorted(self.options)}

    def check_stacked_deck(self, deck: Sequence[str]) -> None:
        """R-DEAL-3: a prepared deck (tests only) holds every card of the entry's decks once."""
        if sorted(deck) != sorted(full_deck(self.decks)):
            raise SetupError("R-DEAL-3", "table.stacked_deck")

    def hand_size_for(self, players: int) -> int:
        return self.hand_size[players]

    def draw_count_for(self, players: int) -> int:
        return self.draw_count[players]

    def canastas_needed(self, players: int) -> int:
        return self.canastas_to_go_out[players]

    # --- cards laid at once -----------------------------------------------------------------
    def is_bonus_card(self, card: str) -> bool:
        """R-DEAL-6, R-DRAW-2: cards laid at once and replaced (red threes)."""
        return CARDS[card].is_red_three

    def last_card_bonus_stays_in_hand(self) -> bool:
        """R-DRAW-3: a red three drawn as the stock's last card is laid (and ends the deal)."""
        return False

    def freezes_turn_up(self, card: str) -> bool:
        """R-DEAL-7: a wild or red three turned up freezes the pile and is covered."""
        info = CARDS[card]
        return info.is_wild or info.is_red_three

    def exact_cut_bonus(self, n: int) -> int:
        """A bonus for the cutter's side when he lifts exactly the right count (ponytail)."""
        return 0

    # --- melds --------------------------------------------------------------------------------
    def meld_limits(self, st: DealState, side: str, opening: bool) -> MeldLimits:
        """R-MELD-1..3, R-MELD-6 (and the entries' own): what a meld of the side may hold now;
        ``opening``: in the command that makes the side's initial meld. The move menu gives
        the same limits to clients (docs/api.md, ``meld_limits``). Here the entry's own,
        whatever the state (an entry whose limits depend on it adds to them)."""
        return self.entry_meld_limits

    @cached_property
    def entry_meld_limits(self) -> MeldLimits:
        """The limits of the entry's fields, made once: every meld the rules check asks
        for them."""
        too_few, not_more = self.ratio_rules
        return MeldLimits(
            min_cards=3,
            max_cards=self.meld_cap,
            min_naturals=2,
            max_wilds=self.max_wilds,
            wilds_outnumbered=self.wilds_outnumbered,
            wild_melds=self.wild_melds,
            size_rule=self.meld_rule,
            wilds_rule=too_few,
            ratio_rule=not_more,
            wild_meld_rule=self.wild_meld_rule or self.meld_rule,
        )

    def check_meld(
        self,
        st: DealState,
        side: str,
        rank: str,
        existing: Sequence[str],
        added: Sequence[str],
        plan: MeldPlan,
    ) -> None:
        """The meld ``existing + added`` would form is within the side's ``meld_limits``."""
        self.meld_limits(st, side, plan.opening).check(rank, existing, added)

    def check_command_melds(self, st: DealState, side: str, plan: MeldPlan) -> None:
        """Checks that need every meld of the command (none in classic)."""

    def may_meld_rank(self, st: DealState, rank: str) -> None:
        """A rank nobody may meld any more (none in classic)."""

    def check_initial(self, st: DealState, side: str, plan: MeldPlan) -> None:
        """R-INIT-1/2: the side's first meld of the deal reaches its minimum in one command;
        a pile's top card counts, cards under it were never in the plan."""
        minimum = self.initial_minimum(st.scores_before.get(side, 0))
        count = self.initial_count(plan)
        if count < minimum:
            raise RuleViolation(self.initial_rule, "init.short", points=count, minimum=minimum)

    def initial_count(self, plan: MeldPlan) -> int:
        """R-INIT-1/2: what the cards of an initial meld count toward the minimum (card
        values, R-CARD-3; the pile's top card included, cards under it never melded)."""
        return sum(CARDS[c].value for c in plan.cards)

    # --- the pile --------------------------------------------------------------------------
    def check_pile_take(
        self,
        st: DealState,
        side: str,
        top: str,
        first: Sequence[str],
        existing: LaidMeld | None,
    ) -> None:
        """R-PILE-2..4 and R-FROZEN-1: may the top card be taken with ``first`` (hand cards)?"""
        rank = CARDS[top].rank
        pair = sum(1 for c in first if CARDS[c].is_natural and CARDS[c].rank == rank)
        wild = sum(1 for c in first if CARDS[c].is_wild)
        if st.always_frozen:
            # always_frozen: way 1, a natural pair from the hand; way 2, the top alone onto a meld of <= 6.
            if pair >= 2:
                return
            if first:
                raise RuleViolation("R-PILE-3", "pile.frozen_naturals")
            if not st.opened[side] or existing is None or existing.size > 6:
                raise RuleViolation("R-FROZEN-1", "pile.top_alone")
        elif st.frozen_for(side):
            if pair < 2:  # R-PILE-3 (frozen, or R-PILE-2: the side has not melded)
                why = "pile.frozen_pair" if st.pile_frozen else "pile.unopened_pair"
                raise RuleViolation("R-PILE-3", why, rank=rank)
        elif pair < 2 and not (pair >= 1 and wild >= 1) and existing is None:
            raise RuleViolation("R-PILE-4", "pile.pair_or_meld", rank=rank)

    def forced_to_take(self, st: DealState, side: str) -> bool:
        """R-END-1: stock empty; the pile is not frozen for him and its top matches a meld of
        his side (never under always_frozen). Legality of the take is checked apart."""
        if st.always_frozen or not st.pile:
            return False
        top = CARDS[st.pile[-1]]
        if st.frozen_for(side) or top.is_wild or top.is_three:
            return False
        return st.open_meld(side, top.rank) is not None

    # --- discarding and going out ---------------------------------------------------------------
    def check_discard(self, st: DealState, seat: int, card: str, going_out: bool) -> None:
        """R-DISC-1: a red three can never be discarded."""
        if CARDS[card].is_red_three:
            raise RuleViolation("R-DISC-1", "discard.red_three")

    def going_out_refusal(self, st: DealState, seat: int) -> RuleViolation | None:
        """Why the player may not go out now (the first of ``going_out_lacks``), or None."""
        lacks = self.going_out_lacks(st, seat)
        return lacks[0].violation() if lacks else None

    def going_out_lacks(self, st: DealState, seat: int) -> list[Lack]:
        """Every reason why the player, in his turn, may not go out now, in the order the
        rules check them (R-OUT-3, then R-OUT-1); empty when he may."""
        lacks = [PARTNER_SAID_NO] if st.answer is False else []
        needed = self.canastas_needed(st.players)
        if st.canastas(st.side_of[seat]) < needed:
            lacks.append(needs_canastas(needed))
        return lacks

    def must_discard_to_go_out(self) -> bool:
        return False

    def ask_refusal(self, st: DealState, seat: int) -> RuleViolation | None:
        """R-OUT-3: once per turn, before his first meld of the turn (before or after drawing)."""
        if st.asked:
            return RuleViolation("R-OUT-3", "ask.once_per_turn")
        if st.turn_melded:
            return RuleViolation("R-OUT-3", "ask.before_meld")
        return None

    # --- scoring and the end of the game ------------------------------------------------------
    def red_three_bonus(self, count: int) -> int:
        """R-SCORE-4 (classic): 100 each, 800 for all four."""
        return 800 if count == 4 else 100 * count

    def score_deal(self, st: DealState) -> dict[str, Breakdown]:
        """R-SCORE-1..4: melded values, canasta bonuses, going out (and concealed), red
        threes (negative without a meld), minus the cards left in the side's hands."""
        result: dict[str, Breakdown] = {}
        for side in st.sides:
            b = start_breakdown(st, self, side)
            melds = st.melds[side]
            b["melds"] = sum(card_values(m.cards) for m in melds)
            for m in st.completed(side):
                b["mixed_canastas" if m.has_wild else "natural_canastas"] += 1
            b["canasta_bonus"] = (
                NATURAL_CANASTA * b["natural_canastas"] + MIXED_CANASTA * b["mixed_canastas"]
            )
            red = self.red_three_bonus(len(st.red_threes[side]))
            b["red_threes"] = red if melds else -red  # R-SCORE-4
            b["hands"] = -sum(card_values(h) for h in side_hands(st, side))
            result[side] = finish(b)
        return result

    def winners(self, totals: Mapping[str, int], target: int, deals: int) -> list[str] | None:
        """R-GAME-1: after a complete deal, once a side reached the target, the highest
        totals win (equal highest totals share the win); None while the game goes on."""
        if not totals:
            return None
        reached = max(totals.values()) >= target
        if not reached and (self.max_deals is None or deals < self.max_deals):
            return None
        best = max(totals.values())
        return sorted(side for side, total in totals.items() if total == best)
