"""Clients racing commands on the same deals over HTTP (R-CMD-1, R-HIST-1).

At every step of a deal, several clients are released together (a barrier) and each sends a
command at once: the player to act under three new sequence numbers, a retry of one of them
(same number, same body), and another seated player who is not to act. Exactly one command
may be applied per step (200); the others are refused as stale or out of sequence (409) or by
the rules (400); a racing retry of the winner may get the winner's first answer back
(200, ``replayed``). Two tables race at once; on PostgreSQL, two uvicorn workers serve the
requests. Afterwards, every deal's stream has consecutive steps with no gap or duplicate, every
applied command is in exactly one sender's command log, and a replay from scratch (new
application, cold cache) equals what the server shows live, and the server's read models
(projections) equal a rebuild from scratch.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from domain.command_log import command_log_id
from domain.legal import seat_to_act
from projections.visibility import Viewer, deal_view
from tests.e2e.checks import (
    check_read_models_equal_a_rebuild,
    check_replay_equals_live,
    check_stream,
    cold_app,
)
from tests.e2e.client import JSON, Api, Game, Player, choose_command, command_body, expectation
from tests.e2e.conftest import Backend

TABLES = 2  # deals raced at the same time
NEW_SEQS = 3  # new sequence numbers the player to act sends the same command under
BARRIER_SECONDS = 30.0


@dataclass
class Shot:
    """One racing request and its answer."""

    who: str  # "right" (the player to act), "retry" (his repeated request), "wrong"
    player: Player
    request: JSON
    status: int = 0
    answer: Any = None


def fire(apis: list[Api], deal_id: str, shots: list[Shot]) -> None:
    """Send every shot at once, one thread each, released by a barrier."""
    barrier = threading.Barrier(len(shots))

    def one(api: Api, shot: Shot) -> None:
        barrier.wait(timeout=BARRIER_SECONDS)
        response = api.send(deal_id, shot.player, shot.request)
        shot.status = response.status_code
        shot.answer = response.json()

    with ThreadPoolExecutor(max_workers=len(shots)) as pool:
        for future in [pool.submit(one, api, shot) for api, shot in zip(apis, shots, strict=False)]:
            future.result()


def race_round(game: Game, apis: list[Api], deal_id: str) -> Shot | None:
    """One step raced by every client; returns the applied shot (None: the deal is over)."""
    deal = game.shadow.get_deal(UUID(deal_id))
    seat = seat_to_act(deal.state)
    if seat is None:
        return None
    right = game.seats[seat]
    wrong = next(p for i, p in enumerate(game.seats) if i != seat and i in deal.state.order)
    body = command_body(choose_command(deal.state, seat, game.rng))
    expect = expectation(deal)
    seqs = [right.next_seq() for _ in range(NEW_SEQS)]
    shots = [Shot("right", right, {"seq": s, "expect": expect, "command": body}) for s in seqs]
    shots.append(Shot("retry", right, dict(shots[0].request)))
    wrong_request = {"seq": wrong.next_seq(), "expect": expect, "command": body}
    shots.append(Shot("wrong", wrong, wrong_request))
    fire(apis, deal_id, shots)

    applied = [s for s in shots if s.status == 200 and not s.answer["replayed"]]
    where = f"{game.label} step {expect['step']}: " + "; ".join(
        f"{s.who} seq {s.request['seq']} -> {s.status} {s.answer}" for s in shots
    )
    assert len(applied) == 1, "exactly one command per step must be applied: " + where
    winner = applied[0]
    assert winner.who in ("right", "retry"), where
    for shot in shots:
        if shot is winner:
            continue
        if shot.status == 200:
            # Only a repeat of the winner's own request may get its first answer back.
            assert shot.answer["replayed"] and shot.request == winner.request, where
            assert shot.answer["step"] == winner.answer["step"], where
        else:
            assert shot.status in (400, 409), where
            if shot.status == 409:  # stale, a used seq, or the store refused the save
                assert shot.answer["error"]["code"] in ("R-CMD-1", "race_lost"), where
    # The step advanced exactly by the winner's events, and nothing else was recorded.
    after = game.shadow.get_deal(UUID(deal_id))
    assert after.version == winner.answer["step"], where
    assert [e["step"] for e in winner.answer["events"]] == list(
        range(expect["step"] + 1, after.version + 1)
    ), where
    return winner


def check_command_logs(backend: Backend, game: Game, deal_id: str, winners: list[Shot]) -> None:
    """Every applied command is in its sender's log exactly once with its first answer, and
    the applied commands together account for every event after the deal's start."""
    app = cold_app(backend.settings)
    try:
        accepted: dict[int, tuple[str, int]] = {}  # step -> (player, seq)
        for player in game.seats:
            log_id = command_log_id(game.table_id, player.name)
            logged: list[Any] = list(app.events.get(log_id))
            for event in logged:
                if type(event).__name__ != "Answered" or event.status != 200:
                    continue
                for shown in event.body["events"]:
                    assert shown["step"] not in accepted, f"step {shown['step']} applied twice"
                    accepted[shown["step"]] = (player.name, event.seq)
        events = check_stream(app, deal_id)
    finally:
        app.close()
    first_command_step = min(accepted)
    assert sorted(accepted) == list(range(first_command_step, len(events) + 1))
    assert {(w.player.name, w.request["seq"]) for w in winners} == set(accepted.values())


def check_views_equal_replay(backend: Backend, game: Game, apis: list[Api], deal_id: str) -> None:
    """What every process serves (requests spread over the workers) equals a replay from
    scratch, for a spectator and for each seated player."""
    app = cold_app(backend.settings)
    try:
        rebuilt = app.get_deal(UUID(deal_id))
    finally:
        app.close()
    check_replay_equals_live(backend.settings, deal_id, game.shadow.get_deal(UUID(deal_id)))
    extra = {"id": deal_id, "table": game.table_id, "step": rebuilt.version}
    spectator = {**deal_view(rebuilt.state, Viewer.spectator()), **extra}
    for api in apis:
        assert api.deal(deal_id) == spectator
    for seat, player in enumerate(game.seats):
        if seat in rebuilt.state.order:
            mine = {**deal_view(rebuilt.state, Viewer.player(seat)), **extra}
            assert apis[seat % len(apis)].deal(deal_id, player) == mine


def race_one_deal(backend: Backend, index: int) -> None:
    racers = NEW_SEQS + 2
    apis = [backend.api() for _ in range(racers)]
    game = Game(apis[0], backend.shadow(), seed=index, prefix=f"race{index}p")
    game.set_up()
    deal_id = game.start()
    winners = []
    while (winner := race_round(game, apis, deal_id)) is not None:
        winners.append(winner)
    check_command_logs(backend, game, deal_id, winners)
    check_views_equal_replay(backend, game, apis, deal_id)


def test_racing_clients_get_exactly_one_command_applied_per_step_r_cmd_1(
    backend: Backend,
) -> None:
    with ThreadPoolExecutor(max_workers=TABLES) as pool:
        for future in [pool.submit(race_one_deal, backend, i) for i in range(TABLES)]:
            future.result()
    check_read_models_equal_a_rebuild(backend.server, backend.settings)
