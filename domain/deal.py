"""The ``Deal`` aggregate: one stream per hand, from the shuffle to the score."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate

from domain import rules
from domain.chain import GENESIS, link
from domain.commands import Command, TimeOut
from domain.constants import OVER
from domain.deal_events import (
    DealEvent,
    DeckShuffled,
    DeckStacked,
    SeatPlayerChanged,
    TurnClockRestarted,
)
from domain.errors import RuleViolation
from domain.events import EVENT_CLASSES
from domain.state import DealState, Options
from domain.variants import get_variant


class Deal(Aggregate):
    """Enforces every rule of a deal through ``domain.rules.decide``."""

    #: The recorded time (ISO 8601) of the event that made the seat to act the one it is:
    #: where its turn clock starts (``domain.clock``; None in deals read from snapshots
    #: taken before the clock existed). Set by the fold (``domain.events.DealEvent.apply``).
    turn_since: str | None = None

    class Started(Aggregate.Created):
        table_id: str
        number: int
        variant: str
        decks: int
        options: dict[str, bool]
        players: int
        player_ids: list[str]
        order: list[int]
        side_of: list[str]
        dealer: int
        cutter: int
        scores_before: dict[str, int]
        commitment: str  # public hash of the seed and the deal id (R-DEAL-3)
        chain: str  # first link of the deal's hash chain (domain.chain)

    def __init__(
        self,
        *,
        table_id: str,
        number: int,
        variant: str,
        decks: int,
        options: Options,
        players: int,
        player_ids: list[str],
        order: list[int],
        side_of: list[str],
        dealer: int,
        cutter: int,
        scores_before: dict[str, int],
        commitment: str,
        chain: str,
    ) -> None:
        self.chain = chain
        self.state = DealState(
            table_id=table_id,
            number=number,
            variant=variant,
            meld_cap=get_variant(variant).meld_cap,  # the entry's rule, given to the fold
            decks=decks,
            options=options,
            players=players,
            player_ids=player_ids,
            order=order,
            side_of=side_of,
            dealer=dealer,
            cutter=cutter,
            scores_before=scores_before,
            commitment=commitment,
        )

    @classmethod
    def start(cls, deal_id: UUID, **started: Any) -> Deal:
        timestamp = cls.Started.create_timestamp()
        first = link(
            GENESIS, str(deal_id), cls.INITIAL_VERSION, "Started", timestamp.isoformat(), started
        )
        return cls._create(cls.Started, id=deal_id, timestamp=timestamp, chain=first, **started)

    def shuffle(self, seed: bytes) -> None:
        self.record([DeckShuffled(seed.hex())])

    def stack(self, order: list[str]) -> None:
        self.record([DeckStacked(list(order))])

    def execute(self, seat: int, command: Command) -> None:
        """Apply a command from a room seat, or raise RuleViolation and change nothing."""
        if isinstance(command, TimeOut) and command.step != self.version:
            raise RuleViolation("R-CMD-1", "timeout.stale", step=command.step, at=self.version)
        self.record(rules.decide(self.state, seat, command))

    def abandon(self) -> None:
        self.record(rules.abandon(self.state))

    def change_player(self, seat: int, player: str, reason: str) -> None:
        """``player`` plays room ``seat`` from now on (docs/tables.md, absent players); only
        in a deal not over, for a seat of the table and a new player."""
        st = self.state
        if st.phase == OVER or not 0 <= seat < st.players or st.player_ids[seat] == player:
            raise ValueError(f"seat {seat} cannot change player now")
        self.record([SeatPlayerChanged(seat=seat, player=player, reason=reason)])

    def restart_clock(self, seat: int, down: str | None, up: str) -> None:
        """``seat``'s turn ran through an outage of the server (``down`` to ``up``): its clock
        starts again, in full (docs/tables.md, "Turn clock"); only for the seat to act,
        whose turn has not timed out, in a deal not over (``domain.clock.restart_due`` says
        when one is due)."""
        st = self.state
        if st.to_act is None or seat != st.to_act or seat in st.timed_out:
            raise ValueError(f"seat {seat}'s turn clock cannot restart now")
        self.record([TurnClockRestarted(seat=seat, down=down, up=up)])

    def __deepcopy__(self, memo: dict[int, Any]) -> Deal:
        """Fast copy for the aggregate cache: the state knows how to clone itself."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.__dict__["state"] = self.state.clone()
        new.__dict__["_pending_events"] = list(self._pending_events)
        return new

    def record(self, events: list[DealEvent]) -> None:
        """Trigger the decided events (as their stored classes), each linked to its
        predecessor."""
        deal_id = str(self.id)
        for decided in events:
            kind = type(decided).__name__
            data = decided.data()
            cls = EVENT_CLASSES[kind]
            timestamp = cls.create_timestamp()
            chain = link(self.chain, deal_id, self.version + 1, kind, timestamp.isoformat(), data)
            self.trigger_event(cls, timestamp=timestamp, chain=chain, **data)
