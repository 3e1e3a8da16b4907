"""The application service: the one way commands reach the aggregates and the store.

The HTTP API, the scenario runner, the demo and the benchmarks all go through
``CanastaApp``. It loads aggregates, lets them decide, and saves every event of a
command in one transaction; a concurrent writer makes the save fail and the command is
refused as a conflict (R-CMD-1) with nothing recorded.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass
from typing import Any, Protocol
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.application import AggregateNotFoundError, Application, ProcessingEvent
from eventsourcing.domain import Snapshot
from eventsourcing.persistence import IntegrityError, JSONTranscoder, Transcoding

from app.infra.group_commit import GroupCommit, Pending
from domain.accounts import Account, Token, account_id, check_name, token_hash, token_id
from domain.command_log import CommandLog, command_log_id
from domain.commands import Command
from domain.deal import Deal
from domain.errors import (
    Conflict,
    DomainError,
    Forbidden,
    NotFound,
    RuleViolation,
    SetupError,
)
from domain.seating import check_first_dealer, rotation_for, side_of_seats
from domain.shuffle import SEED_BYTES, commitment, stacked_commitment
from domain.state import OVER, DealState
from domain.table import Table
from domain.variants import get_variant
from projections.visibility import Viewer, event_view

logger = logging.getLogger(__name__)


class RandomSource(Protocol):
    """Where chance comes from; its results are recorded in events (R-DEAL-1/3)."""

    def seed(self) -> bytes: ...

    def choice(self, seats: Sequence[int]) -> int: ...


class SystemRandom:
    """The operating system's cryptographic random source."""

    def seed(self) -> bytes:
        return secrets.token_bytes(SEED_BYTES)

    def choice(self, seats: Sequence[int]) -> int:
        return seats[secrets.randbelow(len(seats))]


class DealStateAsDict(Transcoding):
    """Lets the event store snapshot a deal's state (plain values inside)."""

    type = DealState
    name = "deal_state"

    def encode(self, obj: DealState) -> dict[str, Any]:
        return obj.to_dict()

    def decode(self, data: dict[str, Any]) -> DealState:
        return DealState.from_dict(data)


def error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


@dataclass(frozen=True)
class Expected:
    """What the sender believes is current (R-CMD-1); None means "not checked"."""

    game: UUID | None = None
    deal: int | None = None
    step: int | None = None
    turn: int | None = None
    phase: str | None = None

    def mismatch(self, deal: Deal) -> str | None:
        st = deal.state
        real = {
            "game": UUID(st.table_id),
            "deal": st.number,
            "step": deal.version,
            "turn": st.turn,
            "phase": st.phase,
        }
        for name, value in real.items():
            believed = getattr(self, name)
            if believed is not None and believed != value:
                return f"stale command: {name} is {value}, not {believed}; reload and retry"
        return None


@dataclass(frozen=True)
class Answer:
    """The first answer to a sequenced command; ``replayed`` on a retry."""

    status: int
    body: dict[str, Any]
    replayed: bool = False


def _fold(aggregate: Any, events: Any) -> Any:
    """Projector for replays: each stored event folds itself into the aggregate.

    Same as the library's ``project_aggregate`` without its per-event runtime protocol
    check, which costs more than the fold itself on Python 3.11.
    """
    for event in events:
        aggregate = event.mutate(aggregate)
    return aggregate


def deal_id_for(table_id: UUID, number: int) -> UUID:
    """Deal ids are derived, so two processes opening the same deal collide in the store."""
    return uuid5(NAMESPACE_URL, f"canasta-ledger:{table_id}:deal:{number}")


#: Environment key (``CANASTA_COMMIT_BATCH_MAX``): most commands saved in one transaction;
#: 1 saves each command in its own transaction, in the calling thread.
COMMIT_BATCH_MAX = "COMMIT_BATCH_MAX"
DEFAULT_COMMIT_BATCH_MAX = 64
#: Environment key (``CANASTA_COMMIT_LINGER_MS``): under load, how long the committer waits
#: for more commands before writing a transaction (0: never waits).
COMMIT_LINGER_MS = "COMMIT_LINGER_MS"
DEFAULT_COMMIT_LINGER_MS = 2.0
#: Tokens whose account name is remembered per process (least recently used dropped).
TOKEN_CACHE_SIZE = 100_000


class CanastaApp(Application[UUID]):
    name = "canasta"
    is_snapshotting_enabled = True  # finished deals are snapshotted (fast game rebuilds)

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        *,
        random: RandomSource | None = None,
        allow_stacked_decks: bool = False,
    ) -> None:
        super().__init__(env=env)
        # The library deep-copies a cached aggregate outside the lock under which another
        # thread may be fast-forwarding that same object; reads of one aggregate id are
        # serialised here so that no thread copies a half-updated aggregate. (Process-local,
        # for the cache only: correctness across processes rests on the store's versions.)
        self._read_locks = [threading.Lock() for _ in range(64)]
        self.random: RandomSource = random or SystemRandom()
        self.allow_stacked_decks = allow_stacked_decks
        # Token hash -> account name. A token's aggregate has one event (Issued) and is never
        # changed, so remembering it in the process is always right (roles are not kept).
        self._token_names: OrderedDict[str, str] = OrderedDict()
        self._token_names_lock = threading.Lock()
        # Commands saved concurrently share a transaction (see app.infra.group_commit).
        batch = int(self.env.get(COMMIT_BATCH_MAX, "") or DEFAULT_COMMIT_BATCH_MAX)
        linger = float(self.env.get(COMMIT_LINGER_MS, "") or DEFAULT_COMMIT_LINGER_MS) / 1000
        self.group_commit: GroupCommit | None = (
            GroupCommit(
                self._record_batch, max_batch=batch, linger=linger, after=self._snapshot_finished
            )
            if batch > 1
            else None
        )

    def close(self) -> None:
        if self.group_commit is not None:
            self.group_commit.close()
        super().close()

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        super().register_transcodings(transcoder)
        transcoder.register(DealStateAsDict())

    # --- tables --------------------------------------------------------------------------
    def create_table(
        self,
        host: str,
        entry: str,
        players: int,
        options: Mapping[str, Any] | None = None,
        target: int | None = None,
    ) -> UUID:
        options = dict(options or {})
        variant = get_variant(entry)
        target = Table.check_setup(entry, players, options, target)
        full_options = variant.table_options(options)
        table: Table = Table(
            host=host, entry=entry, players=players, options=full_options, target=target
        )
        self._commit(table)
        return table.id

    def get_table(self, table_id: UUID) -> Table:
        table = self._get(table_id, None, "table")
        if not isinstance(table, Table):
            raise NotFound(f"no table {table_id}")
        return table

    def join_table(self, table_id: UUID, player: str, seat: int | None = None) -> int:
        table = self.get_table(table_id)
        taken = table.join(player, seat)
        self._save(table)
        return taken

    def choose_teams(self, table_id: UUID, player: str, teams: Sequence[Sequence[int]]) -> None:
        table = self.get_table(table_id)
        table.choose_teams(player, teams)
        self._save(table)

    def start_game(
        self,
        table_id: UUID,
        player: str,
        *,
        dealer: int | None = None,
        scores_before: Mapping[str, int] | None = None,
        deck: Sequence[str] | None = None,
        sit_out: Sequence[int] | None = None,
    ) -> UUID:
        """The host starts the game: the first dealer is drawn and deal 1 is shuffled.

        ``dealer``, ``scores_before``, ``deck`` and ``sit_out`` fix what chance or earlier
        deals would decide; they are accepted only by an application set up for tests.
        """
        table = self.get_table(table_id)
        sides = table.check_can_start(player)
        if scores_before:
            self._check_test_setup("scores_before")
        totals = Table.opening_totals(sides, scores_before)
        variant = get_variant(table.entry)
        rotation = 0
        if sit_out:
            self._check_test_setup("sit_out")
            rotation = rotation_for(sides, sit_out, variant.sit_outs, table.players)
        table.start(sides=sides, totals=totals, rotation=rotation)
        order = table.virtual_table(1)
        if dealer is None:
            first = self.random.choice(order)  # R-DEAL-1
        else:
            self._check_test_setup("dealer")
            check_first_dealer(dealer, order)
            first = dealer
        return self._open_deal(table, 1, first, order, deck)

    def start_next_deal(
        self, table_id: UUID, player: str, *, deck: Sequence[str] | None = None
    ) -> UUID:
        table = self.get_table(table_id)
        number, order, dealer = table.next_deal(player)
        return self._open_deal(table, number, dealer, order, deck)

    def stop_game(self, table_id: UUID, player: str) -> None:
        """R-GAME-2: completed deals stay; the unfinished deal is abandoned, not scored."""
        table = self.get_table(table_id)
        table.stop(player)
        aggregates: list[Table | Deal] = [table]
        if table.deals:
            deal = self.get_deal(UUID(table.deals[-1]))
            deal.abandon()
            aggregates.append(deal)
        self._save(*aggregates)

    def _open_deal(
        self,
        table: Table,
        number: int,
        dealer: int,
        order: list[int],
        deck: Sequence[str] | None,
    ) -> UUID:
        assert table.sides is not None
        variant = get_variant(table.entry)
        deal_id = deal_id_for(table.id, number)
        if deck is not None:
            self._check_test_setup("deck")
            deck = list(deck)
            proof = stacked_commitment(str(deal_id), deck)
        else:
            seed = self.random.seed()
            proof = commitment(str(deal_id), seed)  # R-DEAL-3, published with the deal
        side_of = side_of_seats(table.sides, table.players)
        cutter = variant.cutter(order, dealer)
        deal = Deal.start(
            deal_id,
            table_id=str(table.id),
            number=number,
            variant=table.entry,
            decks=variant.decks,
            options=table.options,
            players=table.players,
            player_ids=[p or "" for p in table.seats],
            order=order,
            side_of=side_of,
            dealer=dealer,
            cutter=cutter,
            scores_before=dict(table.totals),
            commitment=proof,
        )
        if deck is not None:
            variant.check_stacked_deck(deck)
            deal.stack(list(deck))
        else:
            deal.shuffle(seed)
        table.open_deal(deal_id=str(deal_id), number=number, dealer=dealer, order=order)
        self._save(table, deal)
        return deal_id

    def _check_test_setup(self, what: str) -> None:
        if not self.allow_stacked_decks:
            raise SetupError("R-DEAL-3", f"{what} can be fixed only on a server set up for tests")

    # --- deals ---------------------------------------------------------------------------
    def get_deal(self, deal_id: UUID, version: int | None = None) -> Deal:
        deal = self._get(deal_id, version, "deal")
        if not isinstance(deal, Deal):
            raise NotFound(f"no deal {deal_id}")
        return deal

    def _get(
        self, aggregate_id: UUID, version: int | None, what: str, *, fresh: bool = True
    ) -> Any:
        if not isinstance(aggregate_id, UUID):  # the cache is keyed by UUID, never by str
            aggregate_id = UUID(str(aggregate_id))
        try:
            return self._read(aggregate_id, version, fresh=fresh)
        except AggregateNotFoundError:
            at = "" if version is None else f" at step {version}"
            raise NotFound(f"no {what} {aggregate_id}{at}") from None

    def act(
        self,
        deal_id: UUID,
        player: str,
        command: Command,
        *,
        expected_step: int | None = None,
    ) -> Deal:
        """Apply one player's command to a deal; returns the deal as it now is (its
        ``version`` is the step the next command must expect)."""
        deal = self.get_deal(deal_id)
        if expected_step is not None and expected_step != deal.version:
            raise Conflict(f"the deal is at step {deal.version}, not {expected_step}")
        self._execute(deal, self._seat_of(deal, player), command)
        return deal

    def submit(
        self,
        deal_id: UUID,
        player: str,
        seq: int,
        command: Command,
        expected: Expected,
        digest: str,
        *,
        fresh_only: bool = False,
    ) -> Answer:
        """A sequenced command (R-CMD-1): the sequence number is checked first (a retry
        gets its first answer back), then what the sender believed, then the rules.

        Every answer is kept in the sender's command log, saved in the same
        transaction as the events of an accepted command.

        The deal and the log are first taken from this process's cache as they are, without
        asking the store whether another process changed them since (optimistic): an accepted
        command is saved only if nobody wrote either meanwhile (the store's version check),
        and any other outcome (a stale ``expect``, a rule refusal, a lost race) is decided
        again on the store's current state before it is answered or recorded
        (``fresh_only``: from the start)."""
        for fresh in (True,) if fresh_only else (False, True):
            deal = self._get(deal_id, None, "deal", fresh=fresh)
            if not isinstance(deal, Deal):
                raise NotFound(f"no deal {deal_id}")
            seat = self._seat_of(deal, player)
            log = self._command_log(deal.state.table_id, player, fresh=fresh)
            first = log.answer_for(seq)  # a cached log holds only what was saved
            if first is not None:
                if first["digest"] != digest:
                    raise Conflict(f"sequence number {seq} was used for a different command")
                return Answer(first["status"], first["body"], replayed=True)
            if seq <= log.last_seq:
                raise Conflict(f"sequence numbers must grow: your last was {log.last_seq}")
            stale = expected.mismatch(deal)
            if stale is not None:
                if not fresh:
                    continue  # perhaps only this process's copy is behind
                body = error_body("R-CMD-1", stale)
                log.record(seq=seq, digest=digest, status=409, body=body)
                self._save(log)
                return Answer(409, body)
            try:
                new_events = self._execute(deal, seat, command, log, seq=seq, digest=digest)
            except RuleViolation as refusal:
                if not fresh:
                    continue
                body = error_body(refusal.code, refusal.message)
                log.record(seq=seq, digest=digest, status=400, body=body)
                self._save(log)
                return Answer(400, body)
            except Conflict:
                if not fresh:
                    continue
                raise
            return Answer(200, new_events)
        raise AssertionError("unreachable")  # pragma: no cover

    def submit_cached(
        self,
        deal_id: UUID,
        player: str,
        seq: int,
        command: Command,
        expected: Expected,
        digest: str,
    ) -> tuple[Answer, Pending | None] | None:
        """``submit``'s common case without any I/O or waiting, for the event loop: the
        deal and the sender's log (and, for the command that ends the deal, its table) are
        in this process's cache, or the log is new (``seq`` 1), and the command is
        accepted. Returns the answer and the
        events to save (``save_pending``, ``GroupCommit.save_async``; on ``IntegrityError``
        call ``submit(fresh_only=True)``), or the first answer of a retry (nothing to save),
        or None: anything else (not cached, stale, refused, an error) is left to ``submit``,
        which decides it again from the store."""
        deal = self._cached_copy(deal_id)
        if not isinstance(deal, Deal) or player not in deal.state.player_ids:
            return None
        seat = deal.state.player_ids.index(player)
        log = self._cached_copy(command_log_id(deal.state.table_id, player))
        if log is None and seq == 1:
            # The sender's first command at this table (sequence numbers start at 1): its
            # log does not exist yet, so it is created here rather than looked for in the
            # store (each player's first command of every new game went to ``submit`` for
            # that, one command in a hundred under steady load). If the store holds the log
            # after all (a retry of seq 1, a log this cache dropped), the save fails on the
            # log's first version and ``submit`` decides from the store.
            log = CommandLog(table_id=deal.state.table_id, player=player)
        if not isinstance(log, CommandLog):
            return None
        first = log.answer_for(seq)
        if first is not None:
            if first["digest"] != digest:
                return None
            return Answer(first["status"], first["body"], replayed=True), None
        if seq <= log.last_seq or expected.mismatch(deal) is not None:
            return None
        first_new = deal.version + 1
        try:
            deal.execute(seat, command)
        except DomainError:
            return None
        aggregates: list[Any] = [deal]
        if deal.state.phase == OVER:
            if deal.state.scores is None:
                return None  # not a scored end: ``submit`` decides
            # The table records the deal in the same transaction, taken from the cache as
            # it is: if another process changed the table meanwhile, the save fails on its
            # version and ``submit`` decides again from the store. A cached table that does
            # not list this deal is behind for sure (another process started the deal):
            # left to ``submit`` at once, rather than failing a shared transaction.
            table = self._cached_copy(UUID(deal.state.table_id))
            if not isinstance(table, Table) or table.deals[-1:] != [str(deal.id)]:
                return None
            self._record_on_table(table, deal)
            aggregates.append(table)
        body = self._answer_body(deal, seat, first_new)
        log.record(seq=seq, digest=digest, status=200, body=body)
        aggregates.append(log)
        return Answer(200, body), self._pending(*aggregates)

    def save_pending(self, pending: Pending) -> None:
        """Save a command's collected events (``submit_cached``, ``_commit``), blocking;
        ``IntegrityError`` on a conflict."""
        if self.group_commit is None:
            self._record_batch([pending])
            self._snapshot_finished([pending])
        else:
            self.group_commit.save_pending(pending)

    def _cached_copy(self, aggregate_id: UUID, *, wait: bool = False) -> Any:
        """A copy of the aggregate as this process's cache holds it, or None if it is not
        cached, or (unless ``wait``) another thread is reading it just now."""
        cache = self.repository.cache
        if cache is None:
            return None
        lock = self._read_lock(aggregate_id)
        if not lock.acquire(blocking=wait):
            return None
        try:
            return deepcopy(cache.get(aggregate_id))
        except KeyError:
            return None
        finally:
            lock.release()

    def _seat_of(self, deal: Deal, player: str) -> int:
        if player not in deal.state.player_ids:
            raise Forbidden("R-CMD-2", "you have no seat at this table")
        return deal.state.player_ids.index(player)

    def _read(self, aggregate_id: UUID, version: int | None = None, *, fresh: bool = True) -> Any:
        """``repository.get`` under the aggregate's read lock.

        ``fresh`` (the default): the cached copy is first brought up to date with the store
        (the library's fast-forward), so it includes what other processes wrote. Otherwise
        the cached copy is returned as it is, without a query; only a command path whose
        save checks the versions may use it."""
        if version is not None:  # rebuilt from the store, never from the cache
            return self.repository.get(aggregate_id, version=version, projector_func=_fold)
        if not fresh:
            cached = self._cached_copy(aggregate_id, wait=True)
            if cached is not None:
                return cached
        with self._read_lock(aggregate_id):
            return self.repository.get(aggregate_id, projector_func=_fold)

    def _read_lock(self, aggregate_id: UUID) -> threading.Lock:
        return self._read_locks[hash(aggregate_id) % len(self._read_locks)]

    def _command_log(self, table_id: str, player: str, *, fresh: bool = True) -> CommandLog:
        try:
            log = self._read(command_log_id(table_id, player), fresh=fresh)
        except AggregateNotFoundError:
            return CommandLog(table_id=table_id, player=player)
        assert isinstance(log, CommandLog)
        return log

    def _execute(
        self,
        deal: Deal,
        seat: int,
        command: Command,
        log: CommandLog | None = None,
        *,
        seq: int = 0,
        digest: str = "",
    ) -> dict[str, Any]:
        """Decide, then save the deal (with the table when the deal ends, and the
        sender's command log) in one transaction. The answer (the new step and the new
        events as the sender may see them) is built only for a sequenced command."""
        first_new = deal.version + 1
        deal.execute(seat, command)
        st = deal.state
        body: dict[str, Any] = {"step": deal.version}
        if log is not None:
            body = self._answer_body(deal, seat, first_new)
        aggregates: list[Any] = [deal]
        if st.phase == OVER and st.scores is not None:
            table = self.get_table(UUID(st.table_id))
            self._record_on_table(table, deal)
            aggregates.append(table)
        if log is not None:
            log.record(seq=seq, digest=digest, status=200, body=body)
            aggregates.append(log)
        self._save(*aggregates)  # a finished deal is snapshotted once saved (_snapshot_finished)
        return body

    @staticmethod
    def _record_on_table(table: Table, deal: Deal) -> None:
        """The finished deal's scores and last chain link, on its table (R-SCORE-1)."""
        st = deal.state
        assert st.scores is not None
        scores = {side: b["total"] for side, b in st.scores.items()}
        table.record_deal(str(deal.id), scores, final_link=deal.chain)

    @staticmethod
    def _answer_body(deal: Deal, seat: int, first_new: int) -> dict[str, Any]:
        """A command's answer: the new step and its events as the sender may see them."""
        return {
            "step": deal.version,
            "events": [
                view
                for event in deal.pending_events
                if event.originator_version >= first_new
                and (view := event_view(event, Viewer.player(seat), deal.state)) is not None
            ],
        }

    # --- accounts --------------------------------------------------------------------------
    def register(self, name: str) -> str:
        """A new account; returns its bearer token (only its hash is stored)."""
        check_name(name)
        token = secrets.token_urlsafe(32)
        account = Account(name=name)
        issued = Token(hashed=token_hash(token), name=name)
        try:
            self._commit(account, issued)
        except IntegrityError:
            raise Conflict(f"the name {name!r} is taken") from None
        return token

    def authenticate(self, token: str) -> str | None:
        """The name of the account a bearer token belongs to, or None.

        Known tokens are remembered in the process (a token never changes); roles are not:
        ``account(name)`` reads them from the store each time."""
        name = self.known_token(token)
        if name is not None:
            return name
        hashed = token_hash(token)
        try:
            issued = self._read(token_id(hashed))
        except AggregateNotFoundError:
            return None
        if not isinstance(issued, Token):
            return None
        with self._token_names_lock:
            self._token_names[hashed] = issued.name
            if len(self._token_names) > TOKEN_CACHE_SIZE:
                self._token_names.popitem(last=False)
        return str(issued.name)

    def known_token(self, token: str) -> str | None:
        """The account name of a token this process has already authenticated (no I/O)."""
        hashed = token_hash(token)
        with self._token_names_lock:
            name = self._token_names.get(hashed)
            if name is not None:
                self._token_names.move_to_end(hashed)
            return name

    def account(self, name: str) -> Account:
        """The account as the store has it now (roles included)."""
        try:
            account = self._read(account_id(name))
        except AggregateNotFoundError:
            raise NotFound(f"no account {name!r}") from None
        if not isinstance(account, Account):
            raise NotFound(f"no account {name!r}")
        return account

    def set_role(self, name: str, role: str, *, granted: bool) -> None:
        """Operator only (command line): grant or revoke a role such as ``auditor``."""
        account = self.account(name)
        if granted:
            account.grant(role=role)
        else:
            account.revoke(role=role)
        self._save(account)

    def save(self, *objs: Any, **kwargs: Any) -> Any:
        """``Application.save`` for aggregates, without the per-object runtime protocol
        checks of ``ProcessingEvent.collect_events`` (a seventh of a command's time on
        Python 3.11). Every object saved here is an aggregate; the rest is unchanged."""
        pending = self._pending(*(obj for obj in objs if obj is not None))
        return self._record_batch([pending], **kwargs)

    def _record_batch(self, batch: Sequence[Pending], **kwargs: Any) -> Any:
        """The events of one or more commands (the group committer's batch), recorded in
        one transaction; returns the library's recordings."""
        processing_event: ProcessingEvent[UUID] = ProcessingEvent()
        for pending in batch:
            processing_event.events.extend(pending.events)
            processing_event.aggregates.update(pending.aggregates)
        processing_event.saved_kwargs.update(kwargs)
        recordings = self._record(processing_event)
        cache = self.repository.cache
        if cache is not None and self.repository.fastforward:
            # The library caches saved aggregates only without fast-forward; a command's
            # next read in this process then needs no query (see ``_read``).
            for aggregate_id, aggregate in processing_event.aggregates.items():
                cache.put(aggregate_id, aggregate)
        self._take_snapshots(processing_event)
        self._notify(recordings)
        self.notify(processing_event.events)  # the library's deprecated hook, kept
        return recordings

    def _snapshot_finished(self, saved: Sequence[Pending]) -> None:
        """Snapshot each deal that these saved commands finished, so rebuilding a game
        reads one record per deal (the group committer calls this once their waiters are
        woken: the snapshot does not delay their answers).

        Taken from the aggregates just saved (the library's ``take_snapshot`` would first
        rebuild them from the store, to the same state). A snapshot only speeds reads up:
        if writing it fails, the commands (already committed) still succeed, and reads
        replay the deal's events instead.
        """
        if self.snapshots is None:
            return
        finished = [
            aggregate
            for pending in saved
            for aggregate in pending.aggregates.values()
            if isinstance(aggregate, Deal)
            and aggregate.state.phase == OVER
            and any(event.originator_id == aggregate.id for event in pending.events)
        ]
        if not finished:
            return
        snapshot_class = type(self).snapshot_class or Snapshot
        try:
            self.snapshots.put([snapshot_class.take(deal) for deal in finished])
        except Exception:
            logger.exception("snapshotting %d finished deals failed", len(finished))

    def _save(self, *aggregates: Any) -> None:
        try:
            self._commit(*aggregates)
        except IntegrityError:
            raise Conflict("another command changed this game first; reload and retry") from None

    def _commit(self, *aggregates: Any) -> None:
        """Save the aggregates' new events in one transaction, shared with the commands of
        other threads saved at the same moment (group commit); raises ``IntegrityError`` if
        another writer got there first."""
        pending = self._pending(*aggregates)
        if pending.events:
            self.save_pending(pending)

    @staticmethod
    def _pending(*aggregates: Any) -> Pending:
        """The aggregates' new events, collected once (a failed save is never retried with
        the same aggregates: the command is decided again)."""
        events: list[Any] = []
        by_id: dict[UUID, Any] = {}
        for aggregate in aggregates:
            events.extend(aggregate.collect_events())
            by_id[aggregate.id] = aggregate
        return Pending(events, by_id)
