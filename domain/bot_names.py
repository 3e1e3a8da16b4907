"""The names bots play under (docs/bots.md, docs/tables.md): a bot seated by the host, the
bot standing in for a player who is away, and the turn clock's stand-in (``domain.clock``).
People's names cannot contain ':' (``domain.accounts.check_name``), so no person is ever
taken for a bot."""

from __future__ import annotations

#: The level of the bot that plays for a person: the rest of a timed-out turn, or his seat
#: while he is away.
STAND_IN_LEVEL = "basic"

#: A bot's name at a table: ``bot:<level>:<seat>`` (docs/bots.md). People's names cannot
#: contain ':' (``domain.accounts.check_name``), so no person is ever taken for a bot.
BOT_PREFIX = "bot:"


def bot_name(level: str, seat: int) -> str:
    return f"{BOT_PREFIX}{level}:{seat}"


def stand_in_name(seat: int, player: str) -> str:
    """The bot playing ``seat`` for ``player`` while he is away: ``bot:basic:<seat>:for:<player>``
    (a bot's name, so the bot runner plays it; it says for whom)."""
    return f"{bot_name(STAND_IN_LEVEL, seat)}:for:{player}"


def bot_level(player: str | None) -> str | None:
    """The level of the bot of this name, None for a person (or a free seat)."""
    if player is None or not player.startswith(BOT_PREFIX):
        return None
    return player.split(":")[1]
