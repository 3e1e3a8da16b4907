"""Commands decided from a process's cache, checked by the store (R-CMD-1).

``CanastaApp.submit`` (and the HTTP route's fast path, ``submit_cached``) first decides a
command on the deal and the sender's log as this process last saw them, without asking the
store; the save's version check refuses it if another process wrote meanwhile, and the
command is then decided again on the store's state. Any refusal is also re-decided on the
store's state before it is answered. Here two applications share one database, as two
server processes do, and each test makes one of them stale on purpose: every answer must
be the one a single up-to-date server would give, and nothing may be recorded twice.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.persistence import IntegrityError

from app.application import Answer, CanastaApp, Expected
from app.autoplay import HOST, SeededRandom, new_table
from app.settings import Settings, eventsourcing_env
from domain.commands import Command
from domain.deal import Deal
from domain.legal import legal_command, seat_to_act
from tests.support.store import stored_versions


@pytest.fixture(params=["sqlite", "postgres"])
def two_apps(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[CanastaApp, ...]]:
    """Two applications (two "server processes") on one store, each with its own cache."""
    if request.param == "sqlite":
        settings = Settings(data_dir=tmp_path)
    else:
        settings = Settings(database_url=request.getfixturevalue("migrated_postgres_url"))
    env = eventsourcing_env(settings)
    apps = tuple(CanastaApp(env=env, random=SeededRandom(7)) for _ in range(2))
    try:
        yield apps
    finally:
        for app in apps:
            app.close()


class Game:
    """One classic 4-player deal and each player's next sequence number."""

    def __init__(self, app: CanastaApp) -> None:
        table_id = new_table(app, "classic", 4)
        self.deal_id = app.start_game(table_id, HOST)
        self.seqs: dict[str, int] = {}
        self.rng = random.Random(3)

    def next(self, app: CanastaApp) -> tuple[str, int, Command, Expected, Deal]:
        """The acting player's next legal command as the store has the deal now."""
        deal = app.get_deal(self.deal_id)  # a fresh read
        seat = seat_to_act(deal.state)
        assert seat is not None
        player = deal.state.player_ids[seat]
        self.seqs[player] = self.seqs.get(player, 0) + 1
        command = legal_command(deal.state, seat, self.rng)
        return player, self.seqs[player], command, Expected(step=deal.version), deal

    def send(
        self, app: CanastaApp, player: str, seq: int, command: Command, exp: Expected
    ) -> Answer:
        return app.submit(self.deal_id, player, seq, command, exp, f"{player}:{seq}")


def test_a_command_is_accepted_by_a_process_whose_cache_is_behind(
    two_apps: tuple[CanastaApp, CanastaApp],
) -> None:
    a, b = two_apps
    game = Game(a)
    for _ in range(3):  # a caches the deal and the logs
        assert game.send(a, *game.next(a)[:4]).status == 200
    player, seq, command, exp, _ = game.next(b)
    assert game.send(b, player, seq, command, exp).status == 200  # a's copy is now behind
    player, seq, command, exp, before = game.next(b)
    answer = game.send(a, player, seq, command, exp)
    assert answer.status == 200, answer.body
    assert answer.body["step"] > before.version
    versions = stored_versions(a, game.deal_id)
    assert versions == list(range(1, len(versions) + 1))  # no gap, no duplicate
    assert a.get_deal(game.deal_id).version == b.get_deal(game.deal_id).version == versions[-1]


def test_a_stale_expect_that_matches_a_stale_cache_is_refused_and_records_nothing(
    two_apps: tuple[CanastaApp, CanastaApp],
) -> None:
    a, b = two_apps
    game = Game(a)
    assert game.send(a, *game.next(a)[:4]).status == 200
    player, seq, command, exp, _ = game.next(a)  # what a's cache says is next
    assert game.send(b, player, seq, command, exp).status == 200  # b applies it
    versions = stored_versions(a, game.deal_id)
    # The same command again under a new sequence number (a double click), sent to a:
    # its expect matches a's stale copy, not the store.
    answer = game.send(a, player, seq + 1, command, exp)
    assert answer.status == 409, answer.body
    assert answer.body["error"]["code"] == "R-CMD-1"
    assert stored_versions(a, game.deal_id) == versions


def test_a_retry_answered_by_another_process_is_replayed_not_applied_again(
    two_apps: tuple[CanastaApp, CanastaApp],
) -> None:
    a, b = two_apps
    game = Game(a)
    for _ in range(2):
        assert game.send(a, *game.next(a)[:4]).status == 200
    player, seq, command, exp, _ = game.next(a)
    first = game.send(b, player, seq, command, exp)  # b answers; a has not seen it
    assert first.status == 200
    versions = stored_versions(a, game.deal_id)
    again = game.send(a, player, seq, command, exp)
    assert again.replayed and (again.status, again.body) == (first.status, first.body)
    assert stored_versions(a, game.deal_id) == versions


def test_a_command_legal_now_but_not_in_a_stale_cache_is_accepted(
    two_apps: tuple[CanastaApp, CanastaApp],
) -> None:
    """On a's stale copy the next player's command is out of turn; the store says it is
    his turn: the refusal must not be answered from the stale copy."""
    a, b = two_apps
    game = Game(a)
    assert game.send(a, *game.next(a)[:4]).status == 200
    for _ in range(2):
        assert game.send(b, *game.next(b)[:4]).status == 200
    player, seq, command, _, deal = game.next(b)
    answer = game.send(a, player, seq, command, Expected())  # no expectations: rules decide
    assert answer.status == 200, answer.body
    assert answer.body["step"] > deal.version


def test_submit_cached_leaves_to_submit_what_it_cannot_decide_alone(tmp_path: Path) -> None:
    """The event loop's fast path answers only accepted commands and retries; it never
    answers a refusal, and it is never used for what it has not cached."""
    app = CanastaApp(env=eventsourcing_env(Settings(data_dir=tmp_path)), random=SeededRandom(7))
    try:
        game = Game(app)
        player, seq, command, exp, _ = game.next(app)
        # nothing cached for this player's log, and not his first command: left to submit
        assert seq == 1
        assert app.submit_cached(game.deal_id, player, 2, command, exp, "x") is None
        # his first command at the table: its log is new, created here (nothing saved yet)
        fresh = app.submit_cached(game.deal_id, player, seq, command, exp, "x")
        assert fresh is not None and fresh[0].status == 200 and fresh[1] is not None
        assert app.get_deal(game.deal_id).version < fresh[0].body["step"]
        first = game.send(app, player, seq, command, exp)
        assert first.status == 200
        # a retry: the first answer, nothing to save
        retry = app.submit_cached(game.deal_id, player, seq, command, exp, f"{player}:{seq}")
        assert retry is not None and retry[1] is None and retry[0].body == first.body
        # a different command under a used seq: left to submit (which raises the conflict)
        assert app.submit_cached(game.deal_id, player, seq, command, exp, "other") is None
        # a stale expect: left to submit (which answers 409 from the store's state)
        nxt_player, nxt_seq, nxt_command, nxt_exp, _ = game.next(app)
        stale = Expected(step=(nxt_exp.step or 0) - 1)
        assert app.submit_cached(game.deal_id, nxt_player, nxt_seq, nxt_command, stale, "s") is None
        # an accepted command: the answer and its events, saved by save_pending
        fast = app.submit_cached(game.deal_id, nxt_player, nxt_seq, nxt_command, nxt_exp, "n")
        if fast is not None:  # the sender's log is cached once he has sent a command
            answer, pending = fast
            assert answer.status == 200 and pending is not None and pending.events
            app.save_pending(pending)
            assert app.get_deal(game.deal_id).version == answer.body["step"]
    finally:
        app.close()


def as_the_route_does(app: CanastaApp, game: Game, deal_id: UUID) -> tuple[Answer, str]:
    """The acting player's next legal command, sent as ``POST /deals/{id}/commands``
    sends it (``app.routes.deals.send_command``): decided from the cache and saved, or on
    a lost race decided again from the store, or left to ``submit``. Returns the answer
    and which of the three answered ("cache", "store after a race", "submit")."""
    game.deal_id = deal_id
    args = game.next(app)
    player, seq, command, exp, _ = args
    submission = (deal_id, player, seq, command, exp, f"{player}:{seq}")
    fast = app.submit_cached(*submission)
    if fast is None:
        return app.submit(*submission), "submit"
    answer, pending = fast
    if pending is not None:
        try:
            app.save_pending(pending)
        except IntegrityError:
            return app.submit(*submission, fresh_only=True), "store after a race"
    return answer, "cache"


def play_out(app: CanastaApp, game: Game, deal_id: UUID) -> list[tuple[Answer, str]]:
    answers = []
    while seat_to_act(app.get_deal(deal_id).state) is not None:
        answers.append(as_the_route_does(app, game, deal_id))
        assert answers[-1][0].status == 200, answers[-1][0].body
    return answers


def test_the_command_that_ends_a_deal_is_decided_from_the_cache_with_the_table_r_score_1(
    two_apps: tuple[CanastaApp, CanastaApp],
) -> None:
    """The deal's last command records the deal on its table in the same transaction;
    the route's fast path decides it from the cached table too, and a finished deal gets
    its snapshot. A cached table that does not list the deal (another process started
    it) is not used: the command is decided from the store, and the deal is recorded
    once, with the right totals."""
    a, b = two_apps
    game = Game(a)
    table_id = UUID(a.get_deal(game.deal_id).state.table_id)
    first_deal = game.deal_id

    answers = play_out(a, game, first_deal)
    assert answers[-1][1] == "cache"  # a cached the table when it started the game
    finished = a.get_deal(first_deal)
    table = b.get_table(table_id)  # b reads the store
    assert table.deals == [str(first_deal)] and len(table.deal_scores) == 1
    assert table.totals == {
        side: scores["total"] for side, scores in (finished.state.scores or {}).items()
    }
    recorded: list[Any] = [e for e in b.events.get(table_id) if type(e).__name__ == "DealRecorded"]
    assert [(e.deal_id, e.final_link) for e in recorded] == [(str(first_deal), finished.chain)]
    snapshots = list(a.snapshots.get(first_deal)) if a.snapshots is not None else []
    assert [s.originator_version for s in snapshots] == [finished.version]

    # b starts the next deal: a's cached table is now one version behind the store.
    second_deal = b.start_next_deal(table_id, HOST)
    answers = play_out(a, game, second_deal)
    assert answers[-1][1] == "submit"
    assert answers[-2][1] == "cache"  # the rest of the deal was decided from a's cache
    table = b.get_table(table_id)
    assert table.deals == [str(first_deal), str(second_deal)]
    assert len(table.deal_scores) == 2
    versions = [e.originator_version for e in b.events.get(table_id)]
    assert versions == list(range(1, len(versions) + 1))  # no gap, no duplicate
    second = b.get_deal(second_deal)
    assert second.version == stored_versions(b, second_deal)[-1]
    assert a.snapshots is not None
    assert [s.originator_version for s in a.snapshots.get(second_deal)] == [second.version]


def test_a_seq_far_above_a_stale_cached_log_is_decided_on_the_store(
    two_apps: tuple[CanastaApp, CanastaApp],
) -> None:
    """R-CMD-1, ``seq_too_far``: the bound is counted from the sender's last number as the
    store has it. A process whose cached log is behind would refuse a number that is within
    the bound of the real last one; it decides again on the store's log instead."""
    a, b = two_apps
    game = Game(a)
    first, seq, command, exp, _ = game.next(a)
    assert game.send(a, first, seq, command, exp).status == 200  # a caches his log: last 1
    jumps: list[int] = []
    while len(jumps) < 2:
        player, seq, command, exp, _ = game.next(a)
        if player == first:  # 900 above his last: through b, then through a (behind)
            seq = game.seqs[player] = seq + 899
            answer = game.send(b if not jumps else a, player, seq, command, exp)
            assert answer.status == 200, answer.body
            jumps.append(seq)
        else:
            assert game.send(b, player, seq, command, exp).status == 200
    assert jumps == [901, 1801]
    assert a.last_seq(UUID(a.get_deal(game.deal_id).state.table_id), first) == 1801
