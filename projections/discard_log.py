"""The public discard log (R-VIEW-2): every turned-up card, every discard, every pile
taken (by whom, how many cards, the top card), every partner question and answer.

Built from a deal's events only; it never holds a card a spectator may not see.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def public_entry(event: Any) -> dict[str, Any] | None:
    """The public log entry of one deal event, or None if it adds nothing to the log."""
    kind = type(event).__name__
    step = event.originator_version
    if kind == "CardTurnedUp":
        return {"step": step, "kind": "turned_up", "card": event.card, "crosswise": event.crosswise}
    if kind == "CardDiscarded":
        return {"step": step, "kind": "discarded", "seat": event.seat, "card": event.card}
    if kind == "PileTaken":
        return {
            "step": step,
            "kind": "pile_taken",
            "seat": event.seat,
            "top": event.top,
            "size": event.size,
        }
    if kind == "PartnerAsked":
        return {"step": step, "kind": "asked", "seat": event.seat, "partner": event.partner}
    if kind == "PartnerAnswered":
        return {"step": step, "kind": "answered", "seat": event.seat, "yes": event.yes}
    return None


def public_discard_log(events: Iterable[Any]) -> list[dict[str, Any]]:
    return [entry for e in events if (entry := public_entry(e)) is not None]


def describe(entry: dict[str, Any]) -> str:
    """One line of the log for people."""
    kind = entry["kind"]
    if kind == "turned_up":
        return f"turned up {entry['card']}" + (
            " (crosswise, pile frozen)" if entry["crosswise"] else ""
        )
    if kind == "discarded":
        return f"seat {entry['seat']} discarded {entry['card']}"
    if kind == "pile_taken":
        size = entry["size"]
        cards = "1 card" if size == 1 else f"{size} cards"
        return f"seat {entry['seat']} took the pile: {cards}, top {entry['top']}"
    if kind == "asked":
        return f"seat {entry['seat']} asked seat {entry['partner']}: may I go out?"
    if kind == "answered":
        return f"seat {entry['seat']} answered {'yes' if entry['yes'] else 'no'}"
    return str(kind)
