"""Names every part of the domain shares: the phases of a deal and the special meld ranks.

The lowest module of ``domain`` (it imports nothing), so that the state, the rules, the
entries and the scoring can all use them without importing each other.
"""

from __future__ import annotations

from typing import Final

# Phases of a deal, in the order they normally come (boardgame.io-style explicit phases).
SHUFFLE: Final = "shuffle"  # created, deck not yet shuffled
CUT: Final = "cut"  # waiting for the cutter (R-DEAL-4)
DEALING: Final = "dealing"  # cut done, cards being dealt and turned up (one command)
DRAW: Final = "draw"  # the player to act must draw or take the pile
PLAY: Final = "play"  # drawn: meld, add, discard
ANSWER: Final = "answer"  # waiting for the partner's answer (R-OUT-3)
OVER: Final = "over"  # deal ended (went out, red three last, pile declined, or stopped)

WILD_RANK: Final = "W"  # the rank of a wild-card meld, where an entry has them
BLACK_THREE_RANK: Final = "3"  # the rank of a black-three meld (R-OUT-4)
CANASTA_SIZE: Final = 7  # a meld of seven or more cards is a canasta (R-MELD-6)
