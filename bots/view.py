"""What a bot sees: its seat's view of the deal and a memory of the public history.

``SeatView`` is built from the deal's state through the server's own redaction
(``projections.visibility.deal_view`` for a player in that seat: his hand and the public
table, never another hand, the stock or a face-down card). ``PublicMemory`` keeps what the
public history has shown (``event_view`` for a spectator, so it is the same for every seat):
the scores before the deal, each seat's discards, the pile's cards and who took them. A bot
reads nothing else (``tests/bots/test_secrecy.py`` checks its decisions against shuffled
hidden cards).

``knowledge`` is the deal as the seat may know it, for asking the rules engine about a
command the menu does not list: the state with every card the seat may not see (the other
hands, the stock, the face-down ponytails, the deck before the cut) replaced by the same
cards in one fixed order. Which cards those are follows from what is public (the entry's
decks less the seat's hand, the melds, the red threes and the pile, whose every card was
shown when it was discarded or turned up), and how many lie in each place is public too, so
the knowledge state is the same whatever the hidden cards really are. A bot asks it only
about melds and takes of the pile, whose verdicts never read a hidden card; it is also where
a search player (a ``strong`` level) would sample the hidden cards from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from domain.cards import CARDS
from domain.commands import Command, Meld, TakePile
from domain.errors import RuleViolation
from domain.rules import decide
from domain.state import DealState
from projections.visibility import Viewer, deal_view, event_view


@dataclass
class PublicMemory:
    """The public history of one deal, folded from its events as a spectator sees them."""

    scores_before: dict[str, int] = field(default_factory=dict)
    discarded: dict[int, list[str]] = field(default_factory=dict)  # seat -> ranks discarded
    taken: dict[int, list[str]] = field(default_factory=dict)  # seat -> pile cards he took
    pile: list[str] = field(default_factory=list)  # the pile's cards, bottom first
    version: int = 0  # the last step observed

    def observe(self, shown: Mapping[str, Any] | None) -> None:
        """Fold one event as ``event_view`` shows it to a spectator (None: nothing shown)."""
        if shown is None:
            return
        self.version = max(self.version, int(shown["step"]))
        kind = shown["kind"]
        if kind == "Started":
            self.scores_before = {str(k): int(v) for k, v in shown["scores_before"].items()}
        elif kind == "CardTurnedUp":
            self.pile.append(shown["card"])
        elif kind == "CardDiscarded":
            self.pile.append(shown["card"])
            self.discarded.setdefault(shown["seat"], []).append(CARDS[shown["card"]].rank)
        elif kind == "PileTaken":
            self.taken.setdefault(shown["seat"], []).extend(self.pile)
            self.pile = []

    def observe_stored(self, events: Iterable[Any], state: DealState) -> None:
        """Fold stored deal events (those after ``version``) through the spectator's
        redaction."""
        spectator = Viewer.spectator()
        for event in events:
            if event.originator_version > self.version:
                self.observe(event_view(event, spectator, state))


@dataclass(frozen=True)
class SeatView:
    """One seat's knowledge when it must act: its view of the deal (``deal_view``), the public
    history's memory, and the game's target and totals before this deal (public)."""

    seat: int
    deal: Mapping[str, Any]
    memory: PublicMemory
    target: int
    knowledge: DealState

    def accepts(self, command: Command) -> bool:
        """Would the rules accept this meld or take of the pile from this seat now?"""
        assert isinstance(command, Meld | TakePile), "only melds and takes are asked about"
        try:
            decide(self.knowledge, self.seat, command)
        except RuleViolation:
            return False
        return True

    @property
    def hand(self) -> list[str]:
        return list(self.deal["hand"] or [])

    @property
    def variant(self) -> str:
        return str(self.deal["variant"])

    @property
    def phase(self) -> str:
        return str(self.deal["phase"])

    @property
    def side(self) -> str:
        return str(self.deal["sides"][str(self.seat)])

    def side_of(self, seat: int) -> str:
        return str(self.deal["sides"][str(seat)])

    @property
    def order(self) -> list[int]:
        return list(self.deal["order"])

    def next_seat(self) -> int:
        order = self.order
        return order[(order.index(self.seat) + 1) % len(order)]

    def opponents(self) -> list[int]:
        return [s for s in self.order if self.side_of(s) != self.side]


def knowledge_state(state: DealState, seat: int) -> DealState:
    """The deal with the cards ``seat`` may not see put back in one fixed order (above)."""
    new = state.clone()
    places = [new.hands[s] for s in range(new.players) if s != seat]
    places += [new.stock, new.deck]
    places += [new.ponytails[s] for s in range(new.players) if not new.ponytail_up[s]]
    pool = sorted(c for place in places for c in place)
    for place in places:
        size = len(place)
        place[:] = pool[:size]
        del pool[:size]
    return new


def seat_view(state: DealState, seat: int, memory: PublicMemory, target: int) -> SeatView:
    """The view of room seat ``seat`` through the server's redaction for that player."""
    view = deal_view(state, Viewer.player(seat))
    return SeatView(seat, view, memory, target, knowledge_state(state, seat))
