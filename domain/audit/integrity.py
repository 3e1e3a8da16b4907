"""Checks (a) and (b) of the audit: the hash chain and the commitment to the shuffle."""

from __future__ import annotations

from collections.abc import Sequence

from domain.audit.stored import StoredEvent, kind_of
from domain.chain import first_broken_link
from domain.events import DeckShuffled, DeckStacked
from domain.refusals import Said, said
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


def check_commitment(deal_id: str, events: Sequence[StoredEvent]) -> tuple[bool, Said | None, bool]:
    """(ok, why not, stacked)."""
    if len(events) < 2:
        return False, said("audit.no_shuffle"), False
    published = getattr(events[0], "commitment", None)
    deck_event = events[1]
    kind = kind_of(deck_event)
    try:
        if isinstance(deck_event, DeckShuffled):
            seed = bytes.fromhex(deck_event.seed)
            if len(seed) != 32:
                return False, said("audit.seed_bits", bits=len(seed) * 8), False
            proof = commitment(deal_id, seed)
            stacked = False
        elif isinstance(deck_event, DeckStacked):
            proof = stacked_commitment(deal_id, list(deck_event.order))
            stacked = True
        else:
            return False, said("audit.not_the_shuffle", kind=kind), False
    except (TypeError, ValueError, AttributeError) as exc:
        return False, said("audit.seed_malformed", error=str(exc)), kind == "DeckStacked"
    if proof != published:
        key = "audit.commitment_deck" if stacked else "audit.commitment_seed"
        return False, said(key, published=str(published), proof=proof), stacked
    return True, None, stacked
