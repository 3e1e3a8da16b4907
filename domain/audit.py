"""Audit of a deal's stored history (R-VIEW-4, R-DEAL-3, R-HIST-1): pure functions.

``audit_deal(events)`` takes the stored events of one deal, as the event store returns them
(``Deal.Started`` first), and checks three things independently:

1. the hash chain (``domain.chain``): every event commits to its predecessor, so the first
   stored event whose link does not verify is where the history was altered;
2. the commitment published with the deal (``Started.commitment``) matches the shuffle seed
   recorded in ``DeckShuffled`` (or the prepared deck of ``DeckStacked``);
3. re-application through the rules: the players' commands are rebuilt from the events and
   decided again by ``domain.rules.decide`` on the state folded so far; each command must
   produce exactly the stored events that follow (kind and data), the final score included.

Rebuilding commands: the events do not record where one command ends and the next begins
(a meld with its discard and a meld followed by a discard record the same events), so at
each position the auditor tries the candidate commands that the stored event there can
begin, largest first, and goes on after the first whose decided events equal the stored
ones. The state at a position depends only on the events before it, whatever the grouping,
so the search backtracks (should a grouping lead to a dead end) without exploring any
position twice. The history passes when some grouping reaches its end. Otherwise the
mismatch that got furthest is reported: the step of the first stored event no rebuilt
command reproduces, what the rules record there (or why they refuse), and what is stored.

``audit_table`` adds the table-level checks: every deal the table opened exists and agrees
with it, every recorded deal score equals the deal's own ``DealScored`` totals, the running
totals add up, and each deal started from the totals before it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from domain import rules
from domain.cards import CARDS
from domain.chain import event_data, first_broken_link
from domain.commands import (
    TOP,
    Answer,
    AskPartner,
    Command,
    Cut,
    DeclinePile,
    Discard,
    Draw,
    Meld,
    MeldSpec,
    PickUpPonytail,
    TakePile,
)
from domain.deal_events import DealEvent, from_data
from domain.errors import DomainError, RuleViolation
from domain.shuffle import commitment, stacked_commitment
from domain.state import DealState
from domain.variants import get_variant

_MELD_KINDS = ("MeldLaid", "MeldExtended")


def kind_of(event: Any) -> str:
    return type(event).__name__


def typed(event: Any) -> DealEvent:
    """The typed deal event a stored one records (KeyError, TypeError if it records none)."""
    return from_data(kind_of(event), event_data(event))


def _canonical(value: Any) -> str:
    """Stored values come back from JSON (tuples as lists): compare canonical JSON forms."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def describe(event: Any) -> dict[str, Any]:
    """A stored event as a plain dict: its step, kind and data (the chain link included)."""
    out: dict[str, Any] = {"step": event.originator_version, "kind": kind_of(event)}
    out.update(event_data(event))
    if hasattr(event, "chain"):
        out["chain"] = event.chain
    return out


def _decided(step: int, kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
    return {"step": step, "kind": kind, **data}


# --- the report ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Mismatch:
    """Where re-applying the rules first disagreed with the stored history."""

    step: int
    message: str
    expected: dict[str, Any] | None = None  # what the rules record at this step
    stored: dict[str, Any] | None = None  # what the store holds at this step
    command: str | None = None  # the rebuilt command, as ``seat N: Command(...)``


@dataclass(frozen=True)
class AuditReport:
    deal_id: str
    events: int
    chain_ok: bool
    first_broken_step: int | None
    commitment_ok: bool
    commitment_message: str | None
    rules_ok: bool
    first_mismatch_step: int | None
    message: str | None
    expected: dict[str, Any] | None
    stored: dict[str, Any] | None
    command: str | None
    commands: int  # commands rebuilt and re-decided successfully
    stacked: bool  # a prepared deck (tests only) instead of a shuffle
    complete: bool  # the stored history ends the deal (scored or abandoned)
    end_reason: str | None
    final_scores: dict[str, int] | None  # per side, from the stored DealScored

    @property
    def ok(self) -> bool:
        return self.chain_ok and self.commitment_ok and self.rules_ok

    def problems(self) -> list[str]:
        out = []
        if not self.chain_ok:
            out.append(f"hash chain broken at step {self.first_broken_step}")
        if not self.commitment_ok:
            out.append(f"commitment: {self.commitment_message}")
        if not self.rules_ok:
            out.append(f"rules: step {self.first_mismatch_step}: {self.message}")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "deal": self.deal_id,
            "ok": self.ok,
            "events": self.events,
            "chain_ok": self.chain_ok,
            "first_broken_step": self.first_broken_step,
            "commitment_ok": self.commitment_ok,
            "commitment_message": self.commitment_message,
            "rules_ok": self.rules_ok,
            "first_mismatch_step": self.first_mismatch_step,
            "message": self.message,
            "expected": self.expected,
            "stored": self.stored,
            "command": self.command,
            "commands": self.commands,
            "stacked": self.stacked,
            "complete": self.complete,
            "end_reason": self.end_reason,
            "final_scores": self.final_scores,
        }


# --- folding ------------------------------------------------------------------------------


def initial_state(started: Any) -> DealState:
    """The state the ``Started`` event creates (before the shuffle)."""
    data = event_data(started)
    return DealState(
        table_id=data["table_id"],
        number=data["number"],
        variant=data["variant"],
        meld_cap=get_variant(data["variant"]).meld_cap,
        decks=data["decks"],
        options=data["options"],
        players=data["players"],
        player_ids=data["player_ids"],
        order=data["order"],
        side_of=data["side_of"],
        dealer=data["dealer"],
        cutter=data["cutter"],
        scores_before=data["scores_before"],
        commitment=data["commitment"],
    )


@dataclass
class Folded:
    """The state after folding stored events up to ``step`` (or as far as they fold)."""

    state: DealState | None
    step: int
    error: str | None = None  # why folding stopped before the requested step


def fold(events: Sequence[Any], upto: int | None = None) -> Folded:
    """Fold the stored events (through ``DealState.apply``) up to step ``upto``.

    Folding trusts nothing: an event that does not fold stops it, with the reason."""
    if not events or kind_of(events[0]) != "Started":
        return Folded(None, 0, "the history does not begin with the deal's Started event")
    try:
        state = initial_state(events[0])
    except Exception as exc:  # a malformed Started event
        return Folded(None, 0, f"step 1 (Started) does not fold: {exc!r}")
    step = 1
    for event in events[1:]:
        if upto is not None and step >= upto:
            break
        try:
            state.apply(typed(event))
        except Exception as exc:
            return Folded(state, step, f"step {step + 1} ({kind_of(event)}) does not fold: {exc!r}")
        step += 1
    return Folded(state, step)


# --- (b) the commitment -------------------------------------------------------------------


def _check_commitment(deal_id: str, events: Sequence[Any]) -> tuple[bool, str | None, bool]:
    """(ok, message, stacked)."""
    if len(events) < 2:
        return False, "the history has no shuffle event", False
    published = getattr(events[0], "commitment", None)
    deck_event = events[1]
    kind = kind_of(deck_event)
    try:
        if kind == "DeckShuffled":
            seed = bytes.fromhex(deck_event.seed)
            if len(seed) != 32:
                return False, f"the recorded seed has {len(seed) * 8} bits, not 256", False
            proof = commitment(deal_id, seed)
            stacked = False
        elif kind == "DeckStacked":
            proof = stacked_commitment(deal_id, list(deck_event.order))
            stacked = True
        else:
            return False, f"step 2 is {kind}, not the shuffle", False
    except (TypeError, ValueError, AttributeError) as exc:
        return False, f"the recorded seed is malformed: {exc}", kind == "DeckStacked"
    if proof != published:
        what = "prepared deck" if stacked else "seed"
        return (
            False,
            f"the {what} recorded at step 2 does not match the commitment published at the "
            f"deal's start ({published} expected, the {what} gives {proof})",
            stacked,
        )
    return True, None, stacked


# --- (c) re-application through the rules -------------------------------------------------


def _spec(cards: Sequence[str], rank: str) -> MeldSpec:
    """A meld spec as a player would send it: the rank only for wild cards alone."""
    has_natural = any(c in CARDS and CARDS[c].is_natural for c in cards if c != TOP)
    needs_rank = not has_natural and TOP not in cards and rank != "3"
    return MeldSpec(cards=tuple(cards), rank=rank if needs_rank else None)


def _meld_run(events: Sequence[Any], i: int, seat: int) -> list[Any]:
    """The meld events by ``seat`` starting at index ``i``."""
    run = []
    for event in events[i:]:
        if kind_of(event) not in _MELD_KINDS or getattr(event, "seat", None) != seat:
            break
        run.append(event)
    return run


def _candidates(events: Sequence[Any], i: int) -> list[tuple[Any, Command]] | str:
    """The commands stored event ``i`` can begin, largest first; or why it begins none."""
    event = events[i]
    kind = kind_of(event)
    seat: Any = getattr(event, "seat", None)  # not an int in a forged event: decide refuses
    if kind == "DeckCut":
        return [(seat, Cut(event.n))]
    if kind == "CardsDrawn" and not event.replacement:
        return [(seat, Draw())]
    if kind == "PileTaken":
        run = _meld_run(events, i + 1, seat)
        out: list[tuple[Any, Command]] = []
        for n in range(len(run), 0, -1):
            specs: list[MeldSpec] = []
            for j, meld in enumerate(run[:n]):
                cards = list(meld.cards)
                if j == 0 and event.top in cards:
                    cards[cards.index(event.top)] = TOP  # card names are unique in a game
                specs.append(_spec(cards, meld.rank))
            out.append((seat, TakePile(tuple(specs))))
        return out or [(seat, TakePile(()))]
    if kind in _MELD_KINDS:
        run = _meld_run(events, i, seat)
        after = i + len(run)
        discard = None
        if (
            after < len(events)
            and kind_of(events[after]) == "CardDiscarded"
            and getattr(events[after], "seat", None) == seat
        ):
            discard = events[after].card
        out = []
        for n in range(len(run), 0, -1):
            melds = tuple(_spec(list(m.cards), m.rank) for m in run[:n])
            if n == len(run) and discard is not None:
                out.append((seat, Meld(melds, discard=discard)))
            out.append((seat, Meld(melds)))
        return out
    if kind == "CardDiscarded":
        return [(seat, Discard(event.card))]
    if kind == "PartnerAsked":
        return [(seat, AskPartner(event.partner))]
    if kind == "PartnerAnswered":
        return [(seat, Answer(event.yes))]
    if kind == "PileDeclined":
        return [(seat, DeclinePile())]
    if kind == "PonytailPickedUp":
        return [(seat, PickUpPonytail())]
    return f"a {kind} event begins no command: the rules record it only as part of one"


def _try(
    state: DealState, events: Sequence[Any], i: int, seat: int, command: Command
) -> int | Mismatch:
    """How many stored events ``command`` reproduces from index ``i``, or where it fails."""
    start = events[i].originator_version
    label = f"seat {seat}: {command!r}"
    try:
        decided = rules.decide(state, seat, command)
    except RuleViolation as refusal:
        return Mismatch(
            start,
            f"the rules refuse {label}: {refusal.code} {refusal.message}",
            stored=describe(events[i]),
            command=label,
        )
    except Exception as exc:  # data no legal history could hold (an unknown card, ...)
        return Mismatch(
            start,
            f"the rules cannot decide {label}: {type(exc).__name__}: {exc}",
            stored=describe(events[i]),
            command=label,
        )
    for j, event in enumerate(decided):
        kind, data = event.kind, event.data()
        k = i + j
        if k >= len(events):
            last = events[-1].originator_version
            return Mismatch(
                last + 1,
                f"{label} records {len(decided)} events, but the history ends after "
                f"{len(events) - i} of them",
                expected=_decided(last + 1, kind, data),
                command=label,
            )
        stored = events[k]
        if kind != kind_of(stored) or _canonical(data) != _canonical(event_data(stored)):
            step = stored.originator_version
            return Mismatch(
                step,
                f"{label} records {kind} at step {step}, but the store holds "
                f"{kind_of(stored)} with other data",
                expected=_decided(step, kind, data),
                stored=describe(stored),
                command=label,
            )
    if not decided:
        return Mismatch(start, f"{label} records nothing", stored=describe(events[i]))
    return len(decided)


def _setup(events: Sequence[Any]) -> DealState | Mismatch:
    """The state after ``Started`` and the shuffle (steps 1 and 2), or why there is none."""
    if not events or kind_of(events[0]) != "Started":
        return Mismatch(1, "the history does not begin with the deal's Started event")
    started = events[0]
    try:
        state = initial_state(started)
    except Exception as exc:
        return Mismatch(1, f"the Started event is malformed: {exc!r}")
    if state.dealer not in state.order:
        return Mismatch(1, f"the dealer {state.dealer} is not on the deal's virtual table")
    try:
        cutter = get_variant(state.variant).cutter(state.order, state.dealer)
    except DomainError as exc:
        return Mismatch(1, exc.message, stored=describe(started))
    if state.cutter != cutter:
        message = f"seat {state.cutter} cuts, but the entry's cutter is seat {cutter} (R-DEAL-4)"
        return Mismatch(1, message, stored=describe(started))
    if len(events) < 2:
        return state
    deck_event = events[1]
    kind = kind_of(deck_event)
    if kind not in ("DeckShuffled", "DeckStacked"):
        return Mismatch(2, f"step 2 is {kind}, not the shuffle", stored=describe(deck_event))
    try:
        state.apply(typed(deck_event))
    except Exception as exc:
        return Mismatch(2, f"the shuffle does not fold: {exc!r}", stored=describe(deck_event))
    return state


_ABANDON = "abandon"  # the move that a DealAbandoned event records (the host's stop)
Move = tuple[Any, Command] | str


def _moves(events: Sequence[Any], i: int) -> list[Move] | Mismatch:
    """What stored event ``i`` can begin: candidate commands (largest first), the host's
    stop, or a Mismatch when it begins nothing."""
    event = events[i]
    if kind_of(event) == "DealAbandoned":
        return [_ABANDON]
    try:
        candidates = _candidates(events, i)
    except Exception as exc:  # a field missing or of the wrong type
        message = f"the stored {kind_of(event)} event is malformed: {exc!r}"
        return Mismatch(event.originator_version, message, stored=describe(event))
    if isinstance(candidates, str):
        return Mismatch(event.originator_version, candidates, stored=describe(event))
    return list(candidates)


def _abandon(state: DealState, events: Sequence[Any], i: int) -> int | Mismatch:
    event = events[i]
    step = event.originator_version
    decided = rules.abandon(state)
    if not decided:
        return Mismatch(step, "a finished deal cannot be abandoned", stored=describe(event))
    kind, data = decided[0].kind, decided[0].data()
    if _canonical(data) != _canonical(event_data(event)):
        return Mismatch(
            step,
            "the abandonment differs from the one the rules record (R-GAME-2)",
            expected=_decided(step, kind, data),
            stored=describe(event),
        )
    return 1


def _check_rules(events: Sequence[Any]) -> tuple[Mismatch | None, int]:
    """(the first mismatch or None, the number of commands re-decided).

    A depth-first search over the ways to cut the stored events into commands, largest
    command first. The state at a position depends only on the events before it, however
    they were grouped, so each position is explored once. The history passes when some
    grouping reaches its end; otherwise the mismatch that came furthest is reported."""
    state = _setup(events)
    if isinstance(state, Mismatch):
        return state, 0
    if len(events) <= 2:
        return None, 0
    best: Mismatch | None = None
    first_moves = _moves(events, 2)
    if isinstance(first_moves, Mismatch):
        return first_moves, 0
    # (position, state there, moves not yet tried, commands so far)
    stack: list[tuple[int, DealState, list[Move], int]] = [(2, state, first_moves[::-1], 0)]
    seen = {2}
    while stack:
        i, here, untried, commands = stack[-1]
        if not untried:
            stack.pop()
            continue
        move = untried.pop()
        if isinstance(move, str):
            outcome = _abandon(here, events, i)
        else:
            outcome = _try(here, events, i, *move)
        if isinstance(outcome, Mismatch):
            if best is None or outcome.step > best.step:
                best = outcome
            continue
        after = i + outcome
        if after == len(events):
            return None, commands + (0 if isinstance(move, str) else 1)
        if after in seen:
            continue  # explored already: the same state, the same dead end
        seen.add(after)
        there = here.clone()
        for stored in events[i:after]:
            there.apply(typed(stored))  # equal to what was decided
        moves = _moves(events, after)
        if isinstance(moves, Mismatch):
            if best is None or moves.step > best.step:
                best = moves
            continue
        stack.append((after, there, moves[::-1], commands + (0 if isinstance(move, str) else 1)))
    assert best is not None  # every dead end records why
    return best, 0


def _first_broken_link(events: Sequence[Any]) -> int | None:
    """``domain.chain.first_broken_link``, also when an altered event cannot even be hashed
    (a field of the wrong type): the first event that cannot be linked is the broken one."""
    try:
        return first_broken_link(events)
    except Exception:
        for n in range(1, len(events) + 1):
            try:
                broken = first_broken_link(events[:n])
            except Exception:
                return int(events[n - 1].originator_version)
            if broken is not None:
                return broken
        return None


# --- the audit ----------------------------------------------------------------------------


def audit_deal(
    events: Sequence[Any], *, unreadable_step: int | None = None, deal_id: str | None = None
) -> AuditReport:
    """Audit one deal's stored events (the store's order, ``Started`` first).

    ``unreadable_step``: the step of a stored record that could not even be decoded; the
    events before it are audited and the chain is reported broken there at the latest.
    ``deal_id`` names the deal when no event could be read.
    """
    events = list(events)
    if deal_id is None:
        deal_id = str(events[0].originator_id) if events else ""
    broken = _first_broken_link(events)
    if unreadable_step is not None and (broken is None or unreadable_step < broken):
        broken = unreadable_step
    ok_commitment, commitment_message, stacked = _check_commitment(deal_id, events)
    mismatch, commands = _check_rules(events)
    if mismatch is None and unreadable_step is not None:
        mismatch = Mismatch(
            unreadable_step, f"the stored event at step {unreadable_step} cannot be read"
        )
    scored = [e for e in events if kind_of(e) == "DealScored"]
    final_scores = None
    if scored:
        try:
            final_scores = {side: int(b["total"]) for side, b in scored[-1].scores.items()}
        except (AttributeError, KeyError, TypeError, ValueError):
            final_scores = None
    complete = bool(events) and kind_of(events[-1]) in ("DealScored", "DealAbandoned")
    end_reason = getattr(events[-1], "reason", None) if complete else None
    return AuditReport(
        deal_id=deal_id,
        events=len(events),
        chain_ok=broken is None,
        first_broken_step=broken,
        commitment_ok=ok_commitment,
        commitment_message=commitment_message,
        rules_ok=mismatch is None,
        first_mismatch_step=mismatch.step if mismatch else None,
        message=mismatch.message if mismatch else None,
        expected=mismatch.expected if mismatch else None,
        stored=mismatch.stored if mismatch else None,
        command=mismatch.command if mismatch else None,
        commands=commands,
        stacked=stacked,
        complete=complete,
        end_reason=end_reason,
        final_scores=final_scores,
    )


# --- the table ----------------------------------------------------------------------------


@dataclass
class TableAuditReport:
    table_id: str
    deals: list[AuditReport]
    problems: list[str] = field(default_factory=list)  # table-level disagreements

    @property
    def ok(self) -> bool:
        return not self.problems and all(r.ok for r in self.deals)

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table_id,
            "ok": self.ok,
            "table_ok": not self.problems,
            "problems": list(self.problems),
            "deals": [r.to_dict() for r in self.deals],
        }


def _scored_totals(events: Sequence[Any]) -> dict[str, int] | None:
    for event in reversed(events):
        if kind_of(event) == "DealScored":
            try:
                return {side: int(b["total"]) for side, b in event.scores.items()}
            except (AttributeError, KeyError, TypeError, ValueError):
                return None
    return None


class _TableWalk:
    """The table's stored events in order, checked against its deals' histories."""

    def __init__(
        self,
        table_id: str,
        deal_events: Mapping[str, Sequence[Any]],
        unreadable: Mapping[str, int],
    ) -> None:
        self.table_id = table_id
        self.deal_events = deal_events
        self.unreadable = unreadable
        self.problems: list[str] = []
        self.reports: list[AuditReport] = []
        self.totals: dict[str, int] | None = None
        self.opened: list[str] = []
        self.recorded: set[str] = set()

    def game_started(self, event: Any) -> None:
        self.totals = {side: int(v) for side, v in event.totals.items()}

    def deal_opened(self, event: Any) -> None:
        deal_id, number = str(event.deal_id), event.number
        self.opened.append(deal_id)
        events = list(self.deal_events.get(deal_id, ()))
        unreadable = self.unreadable.get(deal_id)
        if not events and unreadable is None:
            self.problems.append(f"deal {number} ({deal_id}): opened, but it has no events")
            return
        self.reports.append(audit_deal(events, unreadable_step=unreadable, deal_id=deal_id))
        if not events:
            return
        started = events[0]
        if kind_of(started) != "Started":
            return  # the deal's own report says so
        for name in ("number", "dealer", "order"):
            theirs, ours = getattr(started, name, None), getattr(event, name)
            if _canonical(theirs) != _canonical(ours):
                self.problems.append(
                    f"deal {number}: the table opened it with {name} {ours}, the deal says {theirs}"
                )
        if getattr(started, "table_id", None) != self.table_id:
            self.problems.append(f"deal {number}: the deal names table {started.table_id}")
        before = getattr(started, "scores_before", None)
        if self.totals is not None and _canonical(before) != _canonical(self.totals):
            self.problems.append(
                f"deal {number}: it started from {before}, but the table's totals were "
                f"{self.totals}"
            )

    def deal_recorded(self, event: Any) -> None:
        deal_id = str(event.deal_id)
        self.recorded.add(deal_id)
        scores = {side: int(v) for side, v in event.scores.items()}
        scored = _scored_totals(self.deal_events.get(deal_id, ()))
        if deal_id not in self.opened:
            self.problems.append(f"the table recorded deal {deal_id}, which it never opened")
        link = getattr(event, "final_link", "")
        history = self.deal_events.get(deal_id, ())
        if link and history and getattr(history[-1], "chain", None) != link:
            self.problems.append(
                f"deal {deal_id}: its last hash-chain link is not the one the table recorded "
                "(the deal's history was changed or cut short after it was scored)"
            )
        if scored != scores:
            self.problems.append(
                f"deal {deal_id}: the table recorded {scores}, the deal scored {scored}"
            )
        if self.totals is not None:
            expected = {side: self.totals[side] + scores.get(side, 0) for side in self.totals}
            stored = {side: int(v) for side, v in event.totals.items()}
            if expected != stored:
                self.problems.append(
                    f"deal {deal_id}: the table's totals became {stored}, not {self.totals} "
                    f"plus the deal's scores ({expected})"
                )
            self.totals = stored

    def finish(self) -> None:
        for deal_id in self.opened:
            scored = _scored_totals(self.deal_events.get(deal_id, ()))
            if scored is not None and deal_id not in self.recorded:
                self.problems.append(f"deal {deal_id} was scored but the table never recorded it")


def audit_table(
    table_id: str,
    table_events: Sequence[Any],
    deal_events: Mapping[str, Sequence[Any]],
    *,
    unreadable: Mapping[str, int] | None = None,
) -> TableAuditReport:
    """Audit every deal the table opened (in order), and the table's record of them.

    ``deal_events`` maps each deal id (as in the table's ``DealOpened`` events) to the
    deal's stored events; a deal missing from it (or with no events) is a problem.
    ``unreadable`` maps a deal id to the step of its first record that could not be decoded.
    """
    walk = _TableWalk(table_id, deal_events, unreadable or {})
    handlers = {
        "GameStarted": walk.game_started,
        "DealOpened": walk.deal_opened,
        "DealRecorded": walk.deal_recorded,
    }
    for event in table_events:
        handler = handlers.get(kind_of(event))
        if handler is None:
            continue
        try:
            handler(event)
        except Exception as exc:  # a field missing or of the wrong type
            version = getattr(event, "originator_version", "?")
            walk.problems.append(
                f"the table's {kind_of(event)} event (version {version}) is malformed: {exc!r}"
            )
    walk.finish()
    return TableAuditReport(table_id=table_id, deals=walk.reports, problems=walk.problems)
