"""Writers racing on one deal (R-CMD-1, R-HIST-1).

``CanastaApp.act`` loads the deal, decides and saves all the command's events in one
transaction. When several writers act on the same deal at the same step, exactly one command
may be recorded; every other one must be refused as a conflict (``domain.errors.Conflict``:
code ``race_lost`` when the store refused its save, R-CMD-1 when its ``expected_step`` was
already stale) with nothing recorded, and the stream must stay gapless and duplicate-free.

Two ways of racing are used, both with real threads:

- ``gate``: each writer's application waits at a barrier between deciding and saving, so every
  writer has loaded the deal at the same version before any of them writes: the store itself
  must refuse all but one (the unique (stream, version) key);
- ``step``: plain applications, released together by a barrier, each command carrying the step
  it was chosen for (``expected_step``, R-CMD-1): a writer that loads after the winner saved is
  refused by the step check, one that loaded before is refused by the store.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from app.application import CanastaApp
from app.autoplay import SeededRandom
from app.settings import Settings, eventsourcing_env
from domain.commands import Answer, Command, Cut, Discard, Draw
from domain.deal import Deal
from domain.errors import Conflict, RuleViolation
from domain.legal import candidates, legal_command, seat_to_act
from domain.rules import decide
from domain.state import ANSWER, CUT, DRAW, OVER, PLAY, DealState
from tests.support.games import play_commands, seated_table
from tests.support.store import fold_stored_events, stored_versions

PLAYERS = ["ann", "bob", "cyd", "dee"]
BARRIER_TIMEOUT = 30  # seconds; a writer stuck longer than this fails the test


class GatedApp(CanastaApp):
    """A ``CanastaApp`` whose saves first wait at ``gate``: used to hold every racing writer
    after it loaded and decided, so that they all write on top of the same version."""

    name = "canasta"  # same tables and settings as the real application
    gate: threading.Barrier | None = None

    def _save(self, *aggregates: Any) -> None:
        gate = self.gate
        if gate is not None:
            gate.wait(timeout=BARRIER_TIMEOUT)
        super()._save(*aggregates)


# --- helpers -----------------------------------------------------------------------------------


def check_stream(app: CanastaApp, deal_id: UUID, length: int) -> None:
    """No gap and no duplicate: the stream's versions are exactly 1..length."""
    versions = stored_versions(app, deal_id)
    assert versions == list(range(1, length + 1)), (
        f"stored versions are not 1..{length}: {versions[:3]}...{versions[-3:]} "
        f"({len(versions)} events, {len(set(versions))} distinct)"
    )


def is_legal(st: DealState, seat: int, command: Command) -> bool:
    try:
        decide(st, seat, command)
    except RuleViolation:
        return False
    return True


def distinct_legal_commands(
    st: DealState, seat: int, rng: random.Random, count: int
) -> list[Command] | None:
    """``count`` different legal commands for ``seat``, or None if there are not that many."""
    pool: list[Command] = []
    if st.phase == CUT:
        pool = [Cut(n) for n in rng.sample(range(1, len(st.deck)), count)]
    elif st.phase == ANSWER:
        pool = [Answer(True), Answer(False)]
    elif st.phase == DRAW:
        pool = [Draw(), *candidates(st, seat, rng)]
    elif st.phase == PLAY:
        pool = [*candidates(st, seat, rng), *(Discard(c) for c in st.hands[seat])]
    found: list[Command] = []
    for command in pool:
        if command not in found and is_legal(st, seat, command):
            found.append(command)
    if len(found) < count:
        return None
    rng.shuffle(found)
    return found[:count]


@dataclass
class Outcome:
    winners: list[tuple[int, Command, Deal]] = field(default_factory=list)
    conflicts: list[tuple[int, Command, Conflict]] = field(default_factory=list)
    others: list[tuple[int, Command, BaseException]] = field(default_factory=list)


def race(
    apps: Sequence[CanastaApp],
    deal_id: UUID,
    player: str,
    commands: Sequence[Command],
    *,
    expected_step: int | None,
    gate: bool,
) -> Outcome:
    """Writer i sends ``commands[i]`` through ``apps[i]`` in its own thread, all at once."""
    n = len(commands)
    start = threading.Barrier(n)
    save_gate = threading.Barrier(n) if gate else None
    for app in apps:
        if isinstance(app, GatedApp):
            app.gate = save_gate
    outcome = Outcome()
    lock = threading.Lock()

    def writer(i: int) -> None:
        command = commands[i]
        try:
            start.wait(timeout=BARRIER_TIMEOUT)
            deal = apps[i].act(deal_id, player, command, expected_step=expected_step)
        except Conflict as exc:
            with lock:
                outcome.conflicts.append((i, command, exc))
        except BaseException as exc:
            if save_gate is not None:
                save_gate.abort()  # never leave the other writers waiting
            with lock:
                outcome.others.append((i, command, exc))
        else:
            with lock:
                outcome.winners.append((i, command, deal))

    threads = [threading.Thread(target=writer, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=2 * BARRIER_TIMEOUT)
        assert not t.is_alive(), "a racing writer hung"
    for app in apps:
        if isinstance(app, GatedApp):
            app.gate = None
    return outcome


def check_race(
    outcome: Outcome, apps: Sequence[CanastaApp], deal_id: UUID, version_before: int
) -> Deal:
    """Exactly one winner; everyone else refused as a lost race (the store refused the save)
    or, having loaded after the winner saved, as stale (R-CMD-1); the stream holds exactly
    the winner's events; every application sees the winner's state."""
    assert not outcome.others, f"writers failed with something else than Conflict: {outcome.others}"
    assert len(outcome.winners) == 1, (
        f"{len(outcome.winners)} writers succeeded on step {version_before}: "
        f"{[(i, c) for i, c, _ in outcome.winners]}"
    )
    _, _, won = outcome.winners[0]
    assert len(outcome.conflicts) == len(apps) - 1
    for _, _, exc in outcome.conflicts:
        assert exc.code in ("race_lost", "R-CMD-1"), exc
    assert won.version > version_before
    for app in apps:
        check_stream(app, deal_id, won.version)
        seen = app.get_deal(deal_id)
        assert seen.version == won.version
        assert seen.state == won.state
    return won


def new_game(app: CanastaApp, entry: str = "classic", players: int = 4) -> UUID:
    return app.start_game(seated_table(app, PLAYERS[:players], entry), PLAYERS[0])


def play_rounds(
    apps: Sequence[CanastaApp],
    deal_id: UUID,
    rng: random.Random,
    rounds: int,
    pick: Callable[[DealState, int], list[Command] | None],
    modes: Sequence[str],
) -> dict[str, int]:
    """Race ``rounds`` times on the deal, advancing it a little in between. Returns how many
    losers were refused by the store and how many by the step check."""
    refusals = {"store": 0, "step": 0}
    raced = 0
    attempts = 0
    while raced < rounds:
        attempts += 1
        assert attempts < 50 * rounds, "could not find positions to race on"
        deal = apps[0].get_deal(deal_id)
        if deal.state.phase == OVER:
            pytest.fail("the deal ended before the races were done; pick another seed")
        seat = seat_to_act(deal.state)
        assert seat is not None
        commands = pick(deal.state, seat)
        if commands is None:  # e.g. only Draw is possible: move on one step
            play_commands(apps[0], deal_id, rng, 1)
            continue
        mode = modes[raced % len(modes)]
        version = deal.version
        events_before = len(stored_versions(apps[0], deal_id))
        assert events_before == version
        outcome = race(
            apps,
            deal_id,
            PLAYERS[seat],
            commands,
            expected_step=version if mode == "step" else None,
            gate=mode == "gate",
        )
        won = check_race(outcome, apps, deal_id, version)
        assert len(stored_versions(apps[0], deal_id)) == events_before + (won.version - version)
        for _, _, exc in outcome.conflicts:
            assert (exc.code == "R-CMD-1") == ("step" in exc.message), exc
            refusals["step" if exc.code == "R-CMD-1" else "store"] += 1
        if mode == "gate":  # every writer had loaded the same version: the store refused
            assert all(exc.code == "race_lost" for _, _, exc in outcome.conflicts)
        raced += 1
        if rng.random() < 0.5:
            play_commands(apps[0], deal_id, rng, rng.randint(1, 3))
    return refusals


def check_expected_step_mismatch(app: CanastaApp, deal_id: UUID, rng: random.Random) -> None:
    """R-CMD-1: a command sent for another step is refused and records nothing."""
    deal = app.get_deal(deal_id)
    seat = seat_to_act(deal.state)
    assert seat is not None
    command = legal_command(deal.state, seat, rng)
    before = stored_versions(app, deal_id)
    for wrong in (deal.version - 1, deal.version + 1, 0):
        with pytest.raises(Conflict) as refused:
            app.act(deal_id, PLAYERS[seat], command, expected_step=wrong)
        assert refused.value.code == "R-CMD-1"
        assert stored_versions(app, deal_id) == before
        assert app.get_deal(deal_id).state == deal.state
    # The same command with the right step is accepted.
    after = app.act(deal_id, PLAYERS[seat], command, expected_step=deal.version)
    assert after.version > deal.version
    check_stream(app, deal_id, after.version)


# --- SQLite: two applications on one file ----------------------------------------------------


def sqlite_env(tmp_path: Path) -> dict[str, str]:
    env = eventsourcing_env(Settings(data_dir=tmp_path, aggregate_cache_maxsize=100))
    for key in ("AGGREGATE_CACHE_FASTFORWARD", "CANASTA_AGGREGATE_CACHE_FASTFORWARD"):
        env[key] = "y"
    assert env["CANASTA_AGGREGATE_CACHE_MAXSIZE"] == "100"
    return env


@contextmanager
def sqlite_apps(tmp_path: Path, count: int, seed: int) -> Iterator[list[GatedApp]]:
    env = sqlite_env(tmp_path)
    apps = [
        GatedApp(env=env, random=SeededRandom(random.Random(f"app:{seed}"))) for _ in range(count)
    ]
    try:
        yield apps
    finally:
        for app in apps:
            app.close()


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_sqlite_two_writers_one_wins_the_other_gets_a_conflict(tmp_path: Path, seed: int) -> None:
    """Two applications on one SQLite file race two different legal commands for the seat to
    act (e.g. draw vs take the pile, two discards, two cuts, yes vs no): exactly one is
    recorded, the other is refused with R-CMD-1, and both applications then agree."""
    rng = random.Random(f"players:{seed}")
    with sqlite_apps(tmp_path, 2, seed) as apps:
        deal_id = new_game(apps[0])
        for app in apps:  # both cache the deal at the same version (fast-forward on)
            assert app.get_deal(deal_id).version == apps[0].get_deal(deal_id).version

        def pick(st: DealState, seat: int) -> list[Command] | None:
            return distinct_legal_commands(st, seat, rng, 2)

        refusals = play_rounds(apps, deal_id, rng, rounds=8, pick=pick, modes=["gate", "step"])
        assert refusals["store"] >= 4  # every gated round was refused by the store
        check_expected_step_mismatch(apps[1], deal_id, rng)

        final = apps[1].get_deal(deal_id)
        assert apps[0].get_deal(deal_id).state == final.state
        env = sqlite_env(tmp_path)
    fresh = CanastaApp(env=env)
    try:
        assert fresh.get_deal(deal_id).state == final.state
        assert fold_stored_events(fresh, deal_id).state == final.state
        check_stream(fresh, deal_id, final.version)
    finally:
        fresh.close()


def test_sqlite_draw_against_take_pile(tmp_path: Path) -> None:
    """The classic race: one writer draws, the other takes the pile, for the same seat."""
    with sqlite_apps(tmp_path, 2, 7) as apps:
        found = 0
        for seed in range(200):
            rng = random.Random(f"players:{seed}")
            deal_id = new_game(apps[0])
            deal = apps[0].get_deal(deal_id)
            while deal.state.phase != OVER and found < 3:
                seat = seat_to_act(deal.state)
                assert seat is not None
                if deal.state.phase == DRAW:
                    takes = [
                        c
                        for c in candidates(deal.state, seat, rng)
                        if type(c).__name__ == "TakePile" and is_legal(deal.state, seat, c)
                    ]
                    if takes and is_legal(deal.state, seat, Draw()):
                        for app in apps:  # both load the same version into their caches
                            assert app.get_deal(deal_id).version == deal.version
                        outcome = race(
                            apps,
                            deal_id,
                            PLAYERS[seat],
                            [Draw(), takes[0]],
                            expected_step=None,
                            gate=True,
                        )
                        check_race(outcome, apps, deal_id, deal.version)
                        found += 1
                deal = play_commands(apps[0], deal_id, rng, 1)
            if found >= 3:
                break
        assert found >= 3, "no position where both drawing and taking the pile are legal"


# --- PostgreSQL: many writers ----------------------------------------------------------------

WRITERS = 8


@contextmanager
def postgres_apps(url: str, count: int, seed: int, shared: bool) -> Iterator[list[GatedApp]]:
    if shared:  # one application used by every thread (one process, one cache)
        env = eventsourcing_env(Settings(database_url=url, postgres_pool_size=count + 2))
        app = GatedApp(env=env, random=SeededRandom(random.Random(f"app:{seed}")))
        apps = [app] * count
        opened = [app]
    else:  # one application per writer (like separate server processes)
        env = eventsourcing_env(Settings(database_url=url, postgres_pool_size=2))
        opened = [
            GatedApp(env=env, random=SeededRandom(random.Random(f"app:{seed}")))
            for _ in range(count)
        ]
        apps = opened
    try:
        yield apps
    finally:
        for app in opened:
            app.close()


@pytest.mark.postgres
@pytest.mark.parametrize("shared", [False, True], ids=["app-per-writer", "one-shared-app"])
def test_postgres_many_writers_exactly_one_wins(migrated_postgres_url: str, shared: bool) -> None:
    """N writers race the seat to act's command on one deal, round after round: exactly one
    command per round is recorded, the others are refused with R-CMD-1, the stream holds exactly
    the winners' events, and a fresh application rebuilds the same state."""
    url = migrated_postgres_url
    rng = random.Random("players:postgres")
    with postgres_apps(url, WRITERS, 5, shared) as apps:
        deal_id = new_game(apps[0])
        for app in apps:
            app.get_deal(deal_id)  # every cache holds the deal

        def pick(st: DealState, seat: int) -> list[Command] | None:
            # Each writer picks its own legal command for the seat (they may coincide).
            return [legal_command(st, seat, random.Random(rng.random())) for _ in apps]

        start_version = apps[0].get_deal(deal_id).version
        refusals = play_rounds(apps, deal_id, rng, rounds=6, pick=pick, modes=["gate", "step"])
        assert refusals["store"] >= 3 * (WRITERS - 1)
        check_expected_step_mismatch(apps[-1], deal_id, rng)
        final = apps[-1].get_deal(deal_id)
        assert final.version > start_version
        for app in apps:
            assert app.get_deal(deal_id).state == final.state

    env = eventsourcing_env(Settings(database_url=url, postgres_pool_size=2))
    fresh = CanastaApp(env=env)
    try:
        rebuilt = fresh.get_deal(deal_id)
        assert rebuilt.version == final.version
        assert rebuilt.state == final.state
        assert fold_stored_events(fresh, deal_id).state == final.state
        check_stream(fresh, deal_id, final.version)
    finally:
        fresh.close()


@pytest.mark.postgres
def test_postgres_expected_step_mismatch_records_nothing(migrated_postgres_url: str) -> None:
    env = eventsourcing_env(Settings(database_url=migrated_postgres_url, postgres_pool_size=2))
    app = CanastaApp(env=env, random=SeededRandom(random.Random("app:3")))
    try:
        rng = random.Random("players:mismatch")
        deal_id = new_game(app)
        play_commands(app, deal_id, rng, 5)
        check_expected_step_mismatch(app, deal_id, rng)
    finally:
        app.close()
