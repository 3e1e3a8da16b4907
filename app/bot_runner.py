"""The bots at tables (docs/bots.md): one elected process per database plays every bot seat.

``BotRunner(canasta, settings)`` starts a background thread that takes the database's *bots
lease* (the read models' lease mechanism under its own key: ``leases.BOTS_LEASE_KEY`` on
PostgreSQL, ``<file>.bots.lock`` next to a SQLite file, always the process itself for the
in-memory store). While it holds the lease it:

1. finds the tables with bots still in play: the notification log's ``PlayerSeated`` events
   that seat a bot (``bot:<level>:<seat>``) and its ``SeatTakenOver`` events (the basic bot
   standing in for an absent player, ``bot:basic:<seat>:for:<player>``), less the tables
   whose game ended or stopped;
2. follows the notification log from its head: a table's or its current deal's new event
   puts that table on the list to look at; every ``sweep_seconds`` all of them are looked at
   anyway, but those *waiting for a person*: a person is to act without a turn clock, or to
   open the next deal, so nothing can change there but by a new event of the table or its
   deal, which the log shows (a practice table whose player walked away costs no query);
3. looks at a table: its current deal, read from the store; if the seat to act is a bot's,
   the bot decides (``bots.choose``: from that seat's view and move menu only) and the
   command is submitted through ``CanastaApp.submit`` exactly as the HTTP route submits a
   person's: the bot's next sequence number at the table (its command log, read from the
   store) and the ``expect`` of the deal it decided on. The table stays on the list until no
   bot is to act, so a bot answers within a round trip of its turn;
4. waits for new events (PostgreSQL: ``LISTEN`` on the events table's channel; SQLite and
   memory: ``poll_interval``) when there is nothing to do.

The same leader keeps the turn clocks (docs/tables.md, "Turn clock"): it also watches the
tables created with a clock (``Created``, ``TurnClockSet``); when a person is to act there, it
notes his deadline (from the recorded facts: ``domain.clock.deadline``) and looks at the table
again once it has passed, then submits ``TimeOut`` for the seat under its stand-in's name
(``domain.clock.stand_in``, the same ``submit``, ``seq`` and ``expect``), and plays the rest of
that turn as the ``basic`` bot under the same name. A seat whose player has missed the table's
limit of turns in a row is taken over whenever the leader looks at it (the recorded count
decides, so a leader that died right after the timeout leaves nothing undone).

The clocks know the service's outages (``app.infra.liveness``): while no serving process has
said it is alive for ``outage_seconds``, nobody is timed out; a person's turn begun before the
service came back gets its whole time again (``CanastaApp.restart_turn_clock`` records
``TurnClockRestarted``). A hand-over between live processes restarts nothing.

Correctness does not rest on the election. A command decided on a deal that moved meanwhile
is refused as stale (409, nothing recorded) and decided again on the next round; a command
submitted twice under one sequence number gets its first answer back; so a bot's move is
applied once even if two runners ever played at once, or one was killed after sending. The
bot's chance is seeded by the deal, the seat and the step, so a move decided again after a
restart is the same move.

At about 500 lines the file is kept whole: it is one thread's cycle (lease, follow, play, the
clocks), and every method reads the same remembered tables and deals; split, that state would
be handed between modules. The foreground command is in ``app.cli_bots``.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from uuid import UUID

from eventsourcing.utils import get_topic

from app.application import CanastaApp, Expected
from app.command_io import expect_body, submission
from app.infra.liveness import BEAT_SECONDS, Alive
from app.infra.projection_runner.leases import (
    BOTS_LEASE_KEY,
    BOTS_LOCK_FILE_SUFFIX,
    Lease,
    lead_while_held,
    lease_for,
)
from app.metrics import BOT_MOVES
from app.schemas import CommandIn, command_body
from app.settings import MEMORY, Settings
from bots import PublicMemory, choose, get_bot, random_move
from bots.view import seat_view
from domain.bot_names import STAND_IN_LEVEL, bot_level
from domain.clock import deadline, missed_in_a_row, restart_due, stand_in
from domain.commands import Command, TimeOut
from domain.constants import OVER
from domain.deal import Deal
from domain.errors import DomainError
from domain.legal import seat_to_act
from domain.menu import menu
from domain.state import DealState
from domain.table import MISSED_TURNS, OPEN, PLAYING, Table

logger = logging.getLogger(__name__)

#: The most deals whose public history the runner remembers (the least recently played
#: forgotten first: a deal forgotten is read again from the store when a bot acts in it).
DEAL_MEMORIES = 1000

SEATED: str = get_topic(Table.PlayerSeated)  # type: ignore[attr-defined]
#: The basic bot takes a seat over for its absent player (docs/tables.md): it plays that
#: seat under the name ``bot:basic:<seat>:for:<player>`` that the deal records.
TAKEN_OVER: str = get_topic(Table.SeatTakenOver)  # type: ignore[attr-defined]
#: A table's turn clock is set when it is created, or later before the start.
CLOCKED: frozenset[str] = frozenset(
    get_topic(cls)
    for cls in (Table.Created, Table.TurnClockSet)  # type: ignore[attr-defined]
)
ENDED: frozenset[str] = frozenset(
    get_topic(cls)
    for cls in (Table.GameEnded, Table.GameStopped)  # type: ignore[attr-defined]
)


@dataclass
class _Deal:
    """What the runner keeps of a deal it plays: the public history's memory."""

    memory: PublicMemory = field(default_factory=PublicMemory)
    refused_at: int = 0  # the step at which a bot's own choice was refused by the rules


class BotRunner:
    """Plays the bot seats of one database's tables (see the module's docstring)."""

    def __init__(
        self,
        canasta: CanastaApp,
        settings: Settings,
        *,
        poll_interval: float = 0.1,
        lease_retry_seconds: float = 1.0,
        sweep_seconds: float = 5.0,
        batch_interval: float = 0.05,
        batch_size: int = 500,
        deal_memories: int = DEAL_MEMORIES,
    ) -> None:
        self.canasta = canasta
        self.settings = settings
        self.poll_interval = poll_interval
        self.lease_retry_seconds = lease_retry_seconds
        self.sweep_seconds = sweep_seconds
        self.batch_interval = batch_interval
        self.batch_size = batch_size
        self.deal_memories = deal_memories
        self.moves = 0  # commands accepted (or answered again) in this process
        self.retried = 0  # moves refused as stale, or answered again: decided again
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._leading = False
        self._tables: set[UUID] = set()  # tables with bots, in play or about to be
        self._deal_table: dict[UUID, UUID] = {}  # a table's current deal -> the table
        self._deals: OrderedDict[UUID, _Deal] = OrderedDict()  # least recently played first
        # Tables waiting for a person (no clock to watch): looked at again on their next event.
        self._waiting: set[UUID] = set()
        self.looked = 0  # tables looked at (``play``)
        self.sweeps = 0  # rounds that looked at every table not waiting for a person
        self._position = 0
        self.timeouts = 0  # turns timed out by this process (docs/tables.md, "Turn clock")
        self.takeovers = 0  # seats taken over after the limit of missed turns
        self.deals_opened = 0  # next deals opened while nobody present could (docs/tables.md)
        self._due: dict[UUID, datetime] = {}  # a clocked table -> its seat to act's deadline
        self.restarts = 0  # turn clocks restarted after an outage of the service
        self._alive: tuple[float, Alive | None] | None = None  # (read at, the record)

    # --- lifecycle -----------------------------------------------------------------------
    @property
    def is_leading(self) -> bool:
        return self._leading

    @property
    def is_running(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        """Start the thread that takes the bots lease and plays while it holds it."""
        if self._thread is not None:
            return
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._run, args=(self._lease(),), name="bots", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop playing and give the lease up (a move under way is finished first)."""
        if self._thread is None:
            return
        self._stopping.set()
        self._thread.join()
        self._thread = None

    close = stop

    def _lease(self) -> Lease:
        memory = self.settings.database_url == MEMORY
        sqlite = not memory and self.settings.database_url is None
        factory = self.canasta.factory
        return lease_for(
            memory=memory,
            sqlite_path=self.settings.sqlite_path if sqlite else None,
            pool=None if memory or sqlite else factory.datastore.pool,  # type: ignore[attr-defined]
            channel=getattr(self.canasta.recorder, "channel_name", ""),
            key=BOTS_LEASE_KEY,
            suffix=BOTS_LOCK_FILE_SUFFIX,
            application_name="canasta bots lease",
        )

    def _run(self, lease: Lease) -> None:
        lead_while_held(lease, self._lead, self._stopping, self.lease_retry_seconds, "bots", logger)

    def _lead(self, lease: Lease) -> None:
        try:
            self._play_while_leading(lease)
        finally:
            self._leading = False

    def _play_while_leading(self, lease: Lease) -> None:
        logger.info("bots: this process plays the bots (holds %s)", lease.where)
        self._leading = True
        self._tables.clear()
        self._deal_table.clear()
        self._deals.clear()
        self._waiting.clear()
        self._alive = None
        pending = self._find_tables()
        swept = time.monotonic()
        while not self._stopping.is_set():
            began = time.monotonic()
            pending |= self._follow()
            if time.monotonic() - swept >= self.sweep_seconds:
                swept = time.monotonic()
                pending |= self._tables - self._waiting
                self.sweeps += 1
                lease.check()  # a lease lost while busy: LeaseLost, stop playing
            pending |= self._overdue()
            again: set[UUID] = set()
            for table_id in sorted(pending):
                if self._stopping.is_set():
                    return
                try:
                    if self.play(table_id):
                        again.add(table_id)
                except DomainError as exc:  # a lost race, a table gone: looked at again later
                    logger.info("bots: table %s: %s", table_id, exc)
                    again.add(table_id)
            pending = again
            if not pending:
                lease.wait_for_events(self.poll_interval, self._stopping)
                # Under load every insert wakes it: look at most every ``batch_interval``.
                self._stopping.wait(self.batch_interval - (time.monotonic() - began))

    # --- which tables ----------------------------------------------------------------------
    def _notifications(self, start: int, stop: int, topics: Iterable[str]) -> Iterable[object]:
        """The notifications from ``start`` to ``stop`` (of ``topics``; all if empty)."""
        recorder = self.canasta.recorder
        while start <= stop:
            batch = recorder.select_notifications(
                start, self.batch_size, stop=stop, topics=list(topics)
            )
            yield from batch
            if len(batch) < self.batch_size:
                return
            start = batch[-1].id + 1

    def _find_tables(self) -> set[UUID]:
        """The tables with bots whose game has not ended, from the log's table events; the
        position is put at the log's head."""
        head = self.canasta.recorder.max_notification_id() or 0
        for note in self._notifications(1, head, [SEATED, TAKEN_OVER, *CLOCKED, *ENDED]):
            self._table_event(note)
        self._position = max(self._position, head)
        return set(self._tables)

    def _table_event(self, note: object) -> None:
        topic = getattr(note, "topic", "")
        originator = getattr(note, "originator_id", None)
        assert isinstance(originator, UUID)
        if topic == SEATED:
            event = self.canasta.mapper.to_domain_event(note)  # type: ignore[arg-type]
            if bot_level(event.player) is not None:  # type: ignore[attr-defined]
                self._tables.add(originator)
        elif topic == TAKEN_OVER:
            self._tables.add(originator)
        elif topic in CLOCKED:  # a table with a turn clock: its seats may time out
            event = self.canasta.mapper.to_domain_event(note)  # type: ignore[arg-type]
            if getattr(event, "turn_seconds", None) is not None:
                self._tables.add(originator)
        elif topic in ENDED:
            self._forget(originator)

    def _forget(self, table_id: UUID, *, keep: UUID | None = None) -> None:
        """Drop what is kept of the table's deals (but ``keep``), and the table itself
        unless a deal is kept."""
        for deal_id in [d for d, t in self._deal_table.items() if t == table_id and d != keep]:
            del self._deal_table[deal_id]
            self._deals.pop(deal_id, None)
        if keep is None:
            self._tables.discard(table_id)
            self._waiting.discard(table_id)
            self._due.pop(table_id, None)

    def _follow(self) -> set[UUID]:
        """The tables that new events (after the position) concern."""
        touched: set[UUID] = set()
        head = self.canasta.recorder.max_notification_id() or 0
        # With no bot in play only the table events that seat a bot matter (cheap to skip).
        topics = [] if self._tables else [SEATED, TAKEN_OVER, *CLOCKED, *ENDED]
        for note in self._notifications(self._position + 1, head, topics):
            originator = getattr(note, "originator_id", None)
            assert isinstance(originator, UUID)
            self._table_event(note)
            if originator in self._tables:
                touched.add(originator)
            elif originator in self._deal_table:
                touched.add(self._deal_table[originator])
        self._position = max(self._position, head)
        self._waiting -= touched
        return touched & self._tables

    def _memory(self, deal_id: UUID) -> _Deal:
        """What the runner remembers of the deal (made afresh if it was forgotten: its
        public history is then read whole from the store), at most ``deal_memories`` deals."""
        kept = self._deals.get(deal_id)
        if kept is None:
            kept = self._deals[deal_id] = _Deal()
            while len(self._deals) > self.deal_memories:
                self._deals.popitem(last=False)
        else:
            self._deals.move_to_end(deal_id)
        return kept

    @property
    def remembered_deals(self) -> int:
        """How many deals' public histories the runner holds (at most ``deal_memories``)."""
        return len(self._deals)

    @property
    def waiting_tables(self) -> int:
        """Tables with bots waiting for a person, left out of the sweeps."""
        return len(self._waiting)

    # --- one move ----------------------------------------------------------------------------
    def play(self, table_id: UUID) -> bool:
        """If a bot is to act in the table's current deal, decide and submit its move; True
        if one was submitted (another may follow), False if no bot is to act."""
        self.looked += 1
        self._waiting.discard(table_id)
        table = self.canasta.get_table(table_id)
        if table.status != PLAYING:
            if table.status != OPEN:
                self._forget(table_id)  # finished or stopped
            return False
        if not table.deals:
            return False
        deal_id = UUID(table.deals[-1])
        if deal_id not in self._deal_table:
            self._forget(table_id, keep=deal_id)  # the deals before this one
            self._deal_table[deal_id] = table_id
        deal = self.canasta.get_deal(deal_id)
        state = deal.state
        seat = seat_to_act(state)
        self._due.pop(table_id, None)
        if seat is None:
            return self._next_deal(table, state.phase)
        name = state.player_ids[seat]
        level = bot_level(name)
        if level is None:
            if self._missed_turns(table, state, seat):
                return True  # the bot plays the seat from now on
            if seat not in state.timed_out:
                return self._clock(table, deal, seat)
            name, level = stand_in(seat), STAND_IN_LEVEL  # the rest of a timed-out turn
        kept = self._memory(deal_id)
        kept.memory.observe_stored(self.canasta.events.get(deal_id, gt=kept.memory.version), state)
        rng = random.Random(f"bot:{deal_id}:{seat}:{deal.version}")
        command: Command
        if kept.refused_at == deal.version:  # its own choice was refused: a move of the menu
            view = seat_view(state, seat, kept.memory, table.target)
            command = random_move(view, menu(state, seat), rng)
        else:
            command = choose(get_bot(level), state, seat, kept.memory, table.target, rng)
        body = CommandIn.model_validate(
            {
                "seq": self.canasta.last_seq(table_id, name) + 1,
                "expect": expect_body(Expected.now(deal)),
                "command": command_body(command),
            }
        )
        answer = self.canasta.submit(*submission(deal_id, name, body))
        BOT_MOVES.labels(bot_outcome(answer.status)).inc()
        if answer.status == 200:
            self.moves += 1
            self.retried += answer.replayed
            return True
        if answer.status == 400:  # logged by code only: a message may name the bot's cards
            code = answer.body.get("error", {}).get("code")
            if kept.refused_at == deal.version:
                logger.error("bots: %s's move refused in deal %s (%s)", name, deal_id, code)
                return False
            logger.warning("bots: %s's move refused in deal %s (%s)", name, deal_id, code)
            kept.refused_at = deal.version
        else:
            self.retried += 1
        return True  # stale: decided again on the deal as it is now

    def _next_deal(self, table: Table, phase: str) -> bool:
        """The deal is over and nobody present may open the next one (the host is away and
        every seat is a bot's or away): open it as the bot playing the host's seat
        (``Table.may_open_next_deal``, docs/tables.md). True if it was opened."""
        by = table.next_deal_by_bot()
        if phase != OVER or len(table.deal_scores) < len(table.deals):
            return False
        if by is None:  # a person present opens it: the table's next event says so
            self._waiting.add(table.id)
            return False
        self.canasta.start_next_deal(table.id, by)  # refused: looked at again (``_lead``)
        self.deals_opened += 1
        return True

    # --- the turn clock (docs/tables.md) ------------------------------------------------------
    def _overdue(self) -> set[UUID]:
        """The clocked tables whose seat to act ran out of time (as last looked at)."""
        now = datetime.now(UTC)
        return {table_id for table_id, due in self._due.items() if due <= now}

    def _service(self) -> Alive | None:
        """The service's record (``app.infra.liveness``), read again at most every 0.2 s
        (the server checks it again before any timeout: this only saves queries)."""
        if self._alive is None or time.monotonic() - self._alive[0] > 0.2:
            self._alive = (time.monotonic(), self.canasta.liveness.read())
        return self._alive[1]

    def _clock(self, table: Table, deal: Deal, seat: int) -> bool:
        """A person is to act: if his turn ran through an outage of the service, restart
        its clock; once his deadline has passed, time his turn out (as the seat's stand-in,
        through ``submit`` like any command, decided on the deal's step), unless the service
        is out of service now; before, note when to look again. True if something was
        recorded or submitted."""
        alive = self._service()
        if alive is not None:
            turn_since, seconds = deal.turn_since, table.turn_seconds
            if restart_due(turn_since, seconds, deal.state, alive.up_since) is not None:
                return self._restart(deal)
        due = deadline(deal.turn_since, table.turn_seconds, deal.state)
        if due is None:  # no clock: only the person's move (an event of the deal) changes it
            if table.turn_seconds is None:
                self._waiting.add(table.id)
            return False
        now = datetime.now(UTC)
        if now < due:
            self._due[table.id] = due
            return False
        if alive is not None and alive.out_of_service(now, self.canasta.liveness.outage_seconds):
            self._due[table.id] = now + timedelta(seconds=BEAT_SECONDS)  # look again then
            return False
        name = stand_in(seat)
        body = CommandIn.model_validate(
            {
                "seq": self.canasta.last_seq(table.id, name) + 1,
                "expect": expect_body(Expected.now(deal)),
                "command": command_body(TimeOut(deal.version)),
            }
        )
        answer = self.canasta.submit(*submission(deal.id, name, body))
        if answer.status == 200:
            self.timeouts += 1
            return True  # looked at again at once: the takeover if due, the stand-in's moves
        code = answer.body.get("error", {}).get("code")
        logger.info("bots: the timeout of seat %s in deal %s refused (%s)", seat, deal.id, code)
        return answer.status == 409  # stale: a move got there first; looked at again

    def _restart(self, deal: Deal) -> bool:
        """Record that the turn's clock starts again after the outage (decided again on the
        deal as stored: ``CanastaApp.restart_turn_clock``). True: look at the table again."""
        try:
            seat = self.canasta.restart_turn_clock(deal.id, deal.version)
        except DomainError as exc:  # the deal moved meanwhile: looked at again
            logger.info("bots: the clock of deal %s not restarted (%s)", deal.id, exc)
            return True
        self._alive = None  # read the record again before deciding on it again
        if seat is not None:
            self.restarts += 1
            logger.info("bots: the clock of seat %s in deal %s restarted", seat, deal.id)
        return True

    def _missed_turns(self, table: Table, state: DealState, seat: int) -> bool:
        """A seat whose player has missed the table's limit of turns in a row (and still
        plays it) is taken over by the basic bot until he comes back (docs/tables.md). Decided
        from the recorded deal at every look, not only right after the timeout that reached
        the limit: a runner that stopped or died between that timeout and the takeover leaves
        it to the next look of whichever runner leads. True if the seat was taken over."""
        limit = table.missed_turns_limit
        if not limit or missed_in_a_row(state, seat) < limit:
            return False
        try:
            self.canasta.take_over_seat(table.id, seat, MISSED_TURNS)
        except DomainError as refused:  # e.g. he left or came back meanwhile
            logger.info("bots: seat %s of table %s not taken over (%s)", seat, table.id, refused)
            return False
        self.takeovers += 1
        return True


def bot_outcome(status: int) -> str:
    """``canasta_bot_moves_total``'s outcome label for the answer's status."""
    return "accepted" if status == 200 else "refused" if status == 400 else "stale"
