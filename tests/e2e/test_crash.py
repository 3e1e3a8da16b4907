"""SIGKILL of the server in the middle of a load, then a restart (R-CMD-1, R-HIST-1).

Several games are played at once over HTTP, each in its own thread, and every request is
journaled before it leaves. When enough commands have been acknowledged, the server's whole
process group (supervisor and workers) is killed with SIGKILL, with requests in flight; it is
then restarted on the same store. Afterwards:

- every acknowledged command is in the store: its events at the steps it answered, and its
  first answer in its sender's command log, which a retry with the same sequence number and
  body gets back (``replayed``);
- no half-command is: each deal's stream has consecutive steps and an unbroken hash chain,
  folds from scratch, and every event after the deal's start belongs to exactly one accepted
  command of one sender's log (a command's events and its log entry are one transaction);
- the requests that got no answer are retried with the same sequence number: each is applied
  exactly once, whether or not it had been recorded before the kill;
- the games go on to their end;
- the server's read models, killed with it, resume where they stopped and catch up exactly
  once: they equal a rebuild from scratch.

The server is set up for tests so that the games can start with side A past the target
(``scores_before``): each game ends with its first deal, which keeps the test short. Each game's
deck and first dealer are fixed too, so that the deals are long enough to reach the kill.
"""

from __future__ import annotations

import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from uuid import UUID

from domain.command_log import KEEP_ANSWERS, command_log_id
from tests.e2e.checks import (
    check_game_over,
    check_read_models_equal_a_rebuild,
    check_stream,
    cold_app,
    fold,
)
from tests.e2e.client import Game, Sent, ServerGone
from tests.e2e.conftest import Backend
from tests.support.games import stacked_deck

GAMES = 3
KILL_AFTER = 120  # acknowledged commands, over all games, before the kill
LOAD_SECONDS = 60.0  # the load must reach KILL_AFTER within this
# Side A starts past the target: the game ends with the deal in which the server is killed,
# whatever that deal scores (R-GAME-1 checks the target after each complete deal).
PAST_TARGET = {"A": 9000, "B": 0}


def crash_deck(index: int) -> list[str]:
    """Game ``index``'s fixed deck. With it (and the first dealer fixed) each game is the same
    every run: its players' choices are seeded too. The three decks make deals of 75, 77 and
    83 commands, so the load always reaches KILL_AFTER with commands still to play; with
    shuffled decks a deal can end within 40 commands and the three could all end first."""
    return stacked_deck(f"crash deck {index}")  # classic: two decks


def drive(game: Game) -> None:
    """Play the game to its end; stop quietly when the server goes away."""
    try:
        game.play()
    except ServerGone:
        return


def acknowledged(games: list[Game]) -> int:
    return sum(1 for game in games for sent in list(game.journal) if sent.status == 200)


def check_acknowledged_are_stored(backend: Backend, game: Game) -> None:
    """Every 200 answer's events are in the deal's stream, and its first answer is in the
    sender's command log."""
    app = cold_app(backend.settings)
    try:
        streams = {deal: check_stream(app, deal) for deal in {s.deal for s in game.journal}}
        logs: dict[str, dict[int, Any]] = {}
        for player in game.seats:
            events: list[Any] = list(app.events.get(command_log_id(game.table_id, player.name)))
            logs[player.name] = {e.seq: e for e in events if type(e).__name__ == "Answered"}
    finally:
        app.close()
    for sent in game.journal:
        if sent.status != 200:
            continue
        assert sent.answer is not None
        stream = streams[sent.deal]
        for shown in sent.answer["events"]:
            stored = stream[shown["step"] - 1]
            assert type(stored).__name__ == shown["kind"], (shown, stored)
        answered = logs[sent.player.name].get(sent.seq)
        assert answered is not None, f"acknowledged seq {sent.seq} of {sent.player.name} lost"
        assert answered.status == 200 and answered.body["step"] == sent.answer["step"]


def check_no_half_command(backend: Backend, game: Game) -> None:
    """Each deal's events after its start are exactly the events of the accepted commands in
    the senders' logs, each once; every logged command was sent by a client (the journal
    says to which deal); a deal is over exactly when the table has recorded its score."""
    sent_to = {(s.player.name, s.seq): s.deal for s in game.journal}
    app = cold_app(backend.settings)
    try:
        covered: dict[str, dict[int, tuple[str, int]]] = defaultdict(dict)
        for player in game.seats:
            logged: list[Any] = list(app.events.get(command_log_id(game.table_id, player.name)))
            for event in logged:
                if type(event).__name__ != "Answered" or event.status != 200:
                    continue
                deal = sent_to.get((player.name, event.seq))
                assert deal is not None, f"{player.name} seq {event.seq} was never sent"
                for shown in event.body["events"]:
                    step = shown["step"]
                    assert step not in covered[deal], f"deal {deal} step {step} applied twice"
                    covered[deal][step] = (player.name, event.seq)
        table = app.get_table(UUID(game.table_id))
        for number, deal_id in enumerate(table.deals, start=1):
            events = check_stream(app, deal_id)
            folded = fold(events)  # the stream folds from scratch
            assert folded.state.number == number
            steps = sorted(covered[deal_id])
            started = steps[0] if steps else len(events) + 1
            assert steps == list(range(started, len(events) + 1)), (
                f"deal {deal_id}: stored events not accounted for by accepted commands"
            )
            for step in steps:
                shown_kind = None
                for sent in game.journal:
                    if sent.deal == deal_id and sent.status == 200 and sent.answer:
                        for shown in sent.answer["events"]:
                            if shown["step"] == step:
                                shown_kind = shown["kind"]
                assert shown_kind in (None, type(events[step - 1]).__name__)
            over = folded.state.phase == "over"
            assert over == (len(table.deal_scores) >= number), "deal and table disagree"
    finally:
        app.close()


def retry_in_doubt(game: Game) -> list[Sent]:
    """Send again, under the same sequence number, every request that got no answer."""
    retried = []
    for sent in [s for s in game.journal if s.status is None]:
        again = game.api.send(sent.deal, sent.player, sent.request)
        assert again.status_code == 200, f"{game.label}: retry of {sent.request}: {again.text}"
        sent.status, sent.answer = 200, {**again.json(), "replayed": False}
        retried.append(sent)
    return retried


def retry_acknowledged(game: Game) -> None:
    """A retry of an acknowledged command gets its first answer back and changes nothing
    (for the answers a sender's log keeps, the last KEEP_ANSWERS)."""
    by_player: dict[str, list[Sent]] = defaultdict(list)
    for sent in game.journal:
        if sent.status == 200:
            by_player[sent.player.name].append(sent)
    for sents in by_player.values():
        for sent in sents[-KEEP_ANSWERS:]:
            before = game.api.deal(sent.deal)["step"]
            again = game.api.send(sent.deal, sent.player, sent.request)
            assert again.status_code == 200, again.text
            assert again.json() == {**(sent.answer or {}), "replayed": True}
            assert game.api.deal(sent.deal)["step"] == before


def test_sigkill_mid_load_keeps_every_acknowledged_command_and_no_half_command_r_hist_1(
    test_mode_backend: Backend,
) -> None:
    backend = test_mode_backend
    games = []
    for index in range(GAMES):
        game = Game(backend.api(), backend.shadow(), seed=index, prefix=f"crash{index}p")
        game.set_up()
        game.start(scores_before=PAST_TARGET, deck=crash_deck(index), dealer=0)
        games.append(game)

    with ThreadPoolExecutor(max_workers=GAMES) as pool:
        futures = [pool.submit(drive, game) for game in games]
        deadline = time.monotonic() + LOAD_SECONDS
        while acknowledged(games) < KILL_AFTER and time.monotonic() < deadline:
            if all(f.done() for f in futures):
                break
            time.sleep(0.005)
        assert acknowledged(games) >= KILL_AFTER, "the load was too slow to reach the kill"
        backend.server.kill()  # SIGKILL to the process group, requests in flight
        for future in futures:
            future.result()
    in_doubt = sum(1 for game in games for sent in game.journal if sent.status is None)

    backend.server.start()
    for game in games:
        check_acknowledged_are_stored(backend, game)
        check_no_half_command(backend, game)
    for game in games:
        retry_in_doubt(game)
        retry_acknowledged(game)
        game.resume()
        check_no_half_command(backend, game)

    with ThreadPoolExecutor(max_workers=GAMES) as pool:
        finished = list(pool.map(lambda game: game.play(), games))
    for game, table in zip(games, finished, strict=True):
        check_game_over(game.api, game, table)
        check_no_half_command(backend, game)
    assert in_doubt <= GAMES  # at most one request per game was in flight at the kill
    # The read models, killed with the server, resumed from their tracking positions.
    check_read_models_equal_a_rebuild(backend.server, backend.settings)
