"""Check (c) of the audit: re-deciding the deal. The players' commands are rebuilt from the
stored events and decided again by ``domain.rules.decide`` on the state folded so far; each
must produce exactly the stored events that follow (see ``domain.audit``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from domain import rules
from domain.audit.report import Mismatch
from domain.audit.stored import (
    StoredEvent,
    as_decided,
    canonical,
    describe,
    initial_state,
    kind_of,
    typed,
)
from domain.cards import CARDS
from domain.chain import event_data
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
    TimeOut,
)
from domain.constants import OVER
from domain.deal import Deal
from domain.errors import DomainError, RuleViolation
from domain.events import (
    CardDiscarded,
    CardsDrawn,
    DealAbandoned,
    DeckCut,
    DeckShuffled,
    DeckStacked,
    MeldExtended,
    MeldLaid,
    PartnerAnswered,
    PartnerAsked,
    PileDeclined,
    PileTaken,
    PonytailPickedUp,
    SeatPlayerChanged,
    TurnClockRestarted,
    TurnTimedOut,
)
from domain.refusals import Said, said
from domain.state import DealState
from domain.variants import get_variant

_MELDS = (MeldLaid, MeldExtended)


# --- (c) re-application through the rules -------------------------------------------------


def _spec(cards: Sequence[str], rank: str) -> MeldSpec:
    """A meld spec as a player would send it: the rank only for wild cards alone."""
    has_natural = any(c in CARDS and CARDS[c].is_natural for c in cards if c != TOP)
    needs_rank = not has_natural and TOP not in cards and rank != "3"
    return MeldSpec(cards=tuple(cards), rank=rank if needs_rank else None)


def _meld_run(events: Sequence[StoredEvent], i: int, seat: object) -> list[MeldLaid | MeldExtended]:
    """The meld events by ``seat`` starting at index ``i``."""
    run: list[MeldLaid | MeldExtended] = []
    for event in events[i:]:
        if not isinstance(event, _MELDS) or getattr(event, "seat", None) != seat:
            break
        run.append(event)
    return run


# A rebuilt command and its seat as stored, left untyped: a forged event may hold anything
# there, and ``rules.decide`` refuses a seat that does not play the deal (that refusal is the
# audit's finding).
Candidate = tuple[Any, Command]


def _candidates(events: Sequence[StoredEvent], i: int) -> list[Candidate] | Said:
    """The commands stored event ``i`` can begin, largest first; or why it begins none."""
    event = events[i]
    kind = kind_of(event)
    seat = getattr(event, "seat", None)
    if isinstance(event, DeckCut):
        return [(seat, Cut(event.n))]
    if isinstance(event, CardsDrawn) and not event.replacement:
        return [(seat, Draw())]
    if isinstance(event, PileTaken):
        run = _meld_run(events, i + 1, seat)
        out: list[Candidate] = []
        for n in range(len(run), 0, -1):
            specs: list[MeldSpec] = []
            for j, meld in enumerate(run[:n]):
                cards = list(meld.cards)
                if j == 0 and event.top in cards:
                    cards[cards.index(event.top)] = TOP  # card names are unique in a game
                specs.append(_spec(cards, meld.rank))
            out.append((seat, TakePile(tuple(specs))))
        return out or [(seat, TakePile(()))]
    if isinstance(event, _MELDS):
        run = _meld_run(events, i, seat)
        after = i + len(run)
        discard = None
        following = events[after] if after < len(events) else None
        if isinstance(following, CardDiscarded) and getattr(following, "seat", None) == seat:
            discard = following.card
        out = []
        for n in range(len(run), 0, -1):
            melds = tuple(_spec(list(m.cards), m.rank) for m in run[:n])
            if n == len(run) and discard is not None:
                out.append((seat, Meld(melds, discard=discard)))
            out.append((seat, Meld(melds)))
        return out
    if isinstance(event, CardDiscarded):
        return [(seat, Discard(event.card))]
    if isinstance(event, PartnerAsked):
        return [(seat, AskPartner(event.partner))]
    if isinstance(event, PartnerAnswered):
        return [(seat, Answer(event.yes))]
    if isinstance(event, PileDeclined):
        return [(seat, DeclinePile())]
    if isinstance(event, PonytailPickedUp):
        return [(seat, PickUpPonytail())]
    if isinstance(event, TurnTimedOut):  # the turn clock (docs/tables.md): the rules only
        return [(seat, TimeOut(event.on_step))]  # check the seat; the time is the recorder's
    return said("audit.begins_no_command", kind=kind)


def _try(
    state: DealState, events: Sequence[StoredEvent], i: int, seat: int, command: Command
) -> int | Mismatch:
    """How many stored events ``command`` reproduces from index ``i``, or where it fails."""
    start = events[i].originator_version
    label = f"seat {seat}: {command!r}"
    try:
        decided = rules.decide(state, seat, command)
    except RuleViolation as refusal:
        quoted = Said(refusal.key, refusal.params) if refusal.key else None
        why = Said(
            "audit.rules_refuse",
            dict(command=label, code=refusal.code, why=refusal.message),
            quoted,
        )
        return Mismatch(
            start,
            why,
            stored=describe(events[i]),
            command=label,
        )
    except Exception as exc:  # data no legal history could hold (an unknown card, ...)
        return Mismatch(
            start,
            said("audit.rules_cannot_decide", command=label, error=f"{type(exc).__name__}: {exc}"),
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
                said(
                    "audit.history_ends",
                    command=label,
                    decided=len(decided),
                    stored=len(events) - i,
                ),
                expected=as_decided(last + 1, kind, data),
                command=label,
            )
        stored = events[k]
        if kind != kind_of(stored) or canonical(data) != canonical(event_data(stored)):
            step = stored.originator_version
            return Mismatch(
                step,
                said(
                    "audit.other_event", command=label, kind=kind, step=step, stored=kind_of(stored)
                ),
                expected=as_decided(step, kind, data),
                stored=describe(stored),
                command=label,
            )
    if not decided:
        return Mismatch(
            start, said("audit.records_nothing", command=label), stored=describe(events[i])
        )
    return len(decided)


def _setup(events: Sequence[StoredEvent]) -> DealState | Mismatch:
    """The state after ``Started`` and the shuffle (steps 1 and 2), or why there is none."""
    started = events[0] if events else None
    if not isinstance(started, Deal.Started):
        return Mismatch(1, said("audit.no_started"))
    try:
        state = initial_state(started)
    except Exception as exc:
        return Mismatch(1, said("audit.started_malformed", error=repr(exc)))
    if state.dealer not in state.order:
        return Mismatch(1, said("audit.dealer_off_table", dealer=state.dealer))
    try:
        cutter = get_variant(state.variant).cutter(state.order, state.dealer)
    except DomainError as exc:
        assert exc.key is not None  # every refusal of the domain is worded by key
        return Mismatch(1, Said(exc.key, exc.params), stored=describe(started))
    if state.cutter != cutter:
        why = said("audit.wrong_cutter", seat=state.cutter, cutter=cutter)
        return Mismatch(1, why, stored=describe(started))
    if len(events) < 2:
        return state
    deck_event = events[1]
    kind = kind_of(deck_event)
    if not isinstance(deck_event, (DeckShuffled, DeckStacked)):
        return Mismatch(2, said("audit.not_the_shuffle", kind=kind), stored=describe(deck_event))
    try:
        state.apply(typed(deck_event))
    except Exception as exc:
        why = said("audit.shuffle_no_fold", error=repr(exc))
        return Mismatch(2, why, stored=describe(deck_event))
    return state


_ABANDON = "abandon"  # the move that a DealAbandoned event records (the host's stop)
_CHANGE = "change"  # a SeatPlayerChanged event: who plays a seat (docs/tables.md)
_RESTART = "restart"  # a TurnClockRestarted event: a clock started again after an outage
Move = Candidate | str


def _moves(events: Sequence[StoredEvent], i: int) -> list[Move] | Mismatch:
    """What stored event ``i`` can begin: candidate commands (largest first), the host's
    stop, or a Mismatch when it begins nothing."""
    event = events[i]
    if isinstance(event, DealAbandoned):
        return [_ABANDON]
    if isinstance(event, SeatPlayerChanged):
        return [_CHANGE]
    if isinstance(event, TurnClockRestarted):
        return [_RESTART]
    try:
        candidates = _candidates(events, i)
    except Exception as exc:  # a field missing or of the wrong type
        why = said("audit.event_malformed", kind=kind_of(event), error=repr(exc))
        return Mismatch(event.originator_version, why, stored=describe(event))
    if isinstance(candidates, Said):
        return Mismatch(event.originator_version, candidates, stored=describe(event))
    return list(candidates)


def _abandon(state: DealState, events: Sequence[StoredEvent], i: int) -> int | Mismatch:
    event = events[i]
    step = event.originator_version
    decided = rules.abandon(state)
    if not decided:
        return Mismatch(step, said("audit.abandon_finished"), stored=describe(event))
    kind, data = decided[0].kind, decided[0].data()
    if canonical(data) != canonical(event_data(event)):
        return Mismatch(
            step,
            said("audit.abandon_differs"),
            expected=as_decided(step, kind, data),
            stored=describe(event),
        )
    return 1


def _change(state: DealState, events: Sequence[StoredEvent], i: int) -> int | Mismatch:
    """A change of who plays a seat is not a command: it may come at any step of a deal not
    over, for a seat of the table, to a new player (``Deal.change_player``)."""
    event = events[i]
    seat, player = getattr(event, "seat", None), getattr(event, "player", None)
    if (
        state.phase == OVER
        or not isinstance(seat, int)
        or not 0 <= seat < state.players
        or not isinstance(player, str)
        or state.player_ids[seat] == player
    ):
        return Mismatch(event.originator_version, said("audit.change_here"), stored=describe(event))
    return 1


def _restart(state: DealState, events: Sequence[StoredEvent], i: int) -> int | Mismatch:
    """A turn clock started again after an outage of the server is not a command: the
    outage is the recorder's to know; the history shows that it restarts the clock of the
    seat to act, whose turn has not timed out, and that the outage ends after it began
    (``Deal.restart_clock``)."""
    event = events[i]
    seat = getattr(event, "seat", None)
    down, up = getattr(event, "down", None), getattr(event, "up", None)
    try:
        ends = datetime.fromisoformat(str(up))
        ordered = down is None or datetime.fromisoformat(str(down)) <= ends
    except (TypeError, ValueError):
        ordered = False
    if not ordered or seat is None or seat != state.to_act or seat in state.timed_out:
        return Mismatch(
            event.originator_version, said("audit.restart_here"), stored=describe(event)
        )
    return 1


def check_rules(events: Sequence[StoredEvent]) -> tuple[Mismatch | None, int]:
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
        if move == _CHANGE:
            outcome = _change(here, events, i)
        elif move == _RESTART:
            outcome = _restart(here, events, i)
        elif isinstance(move, str):
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
