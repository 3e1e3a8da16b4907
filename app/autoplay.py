"""Random legal games driven through the application service (demo, benchmarks, tests), and
the policy of a player that chooses from the move menu alone (``menu_choice``)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from uuid import UUID

from app.application import CanastaApp
from domain.deal import Deal
from domain.legal import legal_command, seat_to_act
from domain.seating import default_teams
from domain.table import PLAYING, Table

HOST = "player0"


class SeededRandom:
    """A reproducible random source (demos and tests only): shuffle seeds and the first
    dealer follow from ``seed``, so the same seed replays the same game. A real table uses
    the system's cryptographic source (R-DEAL-1/3). A test may hand it its own
    ``random.Random`` to draw from instead."""

    def __init__(self, seed: int | str | random.Random) -> None:
        self.rng = (
            seed if isinstance(seed, random.Random) else random.Random(f"table-chance:{seed}")
        )

    def seed(self) -> bytes:
        return self.rng.randbytes(32)

    def choice(self, seats: Sequence[int]) -> int:
        return seats[self.rng.randrange(len(seats))]


def new_table(
    app: CanastaApp,
    entry: str,
    players: int,
    *,
    always_frozen: bool = False,
    teams: list[list[int]] | None = None,
) -> UUID:
    """Create a table, seat ``player0``..``playerN-1``, choose teams if needed."""
    options = {"always_frozen": True} if always_frozen else {}
    table_id = app.create_table(HOST, entry, players, options)
    for seat in range(players):
        app.join_table(table_id, f"player{seat}", seat)
    teams = teams or default_teams(entry, players)
    if teams:
        app.choose_teams(table_id, HOST, teams)
    return table_id


def play_deal(
    app: CanastaApp,
    deal_id: UUID,
    rng: random.Random,
    on_command: Callable[[Deal], None] | None = None,
    *,
    max_commands: int | None = None,
) -> Deal:
    """Play a deal to its end with random legal commands (or stop after ``max_commands``
    of them); returns the deal as it is then."""
    deal = app.get_deal(deal_id)
    played = 0
    while (seat := seat_to_act(deal.state)) is not None:
        if max_commands is not None and played >= max_commands:
            break
        command = legal_command(deal.state, seat, rng)
        deal = app.act(deal_id, deal.state.player_ids[seat], command)
        played += 1
        if on_command is not None:
            on_command(deal)
    return deal


def play_game(
    app: CanastaApp,
    table_id: UUID,
    rng: random.Random,
    *,
    max_deals: int = 100,
    on_deal: Callable[[Table, Deal], None] | None = None,
    on_command: Callable[[Deal], None] | None = None,
) -> Table:
    """Start the game and play deals until it ends (or stop it after ``max_deals``)."""
    deal_id = app.start_game(table_id, HOST)
    for number in range(1, max_deals + 1):
        deal = play_deal(app, deal_id, rng, on_command)
        table = app.get_table(table_id)
        if on_deal is not None:
            on_deal(table, deal)
        if table.status != PLAYING:
            return table
        if number == max_deals:
            app.stop_game(table_id, HOST)
            return app.get_table(table_id)
        deal_id = app.start_next_deal(table_id, HOST)
    return app.get_table(table_id)


# --- a player of the move menu -------------------------------------------------------------------

#: Taken whenever the menu lists it.
MENU_ALWAYS = ("pick_up_ponytail",)
#: Chosen among with this probability when listed (else any listed move).
MENU_PROGRESS = ("take_pile", "meld")
MENU_PROGRESS_CHANCE = 0.85
#: Left out of the random pick but for this chance (a question costs two commands).
MENU_RARE = {"ask_partner": 0.03}


def menu_choice(kinds: Sequence[str], rng: random.Random) -> int:
    """The index of the move to play among a move menu's moves of these ``type``s
    (``domain.menu``, ``GET /deals/{id}/moves``): a player that knows no rule, chooses at
    random, and prefers what makes a deal progress (picking up his ponytail, taking the pile,
    melding) over drawing and discarding. The menu must not be empty."""
    assert kinds, "an empty menu: the seat to act has no legal move"
    for i, kind in enumerate(kinds):
        if kind in MENU_ALWAYS:
            return i
    progress = [i for i, kind in enumerate(kinds) if kind in MENU_PROGRESS]
    if progress and rng.random() < MENU_PROGRESS_CHANCE:
        return rng.choice(progress)
    others = [i for i, kind in enumerate(kinds) if rng.random() < MENU_RARE.get(kind, 1.0)]
    return rng.choice(others or list(range(len(kinds))))
