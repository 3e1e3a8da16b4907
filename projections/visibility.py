"""Redaction per viewer (R-VIEW-1..4, R-SEAT-4): every outgoing view passes through here.

A viewer is a spectator, a player in a room seat, or an auditor. A player sees his own
hand and his own draws; a player sitting a deal out sees it as a spectator does; nobody
but an auditor sees other hands, the stock, the deck order or the shuffle seed, during
or after the game.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from domain.state import OVER, DealState

SPECTATOR = "spectator"
PLAYER = "player"
AUDITOR = "auditor"


@dataclass(frozen=True)
class Viewer:
    kind: str = SPECTATOR
    seat: int | None = None  # the room seat of a player

    @classmethod
    def spectator(cls) -> Viewer:
        return cls(SPECTATOR)

    @classmethod
    def player(cls, seat: int) -> Viewer:
        return cls(PLAYER, seat)

    @classmethod
    def auditor(cls) -> Viewer:
        return cls(AUDITOR)

    def own_seat_in(self, st: DealState) -> int | None:
        """The seat whose private cards this viewer sees in this deal (None: spectator's view).

        A player sitting out sees only what a spectator sees (R-SEAT-4)."""
        if self.kind == PLAYER and self.seat is not None and self.seat in st.order:
            return self.seat
        return None


def public_table(st: DealState) -> dict[str, Any]:
    """What everybody may see of a deal (R-VIEW-2)."""
    return {
        "number": st.number,
        "variant": st.variant,
        "options": dict(st.options),
        "phase": st.phase,
        "turn": st.turn if st.phase != OVER else None,
        "dealer": st.dealer,
        "cutter": st.cutter,
        "order": list(st.order),
        "sides": {str(s): st.side_of[s] for s in st.order},
        "sitting_out": [s for s in range(st.players) if s not in st.order],
        "commitment": st.commitment,
        "stock_size": len(st.stock) if st.phase != "shuffle" and st.phase != "cut" else None,
        "pile": {
            "top": st.pile_top,
            "size": len(st.pile),
            "crosswise": list(st.crosswise),
            "frozen": bool(st.crosswise),
            "always_frozen": st.always_frozen,
        },
        "hand_counts": {str(s): len(st.hands[s]) for s in st.order},
        "ponytail_counts": {str(s): len(st.ponytails[s]) for s in st.order if st.ponytails[s]},
        "melds": {side: [m.to_json() for m in melds] for side, melds in st.melds.items()},
        "red_threes": {side: list(c) for side, c in st.red_threes.items()},
        "opened": dict(st.opened),
        "question": (
            {"asker": st.turn, "partner": st.asked_partner, "answer": st.answer}
            if st.asked
            else None
        ),
        "went_out": st.went_out,
        "concealed": st.concealed if st.went_out is not None else None,
        "end_reason": st.end_reason,
        "scores": st.scores,
        "timed_out": list(st.timed_out),  # the turn clock ran out (docs/tables.md)
    }


def deal_view(st: DealState, viewer: Viewer) -> dict[str, Any]:
    """The deal as ``viewer`` may see it now."""
    view = public_table(st)
    if viewer.kind == AUDITOR:
        view["hands"] = {str(s): list(st.hands[s]) for s in st.order}
        view["stock"] = list(reversed(st.stock))  # top first
        view["pile_cards"] = list(st.pile)
        return view
    seat = viewer.own_seat_in(st)
    view["seat"] = seat
    view["hand"] = sorted(st.hands[seat]) if seat is not None else None
    return view


# --- events ------------------------------------------------------------------------------

_PUBLIC_FIELDS: dict[str, tuple[str, ...]] = {
    "Started": (
        "number",
        "variant",
        "options",
        "order",
        "side_of",
        "dealer",
        "cutter",
        "scores_before",
        "commitment",
        "player_ids",  # who plays each seat from the start (public, as the table's seats)
    ),
    "DeckCut": ("seat", "n"),
    "RedThreeLaid": ("seat", "card"),
    "CardTurnedUp": ("card", "crosswise"),
    "PlayStarted": ("seat",),
    "PartnerAsked": ("seat", "partner"),
    "PartnerAnswered": ("seat", "asker", "yes"),
    "PileTaken": ("seat", "top", "size"),
    "MeldLaid": ("seat", "side", "rank", "cards"),
    "MeldExtended": ("seat", "side", "rank", "index", "cards"),
    "CardDiscarded": ("seat", "card"),
    "WentOut": ("seat", "concealed"),
    "PileDeclined": ("seat",),
    "DealScored": ("reason", "scores"),
    "DealAbandoned": ("reason",),
    "SeatPlayerChanged": ("seat", "player", "reason"),
    "TurnTimedOut": ("seat", "on_step"),
    "TurnClockRestarted": ("seat", "down", "up"),
}
#: Deal events nobody but an auditor is shown: the seed, the deck order.
SECRET_KINDS = frozenset({"DeckShuffled", "DeckStacked"})


def event_view(event: Any, viewer: Viewer, st: DealState) -> dict[str, Any] | None:
    """One stored deal event as ``viewer`` may see it (None: nothing to show).

    ``st`` is any state of the same deal (its seating is all that is read)."""
    kind = type(event).__name__
    out: dict[str, Any] = {"step": event.originator_version, "kind": kind}
    if viewer.kind == AUDITOR:
        out.update(
            {
                k: v
                for k, v in event.__dict__.items()
                if k not in ("originator_id", "originator_version", "timestamp", "originator_topic")
            }
        )
        return out
    if kind in SECRET_KINDS:
        return None
    own = viewer.own_seat_in(st)
    if kind == "CardsDealt":
        counts: dict[str, int] = {}
        for seat, _card in event.cards:
            counts[str(seat)] = counts.get(str(seat), 0) + 1
        out["counts"] = counts
        if own is not None:
            out["cards"] = [card for seat, card in event.cards if seat == own]
        return out
    if kind == "PonytailsDealt":  # face down: nobody sees them, not even the owner
        counts = {}
        for seat, _card in event.cards:
            counts[str(seat)] = counts.get(str(seat), 0) + 1
        out["counts"] = counts
        return out
    if kind == "PonytailPickedUp":
        out.update({"seat": event.seat, "count": len(event.cards)})
        if own is not None and own == event.seat:
            out["cards"] = list(event.cards)
        return out
    if kind == "CardsDrawn":
        out.update(
            {"seat": event.seat, "count": len(event.cards), "replacement": event.replacement}
        )
        if own is not None and own == event.seat:
            out["cards"] = list(event.cards)  # R-VIEW-3: his own draws, to him only
        return out
    fields = _PUBLIC_FIELDS.get(kind)
    if fields is None:
        return None  # an unknown kind is never shown rather than risk a leak
    out.update({f: getattr(event, f) for f in fields})
    return out
