"""The state of one deal, derived only from its events (R-HIST-1).

``DealState`` holds plain JSON-friendly values (lists, dicts with string keys, strings,
ints; melds as ``LaidMeld`` values, whose JSON form ``to_dict`` gives) so that it can be
snapshotted by the event store and cloned cheaply. ``apply`` is the single fold: every
event of the deal's stream goes through it (typed, ``domain.deal_events``), whether it is
being decided, recorded or replayed. It never calls a random source or the clock, and it
knows nothing of the entries: what it needs of its entry (``meld_cap``) it is given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, assert_never

from domain.cards import CARDS, full_deck
from domain.constants import ANSWER, CUT, DEALING, DRAW, OVER, PLAY, SHUFFLE
from domain.deal_events import (
    CardDiscarded,
    CardsDealt,
    CardsDrawn,
    CardTurnedUp,
    DealAbandoned,
    DealEvent,
    DealScored,
    DeckCut,
    DeckShuffled,
    DeckStacked,
    MeldExtended,
    MeldLaid,
    PartnerAnswered,
    PartnerAsked,
    PileDeclined,
    PileTaken,
    PlayStarted,
    PonytailPickedUp,
    PonytailsDealt,
    RedThreeLaid,
    SeatPlayerChanged,
    TurnClockRestarted,
    TurnTimedOut,
    WentOut,
)
from domain.melds import LaidMeld
from domain.shuffle import shuffled

__all__ = ["ANSWER", "CUT", "DEALING", "DRAW", "OVER", "PLAY", "SHUFFLE", "DealState"]

#: What a deal's options hold (true/false switches such as ``always_frozen``).
Options = Mapping[str, bool]


class DealState:
    """Everything the rules need about one deal in progress."""

    def __init__(
        self,
        *,
        table_id: str,
        number: int,
        variant: str,
        meld_cap: int | None,
        decks: int,
        options: Options,
        players: int,
        player_ids: list[str],
        order: list[int],
        side_of: list[str],
        dealer: int,
        cutter: int,
        scores_before: Mapping[str, int],
        commitment: str,
    ) -> None:
        self.table_id = table_id
        self.number = number
        self.variant = variant
        self.decks = decks
        self.options = dict(options)
        self.players = players
        self.player_ids = list(player_ids)
        self.order = list(order)
        self.side_of = list(side_of)
        self.dealer = dealer
        self.cutter = cutter
        self.scores_before = dict(scores_before)
        self.commitment = commitment
        self.phase = SHUFFLE
        self.turn: int | None = None
        self.deck: list[str] = []  # the shuffled deck, top first, until it is cut
        self.stock: list[str] = []  # top is the LAST element
        self.pile: list[str] = []  # top is the LAST element
        self.crosswise: list[str] = []  # freezing cards lying in the pile (R-DISC-1, R-DEAL-7)
        self.hands: list[list[str]] = [[] for _ in range(players)]
        self.ponytails: list[list[str]] = [[] for _ in range(players)]  # face down
        self.ponytail_up: list[bool] = [False] * players
        self.meld_cap = meld_cap  # the entry's: melds close at this size
        self.cut: int | None = None
        self.asked_in_deal: list[bool] = [False] * players
        sides = sorted({side_of[s] for s in order})
        self.melds: dict[str, list[LaidMeld]] = {s: [] for s in sides}
        self.red_threes: dict[str, list[str]] = {s: [] for s in sides}
        self.opened: dict[str, bool] = {s: False for s in sides}
        self.melded_before: list[bool] = [False] * players  # laid/added in an earlier turn
        self.turn_melded: dict[str, int] = {}  # rank -> cards the player melded this turn
        self.asked = False
        self.asked_partner: int | None = None
        self.answer: bool | None = None
        self.resume_phase: str | None = None
        self.went_out: int | None = None
        self.concealed = False
        self.end_reason: str | None = None
        self.scores: dict[str, dict[str, int]] | None = None
        # The turn clock (docs/tables.md): seats whose current turn (or answer, or cut) has
        # timed out, played by the basic bot until it ends; and per seat, its turns in a row
        # that timed out in this deal.
        self.timed_out: list[int] = []
        self.missed: list[int] = [0] * players

    # --- derived facts ------------------------------------------------------------
    @property
    def sides(self) -> list[str]:
        return list(self.melds)

    @property
    def to_act(self) -> int | None:
        """The room seat whose command the deal waits for (None: nobody's, or over)."""
        if self.phase == OVER:
            return None
        if self.phase == CUT:
            return self.cutter
        if self.phase == ANSWER:
            return self.asked_partner
        return self.turn

    @property
    def pile_top(self) -> str | None:
        return self.pile[-1] if self.pile else None

    @property
    def always_frozen(self) -> bool:
        return bool(self.options.get("always_frozen", False))

    @property
    def pile_frozen(self) -> bool:
        """The pile's own state (a crosswise card in it, or the option on)."""
        return bool(self.crosswise) or self.always_frozen

    def frozen_for(self, side: str) -> bool:
        """R-PILE-2: frozen for a side that has not made its initial meld."""
        return self.pile_frozen or not self.opened[side]

    def left_of(self, seat: int) -> int:
        i = self.order.index(seat)
        return self.order[(i + 1) % len(self.order)]

    def partners(self, seat: int) -> list[int]:
        side = self.side_of[seat]
        return [s for s in self.order if s != seat and self.side_of[s] == side]

    def open_meld(self, side: str, rank: str) -> tuple[int, LaidMeld] | None:
        """The side's meld of ``rank`` that can still take cards, if any."""
        for i, meld in enumerate(self.melds[side]):
            if meld.rank == rank and not meld.closed:
                return i, meld
        return None

    def canastas(self, side: str) -> int:
        return sum(1 for m in self.melds[side] if m.is_canasta)

    def completed(self, side: str) -> list[LaidMeld]:
        """The side's canastas (melds of seven or more; never a black-three meld)."""
        return [m for m in self.melds[side] if m.is_canasta]

    # --- the fold -----------------------------------------------------------------
    def apply(self, e: DealEvent) -> None:
        """Fold one event (the most frequent kinds are matched first)."""
        match e:
            case CardsDrawn():
                self._cards_drawn(e)
            case CardDiscarded():
                self._card_discarded(e)
            case MeldLaid():
                self._meld_laid(e)
            case MeldExtended():
                self._meld_extended(e)
            case PileTaken():
                self._pile_taken(e)
            case RedThreeLaid():
                self._red_three_laid(e)
            case DealScored():
                self.end_reason = e.reason
                self.scores = {side: dict(b) for side, b in e.scores.items()}
                self.phase = OVER
            case WentOut():
                self.went_out = e.seat
                self.concealed = bool(e.concealed)
                self.phase = OVER
            case DeckShuffled():
                self.deck = shuffled(full_deck(self.decks), bytes.fromhex(e.seed))
                self.phase = CUT
            case DeckStacked():
                self.deck = list(e.order)
                self.phase = CUT
            case DeckCut():
                self._deck_cut(e)
            case CardsDealt():
                for seat, card in e.cards:
                    self._take_from_stock(card)
                    self.hands[seat].append(card)
            case PonytailsDealt():
                for seat, card in e.cards:
                    self._take_from_stock(card)
                    self.ponytails[seat].append(card)
            case CardTurnedUp():
                self._card_turned_up(e)
            case PlayStarted():
                self.turn = e.seat
                self.phase = DRAW
            case PonytailPickedUp():
                self._ponytail_picked_up(e)
            case PartnerAsked():
                self._partner_asked(e)
            case PartnerAnswered():
                self.answer = bool(e.yes)
                self._acted(e.seat)
                self.phase = self.resume_phase or DRAW
                self.resume_phase = None
            case PileDeclined():
                self.phase = OVER
            case DealAbandoned():
                self.end_reason = "stopped"
                self.phase = OVER
            case SeatPlayerChanged():  # a new list: clones share the old one
                self.player_ids = [
                    e.player if seat == e.seat else p for seat, p in enumerate(self.player_ids)
                ]
                # The new player starts afresh: no turns missed, and the rest of a turn
                # that timed out is his to play (docs/tables.md).
                self.missed = [0 if seat == e.seat else m for seat, m in enumerate(self.missed)]
                self.timed_out = [seat for seat in self.timed_out if seat != e.seat]
            case TurnTimedOut():
                self.timed_out.append(e.seat)
                self.missed[e.seat] += 1
            case TurnClockRestarted():
                pass  # only where the turn's clock starts (Deal.turn_since) changes
            case _:
                assert_never(e)

    def _acted(self, seat: int) -> None:
        """``seat``'s turn (or answer, or cut) is over: a clock that ran out stops."""
        if seat in self.timed_out:
            self.timed_out.remove(seat)
        else:
            self.missed[seat] = 0

    def _deck_cut(self, e: DeckCut) -> None:
        self._acted(e.seat)
        n = e.n
        self.cut = n
        after_cut = self.deck[n:] + self.deck[:n]  # R-DEAL-4: bottom packet on top
        self.stock = after_cut[::-1]
        self.deck = []
        self.phase = DEALING

    def _take_from_stock(self, card: str) -> None:
        top = self.stock.pop()
        if top != card:  # an event that contradicts the stream: refuse to fold it
            raise ValueError(f"event names {card} but the stock's top card is {top}")

    def _ponytail_picked_up(self, e: PonytailPickedUp) -> None:
        seat = e.seat
        self.hands[seat].extend(self.ponytails[seat])
        self.ponytails[seat] = []
        self.ponytail_up[seat] = True

    def _cards_drawn(self, e: CardsDrawn) -> None:
        hand = self.hands[e.seat]
        for card in e.cards:
            self._take_from_stock(card)
            hand.append(card)
        if not e.replacement:
            self.phase = PLAY

    def _red_three_laid(self, e: RedThreeLaid) -> None:
        seat = e.seat
        self.hands[seat].remove(e.card)
        self.red_threes[self.side_of[seat]].append(e.card)

    def _card_turned_up(self, e: CardTurnedUp) -> None:
        card = e.card
        self._take_from_stock(card)
        self.pile.append(card)
        if e.crosswise:
            self.crosswise.append(card)

    def _partner_asked(self, e: PartnerAsked) -> None:
        self.asked = True
        self.asked_in_deal[e.seat] = True
        self.asked_partner = e.partner
        self.resume_phase = self.phase
        self.phase = ANSWER

    def _pile_taken(self, e: PileTaken) -> None:
        self.hands[e.seat].extend(self.pile)
        self.pile = []
        self.crosswise = []
        self.phase = PLAY

    def _meld_cards(self, seat: int, rank: str, cards: list[str]) -> None:
        hand = self.hands[seat]
        for card in cards:
            hand.remove(card)
        self.opened[self.side_of[seat]] = True
        self.turn_melded[rank] = self.turn_melded.get(rank, 0) + len(cards)

    def _meld_laid(self, e: MeldLaid) -> None:
        seat, rank, cards = e.seat, e.rank, list(e.cards)
        self._meld_cards(seat, rank, cards)
        self.melds[self.side_of[seat]].append(LaidMeld.of(rank, cards, self.meld_cap))

    def _meld_extended(self, e: MeldExtended) -> None:
        seat, rank, cards = e.seat, e.rank, list(e.cards)
        self._meld_cards(seat, rank, cards)
        melds = self.melds[self.side_of[seat]]
        # replaced, never mutated
        melds[e.index] = LaidMeld.of(rank, [*melds[e.index].cards, *cards], self.meld_cap)

    def _card_discarded(self, e: CardDiscarded) -> None:
        seat, card = e.seat, e.card
        self.hands[seat].remove(card)
        self.pile.append(card)
        if CARDS[card].is_wild:  # R-DISC-1
            self.crosswise.append(card)
        if self.hands[seat]:
            self._pass_turn(seat)

    def _pass_turn(self, seat: int) -> None:
        self._acted(seat)
        self.timed_out = []
        if self.turn_melded:
            self.melded_before[seat] = True
        self.turn_melded = {}
        self.asked = False
        self.asked_partner = None
        self.answer = None
        self.turn = self.left_of(seat)
        self.phase = DRAW

    # --- copying and (de)serialising ----------------------------------------------------
    def clone(self) -> DealState:
        """A copy that shares nothing mutable with this state (cheap: it runs per command).

        Melds are immutable (``_meld_extended`` replaces them), so the copies of the meld
        lists share them.
        """
        new = object.__new__(DealState)
        d = self.__dict__.copy()
        d["deck"] = self.deck[:]
        d["stock"] = self.stock[:]
        d["pile"] = self.pile[:]
        d["crosswise"] = self.crosswise[:]
        d["melded_before"] = self.melded_before[:]
        d["hands"] = [h[:] for h in self.hands]
        d["ponytails"] = [p[:] for p in self.ponytails]
        d["ponytail_up"] = self.ponytail_up[:]
        d["asked_in_deal"] = self.asked_in_deal[:]
        d["melds"] = {s: ms[:] for s, ms in self.melds.items()}
        d["red_threes"] = {s: c[:] for s, c in self.red_threes.items()}
        d["opened"] = self.opened.copy()
        d["turn_melded"] = self.turn_melded.copy()
        d["timed_out"] = self.timed_out[:]
        d["missed"] = self.missed[:]
        new.__dict__ = d
        return new

    def __deepcopy__(self, memo: dict[int, Any]) -> DealState:
        return self.clone()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form snapshots store (melds as their JSON form, as they always were)."""
        d = self.clone().__dict__
        d["melds"] = {s: [m.to_json() for m in ms] for s, ms in self.melds.items()}
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DealState:
        new = object.__new__(cls)
        new.__dict__.update(data)
        # Snapshots taken before the turn clock existed: no clock ran out.
        new.__dict__.setdefault("timed_out", [])
        new.__dict__.setdefault("missed", [0] * int(data["players"]))
        new.melds = {s: [LaidMeld.from_json(m) for m in ms] for s, ms in data["melds"].items()}
        return new.clone()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DealState) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]
