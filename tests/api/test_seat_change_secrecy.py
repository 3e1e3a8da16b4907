"""Secrecy while seats change players (docs/tables.md, absent players and the turn clock;
R-VIEW-1..4): a property test over random deals and random changes of who plays each seat.

Random legal deals of ``classic`` with 2 and 4 players are played through the ASGI app over
HTTP (``TestClient``; the people send their commands with their tokens and sequence
numbers), and between commands the seats change players at random, as people and the bots
process change them:

- a player leaves his seat (``POST /tables/{id}/leave``) and the basic bot plays it (the test
  sends the bot's commands through the application service, as the bots process does);
- he takes it back (``POST /tables/{id}/seats``);
- the host gives an away seat to another registered account (``POST .../seats/{n}/give``):
  a newcomer, or a player who lost his own seat that way before;
- at a table with a turn clock, the seat to act times out (the stand-in's ``time_out``, sent
  through the application's command path as the bots process sends it, without the wait:
  ``CanastaApp.act`` does not read the clock), the stand-in plays the rest of the turn, and
  once a seat has missed the table's limit of turns the bot takes it over
  (``take_over_seat(..., "missed_turns")``, the bots process's call);
- a deal that ends is followed by the next one (opened while somebody may be away).

After every change and every run of commands, the people it concerned, an anonymous
spectator and two other viewers drawn at random, and at the end of the game every viewer
(each person who played or plays a seat, the newcomers, a registered account that never sat,
an anonymous spectator), read every GET route of the OpenAPI document but the audit's, about
the current deal (at the end: every deal), with its parameters filled in
(``secrecy_support.probes_for``: the deal, its history and ``?after=``, the replay at now and
at a random step, both logs, the move menu, the deal's stream from the start and resumed with
``Last-Event-ID`` and ``?after=``, ``?as=spectator``, the table, its scores and stream, the
lobby of every status, ``/me``...), plus the dry run of a discard naming a card hidden from
him (one his seat's bot drew, or one another seat holds, and one in the stock: the two
answers must be the same but for the card), and the move of the seat to act sent as his
own by whoever plays no seat (refused, nothing recorded). The answers to his own commands
and seat changes are checked too, and so is every log record (all loggers at DEBUG,
``tests.support.log_watch``) and printed line: no card hidden from a spectator, no seed.

The truth is the auditor's history of each deal (``GET /audit/deals/{id}``, read by
``tests.web.secrecy.Secrets``): at step ``s`` a person may see the public cards and the
private cards of the seat he plays at ``s``, nothing else (``Secrets.hidden_for``); an event,
a replay, a log row or a stream message is checked at its own step (``find_leaks``), a text
with no step against what he could see at some step so far. Positive checks keep it from
passing vacuously: the deal view holds exactly the hand of the seat he plays now (none while
he is away), and his history's and his draw log's draws with cards are exactly those made
while he played the seat.

Reproducing a failure: its message names the example, ``play_example(entry, players,
seed=..., clock=..., missed_limit=..., rounds=...)``, which plays the same game again (no
shrinking: each example is a whole game over HTTP), and what happened so far.
``CANASTA_SEAT_SECRECY_EXAMPLES=N`` plays N games per player count instead of two (a soak);
``CANASTA_SEAT_SECRECY_STORE=sqlite`` plays them on SQLite instead of the in-memory store;
``CANASTA_SEAT_SECRECY_MORE=1`` adds ``ponytail`` and ``classic`` with 3 players.
"""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import (
    HealthCheck,
    Phase,
    currently_in_test_context,
    event,
    given,
    note,
    settings,
)
from hypothesis import strategies as st

from app.application import CanastaApp
from app.autoplay import SeededRandom
from app.main import create_app
from app.settings import Settings
from domain.state import OVER
from domain.table import PLAYING
from tests.api.seat_game import AUDITOR, CHANGES, SeatGame
from tests.support.log_watch import LogWatch

#: The entries and player counts played (CANASTA_SEAT_SECRECY_MORE=1: two more, for a soak:
#: ponytail's face-down ponytails, picked up by whoever plays the seat then, and three hands).
CONFIGS = [("classic", 2), ("classic", 4)] + (
    [("ponytail", 4), ("classic", 3)] if os.environ.get("CANASTA_SEAT_SECRECY_MORE") else []
)
SEAT_SECRECY_SETTINGS = settings(
    # two games per player count; CANASTA_SEAT_SECRECY_EXAMPLES=N plays N (a longer soak)
    max_examples=int(os.environ.get("CANASTA_SEAT_SECRECY_EXAMPLES", "2")),
    deadline=None,
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.generate),  # no shrinking: an example is a game over HTTP
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    print_blob=False,
)


def _script(game: SeatGame, rounds: int, rng: random.Random) -> None:
    """Random rounds (``rng`` chooses, uniformly: hypothesis' own draws lean hard on the
    first choice): a run of commands, the rest of the deal, a leave, a return, a seat given,
    a timeout; each kind of move once before any twice, as far as the game allows (a change
    of seat first, mostly). A change
    of seat may happen while the streams of the people it concerns, and an anonymous one,
    are open; a few commands follow it. After each round, the people it concerned and a few
    others read every route; at the end everybody reads every route of every deal."""
    done: set[str] = set()
    for _ in range(rounds):
        if game.table_now().status != PLAYING:
            break
        options: dict[str, list[Any]] = {"play": [None]}
        if game.deal().state.phase != OVER:
            options["finish the deal"] = [None]
        options["leave"] = game.present()
        options["back"] = [name for _seat, name in game.away()]
        host_seat = game.table_now().seats.index("ann")
        options["give"] = [
            (seat, name)
            for seat, _p in game.away()
            if seat != host_seat
            for name in game.unseated()
        ]
        seat = game.timeout_seat()
        options["timeout"] = [] if seat is None else [seat]
        kinds = sorted(k for k, v in options.items() if v)
        new = [k for k in kinds if k not in done]
        changes = [k for k in new if k in CHANGES]
        kind = rng.choice(changes if changes and rng.random() < 0.75 else new or kinds)
        done.add(kind)
        arg = rng.choice(options[kind])
        concerned: list[str | None] = []
        if kind == "play":
            game.play(rng.randint(1, 40))
        elif kind == "finish the deal":
            game.play(5000)
        else:
            concerned = _concerned(game, kind, arg)
            with game.watching([*concerned, None] if rng.random() < 0.5 else []):
                if kind == "leave":
                    game.leave(arg)
                elif kind == "back":
                    game.take_back(arg)
                elif kind == "give":
                    game.give(*arg)
                else:
                    game.time_out(arg)
                game.play(rng.randint(0, 8))
        game.sweep(focus=[*concerned, None])
    game.play(rng.randint(0, 30))
    game.sweep(every_deal=True)


def _concerned(game: SeatGame, kind: str, arg: Any) -> list[str | None]:
    """The people a change of seat concerns: who leaves or comes back; who is given the seat
    and who had it; the player whose turn times out."""
    if kind in ("leave", "back"):
        return [arg]
    table = game.table_now()
    if kind == "give":
        seat, name = arg
        return [name, table.seats[seat]]
    return [table.seats[arg]]


def play_example(
    entry: str,
    players: int,
    *,
    seed: int,
    clock: bool,
    missed_limit: int,
    rounds: int,
    logs: LogWatch | None = None,
) -> SeatGame:
    """One example of the property: a failure's message names its arguments, and this
    plays the same game again (the server's chance and every choice follow from ``seed``)."""
    with tempfile.TemporaryDirectory() as tmp:
        store = os.environ.get("CANASTA_SEAT_SECRECY_STORE", "memory")
        config = Settings(
            database_url=None if store == "sqlite" else "memory",
            data_dir=Path(tmp),
            run_bots=False,  # the test plays the bots' and the turn clock's part itself
            auditors=[AUDITOR],
        )
        with TestClient(create_app(config)) as client:
            canasta: CanastaApp = client.app.state.canasta  # type: ignore[attr-defined]
            canasta.random = SeededRandom(random.Random(seed))
            game = SeatGame(client, entry, players, clock, random.Random(seed), logs=logs)
            if logs is not None:
                logs.take()  # what an example before this one logged
            game.example = (
                f"play_example({entry!r}, {players}, seed={seed}, clock={clock}, "
                f"missed_limit={missed_limit}, rounds={rounds})"
            )
            game.start(missed_limit)
            try:
                _script(game, rounds, random.Random(seed + 1))
            finally:
                if currently_in_test_context():  # hypothesis shows it with a failure
                    note(f"{game.example}: " + "; ".join(game.log))
            return game


@pytest.mark.parametrize(("entry", "players"), CONFIGS, ids=[f"{e}-{n}p" for e, n in CONFIGS])
@SEAT_SECRECY_SETTINGS
@given(
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    clock=st.booleans(),
    missed_limit=st.sampled_from([1, 2]),
    rounds=st.integers(min_value=5, max_value=9),
)
def test_no_route_shows_a_viewer_a_card_of_a_seat_he_did_not_play_then(
    log_watch: LogWatch,
    entry: str,
    players: int,
    seed: int,
    clock: bool,
    missed_limit: int,
    rounds: int,
) -> None:
    game = play_example(
        entry,
        players,
        seed=seed,
        clock=clock,
        missed_limit=missed_limit,
        rounds=rounds,
        logs=log_watch,
    )
    assert game.sweeps >= 2 and game.requests > 0
    assert game.log_lines > 0, "no log record was captured: is caplog attached?"
    for what in ("left", "took his seat back", "given", "timed out", "took seat"):
        if any(what in line for line in game.log):
            event(what)
