"""The players' commands (R-CMD-1): one decide-and-record core, two readers.

``_decide`` is the one place where a sequenced command is decided: the sequence number
first (a retry under a used ``seq`` gets its first answer back, under another command a
conflict; a new ``seq`` must be greater than the last), then what the sender believed
(``Expected``), then the rules; an accepted command's answer is recorded in the sender's
command log and saved with the deal's events (and, when the command ends the deal, the
table's) in one transaction.

It reads the deal, the log and the table through one of two readers:

- the process's cache as it is (``submit_cached``: the event loop's path, the HTTP fast
  lane and the route, no I/O and no waiting). Optimistic: only an accepted command or a
  replayed retry is answered from it, and the save succeeds only if nobody changed the
  aggregates since (the store's version check). Everything else is left to ``submit``.
- the store (``submit``, blocking, in the threadpool): first the cached copies where the
  process has them, and if that copy would not accept the command (a stale ``expect``, a
  rule refusal, a lost race), the store's current state, on which refusals are answered
  and recorded (``fresh_only``: the store's state from the start).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from app.infra.group_commit import Pending
from app.services.clock import check_clock, sender_seat
from app.services.core import AppCore
from app.services.seats import refuse_away
from domain.clock import stand_in_seat
from domain.command_log import CommandLog, command_log_id
from domain.commands import Command, TimeOut
from domain.deal import Deal
from domain.errors import (
    SEQ_TOO_FAR,
    STALE,
    Conflict,
    DomainError,
    NotFound,
    RuleViolation,
)
from domain.refusals import Said
from domain.state import OVER
from domain.table import Table
from projections.visibility import Viewer, event_view


def error_body(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def said_body(code: str, words: Said) -> dict[str, Any]:
    """An error body worded by key (``domain.refusals``) for what is no domain refusal (the
    server's limits and retries): its English message, key and parameters."""
    body = error_body(code, words.message)
    body["error"] |= {"key": words.key, "params": dict(words.params)}
    return body


def refusal_body(error: DomainError) -> dict[str, Any]:
    """A domain refusal's error body: its code and English message, and for a refusal worded
    by key (``domain.refusals``) that key and its parameters, for a client to say it in its
    own words (docs/api.md, "Errors")."""
    body = error_body(error.code, error.message)
    if error.key is not None:
        body["error"] |= {"key": error.key, "params": dict(error.params)}
    return body


@dataclass(frozen=True)
class Expected:
    """What the sender believes is current (R-CMD-1); None means "not checked"."""

    game: UUID | None = None
    deal: int | None = None
    step: int | None = None
    turn: int | None = None
    phase: str | None = None

    @classmethod
    def now(cls, deal: Deal) -> Expected:
        """What is current in ``deal``: the ``expect`` a command sent now must carry."""
        st = deal.state
        return cls(
            game=UUID(st.table_id),
            deal=st.number,
            step=deal.version,
            turn=st.turn if st.phase != OVER else None,  # as the deal's view shows it
            phase=st.phase,
        )

    def mismatch(self, deal: Deal) -> Conflict | None:
        """Why the command is stale (R-CMD-1, worded by key), or None. (On every command:
        compares the fields as they are, without building ``now``'s UUID unless the game is
        checked.)"""
        st = deal.state
        value: object
        for name, believed, value in (
            ("game", self.game, None),
            ("deal", self.deal, st.number),
            ("step", self.step, deal.version),
            ("turn", self.turn, st.turn),
            ("phase", self.phase, st.phase),
        ):
            if believed is None:
                continue
            if name == "game":
                value = UUID(st.table_id)
                if believed != value:  # never stale: a deal's table never changes
                    return Conflict(STALE, "stale.game", table=str(value), believed=str(believed))
            if name == "deal" and believed != value:  # never stale either: a deal keeps its number
                return Conflict(STALE, "stale.deal", deal=st.number, believed=self.deal)
            if believed != value:
                return Conflict(
                    STALE, STALE_KEYS[name], value=as_param(value), believed=as_param(believed)
                )
        return None


#: The refusal's key of a stale command, by the field of ``expect`` that is behind.
STALE_KEYS = {"step": "stale.step", "turn": "stale.turn", "phase": "stale.phase"}


def as_param(value: object) -> int | str | None:
    """A field of ``expect`` as a refusal's parameter: a number, a word, or None."""
    return value if value is None or isinstance(value, int | str) else str(value)


@dataclass(frozen=True)
class Answer:
    """The first answer to a sequenced command; ``replayed`` on a retry."""

    status: int
    body: dict[str, Any]
    replayed: bool = False


class Undecided(Exception):
    """The process's cache cannot decide this command alone: ``submit`` decides it."""


class Stale(Exception):
    """The sender's ``expect`` does not match the deal (R-CMD-1): ``refusal`` says how."""

    def __init__(self, refusal: Conflict) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


class CommandService(AppCore):
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
            raise Conflict(STALE, "deal.at_step", step=deal.version, expected=expected_step)
        deal.execute(self._seat_of(deal, player, command), command)
        self._save(*self._with_table(deal, cache_only=False))
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
            deal, seat, log = self._read_from_store(deal_id, player, command, fresh=fresh)
            try:
                answer, aggregates = self._decide(
                    deal, player, seat, log, seq, command, expected, digest, cache_only=False
                )
            except Stale as stale:
                if not fresh:
                    continue  # perhaps only this process's copy is behind
                return self._refuse(log, seq, digest, 409, refusal_body(stale.refusal))
            except Conflict as conflict:
                if not fresh and conflict.code == SEQ_TOO_FAR:
                    continue  # a cached log may be behind: its last seq lower than the store's
                raise
            except RuleViolation as refusal:
                if not fresh:
                    continue
                return self._refuse(log, seq, digest, 400, refusal_body(refusal))
            if aggregates is None:
                return answer  # a retry: its first answer
            try:
                self._save(*aggregates)  # a finished deal is snapshotted once saved
            except Conflict:
                if not fresh:
                    continue
                raise
            return answer
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
        try:
            deal, seat, log = self._read_from_cache(deal_id, player, seq, command)
            answer, aggregates = self._decide(
                deal, player, seat, log, seq, command, expected, digest, cache_only=True
            )
        except (Undecided, Stale, DomainError):
            return None
        if aggregates is None:
            return answer, None
        return answer, self._pending(*aggregates)

    def last_seq(self, table_id: UUID | str, player: str) -> int:
        """The sender's last accepted or refused sequence number at a table (R-CMD-1; 0:
        none yet), as the store has it now: his next command must carry a greater one, and a
        client that lost its counter resumes above it."""
        return int(self._command_log(str(table_id), player).last_seq)

    # --- the core ------------------------------------------------------------------------
    def _decide(
        self,
        deal: Deal,
        player: str,
        seat: int,
        log: CommandLog,
        seq: int,
        command: Command,
        expected: Expected,
        digest: str,
        *,
        cache_only: bool,
    ) -> tuple[Answer, list[Any] | None]:
        """Decide a sequenced command (R-CMD-1) on the deal and log as read; returns the
        answer and the aggregates to save in one transaction (the deal, the table if the
        deal ended, the log with the answer), or a retry's first answer and None.

        Raises ``Conflict`` (``seq`` used for another command, not greater than the last,
        or too far above it: ``CommandLog.check_new``), ``Stale`` (``expect`` does not
        match), the rules' ``RuleViolation``, or
        ``Undecided`` (``cache_only``: the table is not in the cache as needed)."""
        first = log.answer_for(seq)  # a cached log holds only what was saved
        if first is not None:
            if first["digest"] != digest:
                raise Conflict(  # a refused command used its number too (R-CMD-1)
                    STALE, "seq.other_command", seq=seq, last=log.last_seq
                )
            return Answer(first["status"], first["body"], replayed=True), None
        log.check_new(seq)  # greater than the last, and not too far ahead
        stale = expected.mismatch(deal)
        if stale is not None:
            raise Stale(stale)
        check_clock(
            deal, player, seat, command, lambda: self._turn_seconds(deal), self.service_alive
        )
        first_new = deal.version + 1
        deal.execute(seat, command)
        aggregates = self._with_table(deal, cache_only=cache_only)
        body = self._answer_body(deal, seat, first_new)
        log.record(seq=seq, digest=digest, status=200, body=body)
        aggregates.append(log)
        return Answer(200, body), aggregates

    def _refuse(
        self, log: CommandLog, seq: int, digest: str, status: int, body: dict[str, Any]
    ) -> Answer:
        """A refusal decided on the store's state, recorded in the sender's log."""
        log.record(seq=seq, digest=digest, status=status, body=body)
        self._save(log)
        return Answer(status, body)

    def _with_table(self, deal: Deal, *, cache_only: bool) -> list[Any]:
        """The aggregates a command on ``deal`` saves: the deal, and when the command ended
        it with its scores, the table with the deal recorded (R-SCORE-1).

        ``cache_only``: the table as this process's cache holds it; a cached table that
        does not list this deal is behind for sure (another process started the deal), and
        an end without scores is left to ``submit`` (``Undecided``). If another process
        changed the table meanwhile, the save fails on its version."""
        aggregates: list[Any] = [deal]
        st = deal.state
        if st.phase != OVER:
            return aggregates
        if cache_only:
            if st.scores is None:
                raise Undecided  # not a scored end: ``submit`` decides
            table = self._cached_copy(UUID(st.table_id))
            if not isinstance(table, Table) or table.deals[-1:] != [str(deal.id)]:
                raise Undecided
        elif st.scores is None:
            return aggregates
        else:
            table = self.get_table(UUID(st.table_id))
        self._record_on_table(table, deal)
        aggregates.append(table)
        return aggregates

    # --- the two readers -----------------------------------------------------------------
    def _read_from_cache(
        self, deal_id: UUID, player: str, seq: int, command: Command
    ) -> tuple[Deal, int, CommandLog]:
        """The deal, the sender's seat and his log, copied as this process's cache holds
        them (no I/O, no waiting); ``Undecided`` if they are not all there (and for the turn
        clock's stand-ins and timeouts, which ``submit`` decides)."""
        deal = self._cached_copy(deal_id)
        if (
            not isinstance(deal, Deal)
            or player not in deal.state.player_ids
            or isinstance(command, TimeOut)
        ):
            raise Undecided
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
            raise Undecided
        return deal, seat, log

    def _read_from_store(
        self, deal_id: UUID, player: str, command: Command, *, fresh: bool
    ) -> tuple[Deal, int, CommandLog]:
        """The deal, the sender's seat and his log: ``fresh``, as the store has them now;
        otherwise the cached copies as they are (waiting for another thread's read), and
        from the store what the process has not cached."""
        deal = self._get(deal_id, None, "deal", fresh=fresh)
        if not isinstance(deal, Deal):
            raise NotFound("deal.not_found", id=str(deal_id))
        seat = self._seat_of(deal, player, command)  # a person's, or a stand-in's (the clock)
        return deal, seat, self._command_log(deal.state.table_id, player, fresh=fresh)

    def _seat_of(self, deal: Deal, player: str, command: Command | None = None) -> int:
        """The seat ``player`` sends for: his own, or the one the turn clock's stand-in plays
        (``sender_seat``); a player away from his seat gets 403 ``seat_not_yours``."""
        st = deal.state
        if player not in st.player_ids and stand_in_seat(player, st) is None:
            refuse_away(self.get_table(UUID(st.table_id)), st.player_ids, player)
        return sender_seat(deal, player, command)

    def _turn_seconds(self, deal: Deal) -> int | None:
        """The turn clock of the deal's table (docs/tables.md)."""
        return self.get_table(UUID(deal.state.table_id)).turn_seconds

    def _command_log(self, table_id: str, player: str, *, fresh: bool = True) -> CommandLog:
        try:
            log = self._read(command_log_id(table_id, player), fresh=fresh)
        except AggregateNotFoundError:
            return CommandLog(table_id=table_id, player=player)
        assert isinstance(log, CommandLog)
        return log

    def _record_on_table(self, table: Table, deal: Deal) -> None:
        """The finished deal's scores and last chain link, on its table (R-SCORE-1), signed
        with the server's key (``domain.seal``)."""
        st = deal.state
        assert st.scores is not None
        scores = {side: b["total"] for side, b in st.scores.items()}
        table.record_deal(str(deal.id), scores, final_link=deal.chain, signer=self.keys)

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
