"""A deal's events as one requester could see each of them when it was recorded, in a deal
whose seats change players (docs/tables.md, absent players): a player who left sees no more
of his seat's private cards from his leave on, and one who takes a seat (back, or given by
the host) sees them from then on. ``SeatPlayerChanged`` events say when."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from domain.state import DealState
from projections.visibility import Viewer, event_view


class SeatFollower:
    """Redacts a deal's events in order for ``name`` (None: a spectator), following who
    plays each seat from ``player_ids``, the seating before the first event it is given
    (a ``Started`` event sets it too)."""

    def __init__(self, name: str | None, player_ids: Sequence[str]) -> None:
        self.name = name
        self.player_ids = list(player_ids)

    @property
    def viewer(self) -> Viewer:
        if self.name is not None and self.name in self.player_ids:
            return Viewer.player(self.player_ids.index(self.name))
        return Viewer.spectator()

    def advance(self, event: Any) -> Viewer:
        """Take the next event in order: who ``name`` was when it was recorded."""
        kind = type(event).__name__
        if kind == "Started":
            self.player_ids = list(event.player_ids)
        elif kind == "SeatPlayerChanged":
            self.player_ids[event.seat] = event.player
        return self.viewer

    def view(self, event: Any, st: DealState) -> dict[str, Any] | None:
        """``event`` as ``name`` could see it when it was recorded (``st``: the deal)."""
        return event_view(event, self.advance(event), st)


def draws_made_by(events: Iterable[Any], name: str, seat: int) -> set[int]:
    """The steps of ``seat``'s draws in a deal's ``events`` (from its ``Started``) that
    ``name`` made himself, playing the seat then, as his history shows them to him: not those
    of a bot or of a player before or after him (docs/tables.md, absent players)."""
    follower = SeatFollower(name, ())
    player = Viewer.player(seat)
    return {
        event.originator_version
        for event in events
        if follower.advance(event) == player and type(event).__name__ == "CardsDrawn"
    }
