"""Group commit (``app.infra.group_commit``): commands saved together, conflicts kept apart.

Commands whose saves arrive while a transaction is being written are saved together in the
next one. A batch that holds a losing command must not take the others down with it: each
command is then saved on its own, the loser alone is refused (R-CMD-1), and no command's
events are ever split or stored twice.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from app.application import CanastaApp
from app.autoplay import HOST, SeededRandom, new_table
from app.infra.group_commit import Pending
from app.settings import Settings, eventsourcing_env
from domain.errors import Conflict, RuleViolation
from domain.legal import candidates, seat_to_act
from domain.rules import decide
from tests.support.waiting import wait_for

TIMEOUT = 30.0


class HeldApp(CanastaApp):
    """Records each transaction's size; the first one waits until ``release`` is set."""

    name = "canasta"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sizes: list[int] = []  # transactions written, by number of commands
        self.failed: list[int] = []  # transactions refused by the store
        self.hold = False
        self.holding = threading.Event()
        self.release = threading.Event()

    def _record_batch(self, batch: Sequence[Pending], **kwargs: Any) -> Any:
        if self.hold:
            self.hold = False
            self.holding.set()
            assert self.release.wait(TIMEOUT)
        try:
            recorded = super()._record_batch(batch, **kwargs)
        except Exception:
            self.failed.append(len(batch))
            raise
        self.sizes.append(len(batch))
        return recorded


@pytest.fixture(params=["sqlite", "postgres"])
def app(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HeldApp]:
    if request.param == "sqlite":
        settings = Settings(data_dir=tmp_path)
    else:
        settings = Settings(database_url=request.getfixturevalue("migrated_postgres_url"))
    held = HeldApp(env=eventsourcing_env(settings), random=SeededRandom(5))
    try:
        yield held
    finally:
        held.close()


def queued(app: CanastaApp) -> int:
    assert app.group_commit is not None
    with app.group_commit._cond:
        return len(app.group_commit._pending)


def legal(deal: Any, seat: int, command: Any) -> bool:
    try:
        decide(deal.state, seat, command)
    except RuleViolation:
        return False
    return True


def two_legal_commands(app: CanastaApp, deal_id: UUID) -> tuple[str, list[Any]]:
    """The acting player and two different legal commands of his (play on until the
    position offers two)."""
    rng = random.Random(1)
    while True:
        deal = app.get_deal(deal_id)
        seat = seat_to_act(deal.state)
        assert seat is not None
        options = [c for c in candidates(deal.state, seat, rng) if legal(deal, seat, c)]
        if len(options) >= 2:
            return deal.state.player_ids[seat], options[:2]
        app.act(deal_id, deal.state.player_ids[seat], options[0])


def test_a_conflict_in_a_batch_refuses_only_the_loser(app: HeldApp) -> None:
    deals = [app.start_game(new_table(app, "classic", 4), HOST) for _ in range(4)]
    moves = [two_legal_commands(app, deal_id) for deal_id in deals]
    versions = {deal_id: app.get_deal(deal_id).version for deal_id in deals}
    # A first save occupies the committer; everything sent meanwhile is queued behind it.
    app.hold = True
    opener = threading.Thread(target=app.register, args=("opener",))  # one save
    opener.start()
    assert app.holding.wait(TIMEOUT)
    sizes_before = len(app.sizes)
    results: dict[tuple[int, int], str] = {}

    def send(game: int, option: int) -> None:
        player, options = moves[game]
        try:
            app.act(deals[game], player, options[option], expected_step=versions[deals[game]])
            results[game, option] = "accepted"
        except Conflict as refusal:
            results[game, option] = refusal.code

    # One command in each of games 1-3, and two rival commands in game 0.
    senders = [threading.Thread(target=send, args=(g, 0)) for g in range(4)]
    senders.append(threading.Thread(target=send, args=(0, 1)))
    for t in senders:
        t.start()
    wait_for(lambda: queued(app) == 5, TIMEOUT)
    app.release.set()
    for t in [opener, *senders]:
        t.join(TIMEOUT)
    assert sorted(results[g, 0] for g in (1, 2, 3)) == ["accepted"] * 3
    assert sorted((results[0, 0], results[0, 1])) == ["accepted", "race_lost"]
    for deal_id in deals:
        stored = [e.originator_version for e in app.events.get(deal_id)]
        assert stored == list(range(1, len(stored) + 1))  # no gap, no duplicate
        assert len(stored) > versions[deal_id]
        assert app.get_deal(deal_id).version == stored[-1]
    # the five waited together and failed together once; then each was tried alone
    assert app.failed == [5, 1]
    assert app.sizes[sizes_before:] == [1, 1, 1, 1, 1]  # the held save, then four winners


def test_commands_sent_while_a_transaction_is_written_share_the_next_one(app: HeldApp) -> None:
    deals = [app.start_game(new_table(app, "classic", 4), HOST) for _ in range(6)]
    moves = [two_legal_commands(app, deal_id) for deal_id in deals]
    app.hold = True
    opener = threading.Thread(target=app.register, args=("opener",))  # one save
    opener.start()
    assert app.holding.wait(TIMEOUT)
    sizes_before = len(app.sizes)
    senders = [
        threading.Thread(target=app.act, args=(deal_id, player, options[0]))
        for deal_id, (player, options) in zip(deals, moves, strict=True)
    ]
    for t in senders:
        t.start()
    wait_for(lambda: queued(app) == 6, TIMEOUT)
    app.release.set()
    for t in [opener, *senders]:
        t.join(TIMEOUT)
    assert app.sizes[sizes_before:] == [1, 6]  # the held save, then all six at once


def test_a_closed_application_refuses_to_save(tmp_path: Path) -> None:
    app = CanastaApp(env=eventsourcing_env(Settings(data_dir=tmp_path)))
    app.close()
    with pytest.raises(RuntimeError, match="closed"):
        app.register("late")


def test_work_after_a_save_sees_only_saved_commands_whose_senders_were_already_answered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``after`` (the finished deals' snapshots) runs once a batch's waiters are woken, with
    the commands that were saved and never a refused one; if it fails, the commands, which
    are durable, still succeed and the failure is logged."""
    from eventsourcing.persistence import IntegrityError

    from app.infra.group_commit import GroupCommit

    calls: list[tuple[list[str], bool]] = []
    fail_after = threading.Event()

    def record(batch: Sequence[Pending]) -> None:
        if any("loser" in p.events for p in batch):
            raise IntegrityError("version taken")

    def after(saved: Sequence[Pending]) -> None:
        calls.append(([p.events[0] for p in saved], all(p.done.is_set() for p in saved)))
        if fail_after.is_set():
            raise RuntimeError("snapshot store down")

    commit = GroupCommit(record, max_batch=8, after=after)
    try:
        commit.save_pending(Pending(["alone"], {}))
        assert calls == [(["alone"], True)]

        # a batch with a loser: each command alone, after() for the winners only
        calls.clear()
        batch = [Pending([name], {}) for name in ("a", "loser", "b")]
        commit._commit(batch)
        assert [p.error is None for p in batch] == [True, False, True]
        assert calls == [(["a", "b"], True)]

        # after() fails: logged, the command is still saved and answered
        calls.clear()
        fail_after.set()
        with caplog.at_level("ERROR", logger="app.infra.group_commit"):
            commit.save_pending(Pending(["c"], {}))
        assert calls == [(["c"], True)]
        assert "after saving 1 commands" in caplog.text
    finally:
        commit.close()


def test_coroutines_saved_together_are_woken_with_one_hand_off_per_event_loop() -> None:
    """Commands awaited by coroutines (``save_async``, the command lane's path) and saved in
    one transaction are woken by one ``call_soon_threadsafe`` per event loop, not one per
    command; each gets its own outcome, a conflicting one its ``IntegrityError``."""
    import asyncio

    from eventsourcing.persistence import IntegrityError

    from app.infra.group_commit import GroupCommit

    hold, release = threading.Event(), threading.Event()
    sizes: list[int] = []

    def record(batch: Sequence[Pending]) -> None:
        if hold.is_set():
            hold.clear()
            assert release.wait(TIMEOUT)
        sizes.append(len(batch))
        if any("loser" in p.events for p in batch):
            raise IntegrityError("version taken")

    commit = GroupCommit(record, max_batch=8)
    loop = asyncio.new_event_loop()
    hand_offs = 0
    call_soon_threadsafe = loop.call_soon_threadsafe

    def counted(callback: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal hand_offs
        if callback.__module__ == GroupCommit.__module__:  # not the executor's hand-offs
            hand_offs += 1
        return call_soon_threadsafe(callback, *args, **kwargs)

    loop.call_soon_threadsafe = counted  # type: ignore[method-assign,assignment]

    async def save(name: str) -> str:
        try:
            await commit.save_async(Pending([name], {}))
        except IntegrityError:
            return f"{name}: refused"
        return f"{name}: saved"

    def release_when_queued(count: int) -> None:
        wait_for(lambda: len(commit._pending) == count, TIMEOUT)
        release.set()

    async def saved_together(names: Sequence[str]) -> list[str]:
        """Hold a transaction, queue ``names`` behind it, then let them all go."""
        release.clear()
        hold.set()
        held = loop.run_in_executor(None, commit.save_pending, Pending(["held"], {}))
        await asyncio.to_thread(wait_for, lambda: not hold.is_set())  # the held save began
        releasing = loop.run_in_executor(None, release_when_queued, len(names))
        outcomes = await asyncio.gather(*(save(name) for name in names))
        await held
        await releasing
        return list(outcomes)

    try:
        outcomes = loop.run_until_complete(saved_together("abcd"))
        assert outcomes == [f"{n}: saved" for n in "abcd"]
        assert sizes == [1, 4]  # the held save, then the four coroutines' commands at once
        assert hand_offs == 1  # one wake-up of the loop for the four

        sizes.clear()
        hand_offs = 0
        outcomes = loop.run_until_complete(saved_together(["e", "loser", "f"]))
        assert outcomes == ["e: saved", "loser: refused", "f: saved"]
        assert sizes == [1, 3, 1, 1, 1]  # the batch failed; each of its commands alone
        assert hand_offs == 3  # then each was answered as soon as it was saved or refused
    finally:
        commit.close()
        loop.close()
