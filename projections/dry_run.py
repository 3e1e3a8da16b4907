"""A dry run's answer as its requester may see it (docs/dry_run.md).

A dry run (``POST /deals/{id}/commands/check``) decides a command without recording it and
tells the requester what it would record. Its rule: **the answer is the same whatever the
cards hidden from the requester are** (the stock, the other players' hands, the face-down
ponytails, his own included). A real command's answer may show him the cards he drew; a dry
run's may not, or he could peek at the stock by asking and never sending.

The rules decide in the order a real table plays, so a command's events fall in two parts:

- a *certain* part, decided only by what the requester may see (his hand, the public table):
  the cut's ``DeckCut``, the melds, the pile taken, the discard, the question, going out.
  These are answered as the requester would see them recorded (``event_view``);
- from the first event that cards hidden from him decide on (``HIDDEN_KINDS``: a card dealt,
  drawn, turned up or picked up from a ponytail, and the deal's score, which counts every
  hand), nothing is told but that first event's kind and counts (``BLIND_FIELDS``), which
  depend only on what he may see (a draw's count is the entry's draw count or what is left of
  the stock; a deal's hands their sizes), and the step the deal would reach is not told
  either, since how many events follow (red threes laid and replaced, cards turned up)
  depends on the hidden cards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from domain.cards import CARDS
from domain.state import DealState
from domain.variants import get_variant
from domain.variants.base import MeldPlan
from projections.visibility import Viewer, event_view

#: Events whose content cards hidden from the requester decide, and everything after them.
HIDDEN_KINDS = frozenset(
    {
        "CardsDealt",
        "PonytailsDealt",
        "CardsDrawn",
        "PonytailPickedUp",
        "CardTurnedUp",
        "RedThreeLaid",  # only ever after a draw or a deal, or from a pile taken (public)
        "DealScored",
    }
)
#: What is told of the first hidden event: its kind and counts, never a card or a score.
BLIND_FIELDS = ("step", "kind", "seat", "count", "counts", "replacement", "reason")
_MELD_KINDS = ("MeldLaid", "MeldExtended")


@dataclass(frozen=True)
class DryRun:
    """What a command would record, as its requester may be told (see the module)."""

    events: list[dict[str, Any]]  # the certain part, as the requester would see it
    undisclosed: dict[str, Any] | None  # the first hidden event, blind; None: nothing hidden
    step: int | None  # the step the deal would reach; None when hidden cards decide it
    points: int | None  # what the cards laid in melds count (None: no card laid)
    minimum: int | None  # the initial-meld minimum when the command would be the side's first


def dry_run_view(before: DealState, version: int, seat: int, events: Sequence[Any]) -> DryRun:
    """The dry run's answer for ``seat``: ``events`` are the stored events the command would
    record on the deal at ``before`` (step ``version``), in order."""
    viewer = Viewer.player(seat)
    certain: list[Any] = []
    undisclosed: dict[str, Any] | None = None
    for event in events:
        if _hidden(event, certain):
            view = event_view(event, Viewer.spectator(), before) or {}
            undisclosed = {k: view[k] for k in BLIND_FIELDS if k in view}
            undisclosed.setdefault("kind", type(event).__name__)
            undisclosed.setdefault("step", event.originator_version)
            break
        certain.append(event)
    shown = [v for e in certain if (v := event_view(e, viewer, before)) is not None]
    points, minimum = meld_points(before, seat, certain)
    return DryRun(
        events=shown,
        undisclosed=undisclosed,
        step=None if undisclosed is not None else version + len(events),
        points=points,
        minimum=minimum,
    )


def _hidden(event: Any, certain: Sequence[Any]) -> bool:
    """Whether hidden cards decide ``event``: a red three laid from a pile taken in the same
    command is public (the pile's cards were all seen face up), any other is not."""
    kind = type(event).__name__
    if kind == "RedThreeLaid":
        return not any(type(e).__name__ == "PileTaken" for e in certain)
    return kind in HIDDEN_KINDS


def meld_points(
    before: DealState, seat: int, events: Sequence[Any]
) -> tuple[int | None, int | None]:
    """``(points, minimum)`` of the cards ``events`` lay in melds (R-CARD-3): when they make
    the side's initial meld, the count the entry's initial-meld rule compares with its
    minimum (R-INIT-1, R-PT-INIT-1, R-MA-INIT-1: the pile's top card not counted there) and
    that minimum; otherwise their card values and None. ``(None, None)`` if nothing is laid."""
    cards = [c for e in events if type(e).__name__ in _MELD_KINDS for c in e.cards]
    if not cards:
        return None, None
    side = before.side_of[seat]
    if before.opened[side]:
        return sum(CARDS[c].value for c in cards), None
    variant = get_variant(before.variant)
    top = next((e.top for e in events if type(e).__name__ == "PileTaken"), None)
    plan = MeldPlan(opening=True, cards=cards, pile_top=top)
    return variant.initial_count(plan), variant.initial_minimum(before.scores_before.get(side, 0))
