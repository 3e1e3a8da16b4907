"""Computer players (docs/bots.md): pure functions of what one seat may see.

A bot is ``decide(view, menu, rng) -> command``: ``view`` is the seat's ``SeatView`` (the
server's redaction of the deal for that player, and the public history), ``menu`` the seat's
move menu (``domain.menu.menu``), ``rng`` the only source of chance it may use. It does no
I/O and reads no clock (``strong`` reads the CPU clock only to end its search when given a
time budget). ``LEVELS`` names the levels.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from bots import basic
from bots.strong import Strong
from bots.view import PublicMemory, SeatView, seat_view
from domain.commands import Command
from domain.menu import Menu, menu
from domain.state import DealState

Bot = Callable[[SeatView, Menu, random.Random], Command]


def random_move(view: SeatView, menu: Menu, rng: random.Random) -> Command:
    """The ``random`` level: any move of the menu, uniformly (a baseline)."""
    assert menu.moves, "an empty menu: the seat to act has no legal move"
    return menu.moves[rng.randrange(len(menu.moves))]


LEVELS: dict[str, Bot] = {"random": random_move, "basic": basic.decide, "strong": Strong()}


def get_bot(level: str) -> Bot:
    """The bot of ``level``; KeyError naming the levels if there is none."""
    try:
        return LEVELS[level]
    except KeyError:
        raise KeyError(f"no bot level {level!r}; levels: {', '.join(LEVELS)}") from None


def choose(
    bot: Bot,
    state: DealState,
    seat: int,
    memory: PublicMemory,
    target: int,
    rng: random.Random,
) -> Command:
    """What ``bot`` in room seat ``seat`` plays now: it is given that seat's view and move
    menu, built from the state through the server's redaction, and nothing else."""
    return bot(seat_view(state, seat, memory, target), menu(state, seat), rng)


__all__ = [
    "LEVELS",
    "Bot",
    "PublicMemory",
    "SeatView",
    "choose",
    "get_bot",
    "random_move",
    "seat_view",
]
