"""A player that chooses only from the move menu (``domain.menu``, ``GET /deals/{id}/moves``).

It knows no rule: it picks among the listed moves by their ``type`` alone, with a seeded random
source, preferring what makes a deal progress (picking up a ponytail, taking the pile, melding)
over drawing and discarding, and asking its partner now and then. The property test uses it on
domain commands, the end-to-end test on the menu's JSON bodies.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

#: Taken whenever listed.
ALWAYS = ("pick_up_ponytail",)
#: Chosen among with this probability when listed (else any other listed move).
PROGRESS = ("take_pile", "meld")
PROGRESS_CHANCE = 0.85
#: Left out of the random pick but for this chance (a question costs two commands).
RARE = {"ask_partner": 0.03}


def choose_index(kinds: Sequence[str], rng: random.Random) -> int:
    """The index of the chosen move among moves of these ``type``s (the menu is not empty)."""
    assert kinds, "an empty menu: the seat to act has no legal move"
    for i, kind in enumerate(kinds):
        if kind in ALWAYS:
            return i
    progress = [i for i, kind in enumerate(kinds) if kind in PROGRESS]
    if progress and rng.random() < PROGRESS_CHANCE:
        return rng.choice(progress)
    others = [i for i, kind in enumerate(kinds) if rng.random() < RARE.get(kind, 1.0)]
    return rng.choice(others or list(range(len(kinds))))
