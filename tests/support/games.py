"""Random legal deals through the application service, for tests (see ``app.autoplay``)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any
from uuid import UUID, uuid4

from app.application import CanastaApp
from app.autoplay import SeededRandom, new_table, play_deal, play_game
from domain.cards import full_deck
from domain.deal import Deal
from domain.legal import seat_to_act


def shuffled_deal() -> Deal:
    """Deal 1 of a classic table of ann and bob (ann deals, bob cuts), started and shuffled
    from a zero seed, as a ``Deal`` aggregate alone: no application, no store."""
    deal = Deal.start(
        uuid4(),
        table_id=str(uuid4()),
        number=1,
        variant="classic",
        decks=2,
        options={},
        players=2,
        player_ids=["ann", "bob"],
        order=[0, 1],
        side_of=["A", "B"],
        dealer=0,
        cutter=1,
        scores_before={"A": 0, "B": 0},
        commitment="c",
    )
    deal.shuffle(bytes(32))
    return deal


def stacked_deck(seed: int | str, decks: int = 2) -> list[str]:
    """``decks`` full decks in an order fixed by ``seed`` (``random.Random(seed)``'s shuffle),
    for a table started with a stacked deck (``allow_stacked_decks``): the same deal every run.
    A test whose assertions depend on how a deal goes needs that (docs/architecture.md)."""
    deck = full_deck(decks)
    random.Random(seed).shuffle(deck)
    return deck


def seated_table(
    app: CanastaApp,
    names: Sequence[str],
    entry: str = "classic",
    *,
    teams: Sequence[Sequence[int]] | None = None,
    target: int | None = None,
    options: dict[str, Any] | None = None,
) -> UUID:
    """A table of ``entry`` for ``len(names)`` created by ``names[0]`` (its host), with
    ``names[i]`` seated in room seat ``i`` and ``teams`` chosen if given; not started (the
    host starts it: ``app.start_game(table_id, names[0])``)."""
    table_id = app.create_table(names[0], entry, len(names), options, target)
    for seat, name in enumerate(names):
        app.join_table(table_id, name, seat)
    if teams is not None:
        app.choose_teams(table_id, names[0], teams)
    return table_id


def random_game(
    app: CanastaApp,
    seed: int,
    entry: str = "classic",
    players: int = 4,
    *,
    max_deals: int = 2,
    always_frozen: bool = False,
) -> UUID:
    """A random game at a table of ``player0``.. (``app.autoplay.new_table``): the server's
    chance and the players' commands drawn from ``seed``, stopped after ``max_deals`` deals
    unless it ended first; its table id."""
    app.random = SeededRandom(random.Random(seed))
    table_id = new_table(app, entry, players, always_frozen=always_frozen)
    play_game(app, table_id, random.Random(seed), max_deals=max_deals)
    return table_id


def play_to_end(app: CanastaApp, deal_id: UUID, rng: random.Random, limit: int = 5000) -> Deal:
    """Random legal commands from whoever must act until the deal is over; fails the test if
    it has not ended after ``limit`` commands."""
    deal = play_deal(app, deal_id, rng, max_commands=limit)
    assert seat_to_act(deal.state) is None, f"the deal did not end in {limit} commands"
    return deal


def play_commands(app: CanastaApp, deal_id: UUID, rng: random.Random, commands: int) -> Deal:
    """At most ``commands`` random legal commands (fewer if the deal ends first)."""
    return play_deal(app, deal_id, rng, max_commands=commands)


def random_teams(rng: random.Random, players: int, shapes: Sequence[int]) -> list[list[int]]:
    """Teams of the given sizes over randomly chosen room seats (the last team is the rest)."""
    seats = list(range(players))
    rng.shuffle(seats)
    teams, start = [], 0
    for size in shapes:
        teams.append(sorted(seats[start : start + size]))
        start += size
    return teams
