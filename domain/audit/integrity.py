"""Checks (a) and (b) of the audit: the hash chain and the commitment to the shuffle."""

from __future__ import annotations

from collections.abc import Sequence

from domain.audit.stored import StoredEvent, kind_of
from domain.chain import first_broken_link
from domain.events import DeckShuffled, DeckStacked
from domain.shuffle import commitment, stacked_commitment


def broken_link(events: Sequence[StoredEvent]) -> int | None:
    """``domain.chain.first_broken_link``, also when an altered event cannot even be hashed
    (a field of the wrong type): the first event that cannot be linked is the broken one."""
    try:
        return first_broken_link(events)
    except Exception:
        for n in range(1, len(events) + 1):
            try:
                broken = first_broken_link(events[:n])
            except Exception:
                return int(events[n - 1].originator_version)
            if broken is not None:
                return broken
        return None


# --- (b) the commitment -------------------------------------------------------------------


def check_commitment(deal_id: str, events: Sequence[StoredEvent]) -> tuple[bool, str | None, bool]:
    """(ok, message, stacked)."""
    if len(events) < 2:
        return False, "the history has no shuffle event", False
    published = getattr(events[0], "commitment", None)
    deck_event = events[1]
    kind = kind_of(deck_event)
    try:
        if isinstance(deck_event, DeckShuffled):
            seed = bytes.fromhex(deck_event.seed)
            if len(seed) != 32:
                return False, f"the recorded seed has {len(seed) * 8} bits, not 256", False
            proof = commitment(deal_id, seed)
            stacked = False
        elif isinstance(deck_event, DeckStacked):
            proof = stacked_commitment(deal_id, list(deck_event.order))
            stacked = True
        else:
            return False, f"step 2 is {kind}, not the shuffle", False
    except (TypeError, ValueError, AttributeError) as exc:
        return False, f"the recorded seed is malformed: {exc}", kind == "DeckStacked"
    if proof != published:
        what = "prepared deck" if stacked else "seed"
        return (
            False,
            f"the {what} recorded at step 2 does not match the commitment published at the "
            f"deal's start ({published} expected, the {what} gives {proof})",
            stacked,
        )
    return True, None, stacked
