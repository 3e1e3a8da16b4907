"""The ``Table`` aggregate: seats, teams, options, dealers and cumulative scores.

Each deal is its own ``Deal`` aggregate; the table records which deals were opened and
what they scored, and decides when the game ends (R-GAME-1) or was stopped (R-GAME-2).
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping, Sequence
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate, event

from domain.errors import Conflict, Forbidden, SetupError
from domain.seating import choose_sides, next_dealer, virtual_table
from domain.variants import get_variant

OPEN = "open"  # seats being filled
PLAYING = "playing"
FINISHED = "finished"  # a side reached the target (R-GAME-1)
STOPPED = "stopped"  # the host stopped the game early (R-GAME-2)

#: A private table's seat asked for without its invite code, or with a wrong one.
INVITE_REQUIRED = "invite_required"
INVITE_INVALID = "invite_invalid"
#: A rematch asked for before the game ended or was stopped.
GAME_NOT_OVER = "game_not_over"


def rematch_id(table_id: UUID | str) -> UUID:
    """The rematch of a table has an id derived from the table's: two requests (in any
    process) for the same rematch open the same table, and the store keeps only one."""
    return uuid5(NAMESPACE_URL, f"canasta-ledger:{table_id}:rematch")


#: A bot's name at a table: ``bot:<level>:<seat>`` (docs/bots.md). People's names cannot
#: contain ':' (``domain.accounts.check_name``), so no person is ever taken for a bot.
BOT_PREFIX = "bot:"


def bot_name(level: str, seat: int) -> str:
    return f"{BOT_PREFIX}{level}:{seat}"


def bot_level(player: str | None) -> str | None:
    """The level of the bot of this name, None for a person (or a free seat)."""
    if player is None or not player.startswith(BOT_PREFIX):
        return None
    return player.split(":")[1]


class Table(Aggregate):
    @event("Created")
    def __init__(
        self,
        host: str,
        entry: str,
        players: int,
        options: dict[str, bool],
        target: int,
        private: bool = False,
        invite: str | None = None,
        spectators: bool = True,
        rematch_of: str | None = None,
        turn_seconds: int | None = None,
    ) -> None:
        """``turn_seconds``: the turn clock (None: none; docs/tables.md, "Turn clock");
        ``private``: unlisted, joined with an invite code whose hash is ``invite`` (the
        code itself is never recorded); ``spectators``: whether people without a seat may
        watch; ``rematch_of``: the table this one is the rematch of. Tables recorded before
        these existed read as listed, watchable and no rematch (the defaults)."""
        self.host = host
        self.entry = entry
        self.players = players
        self.options = dict(options)
        self.target = target
        self.seats: list[str | None] = [None] * players
        self.sides: dict[str, list[int]] | None = None
        self.status = OPEN
        self.totals: dict[str, int] = {}
        self.deals: list[str] = []  # deal ids, in order
        self.deal_scores: list[dict[str, int]] = []  # per completed deal, per side
        self.dealer: int | None = None
        self.order: list[int] = []  # the current deal's virtual table
        self.winners: list[str] | None = None
        self.rotation = 0
        self.private = private
        self.invite = invite
        self.spectators = spectators
        self.rematch_of = rematch_of
        self.rematch: str | None = None  # the id of this table's rematch, once opened
        self.turn_seconds = turn_seconds

    @staticmethod
    def check_setup(
        entry: str, players: int, options: Mapping[str, object], target: int | None
    ) -> int:
        """R-SEAT-3: a valid entry, player count, options and target; returns the target."""
        variant = get_variant(entry)
        if players not in variant.player_counts:
            counts = ", ".join(map(str, variant.player_counts))
            raise SetupError("R-SEAT-1", f"{entry} is played by {counts} players, not {players}")
        for name, value in options.items():
            if not isinstance(value, bool):
                raise SetupError("R-SEAT-3", f"option {name!r} is true or false")
            if value and name not in variant.options:  # an option left off is no option
                raise SetupError("R-SEAT-3", f"{entry} has no option {name!r}")
        if target is None or target == variant.target:
            return variant.target
        if target not in variant.selectable_targets:
            raise SetupError("R-SEAT-3", f"{entry} plays to {variant.target}; no other target")
        return target

    # --- before the game -----------------------------------------------------------------
    def seat_of(self, player: str) -> int | None:
        return self.seats.index(player) if player in self.seats else None

    def join(self, player: str, seat: int | None = None, invite: str | None = None) -> int:
        """``invite``: the hash of the invite code given, needed at a private table by
        everybody but its host (checked before anything else, so a wrong code learns
        nothing about the seats)."""
        self.check_invite(player, invite)
        if self.status != OPEN:
            raise SetupError("R-SEAT-5", "the game has started; no seat can be taken")
        if player in self.seats:
            raise SetupError("R-SEAT-5", "you already have a seat at this table")
        if seat is None:
            free = [i for i, p in enumerate(self.seats) if p is None]
            if not free:
                raise SetupError("R-SEAT-5", "the table is full")
            seat = free[0]
        elif not 0 <= seat < self.players:
            raise SetupError("R-SEAT-5", f"there is no seat {seat}")
        elif self.seats[seat] is not None:
            raise SetupError("R-SEAT-5", f"seat {seat} is taken")
        self._seat_player(seat=seat, player=player)
        return seat

    def seat_bot(self, player: str, level: str, seat: int | None = None) -> int:
        """The host seats a bot of ``level`` in a free seat (the first, if ``seat`` is None)
        before the start (R-SEAT-3, R-SEAT-5); it is recorded as ``PlayerSeated`` with the
        bot's name (``bot_name``)."""
        self.check_host(player)
        if seat is None and self.status == OPEN:
            seat = next((i for i, p in enumerate(self.seats) if p is None), None)
            if seat is None:
                raise SetupError("R-SEAT-5", "the table is full")
        # The host seats it: the table's own invite (if private) lets it in.
        return self.join(bot_name(level, -1 if seat is None else seat), seat, self.invite)

    @event("PlayerSeated")
    def _seat_player(self, seat: int, player: str) -> None:
        self.seats[seat] = player

    # --- privacy -------------------------------------------------------------------------
    def check_invite(self, player: str, invite: str | None) -> None:
        if self.invite is None or player == self.host:
            return
        if invite is None:
            raise Forbidden(INVITE_REQUIRED, "this table is private: its invite code is needed")
        if not hmac.compare_digest(invite, self.invite):
            raise Forbidden(INVITE_INVALID, "that is not this table's invite code")

    def rotate_invite(self, player: str, invite: str) -> None:
        """The host replaces the invite code (the old one stops working)."""
        self.check_host(player)
        if not self.private:
            raise SetupError("R-SEAT-3", "only a private table has an invite code")
        if self.status not in (OPEN, PLAYING):
            raise SetupError("R-SEAT-3", f"the game is {self.status}: no more invitations")
        self._invite_rotated(invite=invite)

    @event("InviteRotated")
    def _invite_rotated(self, invite: str) -> None:
        self.invite = invite

    def allow_spectators(self, player: str, allowed: bool) -> None:
        """The host allows or refuses spectators, before the start only."""
        self.check_host(player)
        if self.status != OPEN:
            raise SetupError("R-SEAT-3", "spectators are allowed or not before the start only")
        if allowed != self.spectators:
            self._spectators_set(allowed=allowed)

    @event("SpectatorsSet")
    def _spectators_set(self, allowed: bool) -> None:
        self.spectators = allowed

    def set_turn_clock(self, player: str, turn_seconds: int | None) -> None:
        """The host sets the turn clock (None: off), before the start only; the game keeps
        it (``domain.clock.check_turn_seconds`` checks the value first)."""
        self.check_host(player)
        if self.status != OPEN:
            raise SetupError("R-SEAT-3", "the turn clock is set before the start only")
        if turn_seconds != self.turn_seconds:
            self._turn_clock_set(turn_seconds=turn_seconds)

    @event("TurnClockSet")
    def _turn_clock_set(self, turn_seconds: int | None) -> None:
        self.turn_seconds = turn_seconds

    def may_watch(self, player: str | None) -> bool:
        """Whether ``player`` (None: nobody signed in) may see the table and its deals:
        anybody if spectators are allowed, else its host and seated players (auditors are
        let in by the application, which knows roles)."""
        return self.spectators or (player is not None and self.participant(player))

    def participant(self, player: str) -> bool:
        return player == self.host or player in self.seats

    def choose_teams(self, player: str, teams: Sequence[Sequence[int]]) -> None:
        self.check_host(player)
        if self.status != OPEN:
            raise SetupError("R-SEAT-3", "teams are fixed once the game has started")
        variant = get_variant(self.entry)
        if self.players not in variant.host_chooses_teams:
            raise SetupError("R-SEAT-3", f"teams are fixed for {self.players} players")
        sides = choose_sides(variant, self.players, teams)
        self._choose_teams(sides=sides)

    @event("TeamsChosen")
    def _choose_teams(self, sides: dict[str, list[int]]) -> None:
        self.sides = {k: list(v) for k, v in sides.items()}

    def check_can_start(self, player: str) -> dict[str, list[int]]:
        self.check_host(player)
        if self.status != OPEN:
            raise SetupError("R-SEAT-3", "the game has already started")
        if any(p is None for p in self.seats):
            raise SetupError("R-SEAT-5", "every seat must be taken before the start")
        return self.sides_for_start()

    def sides_for_start(self) -> dict[str, list[int]]:
        if self.sides is not None:
            return self.sides
        variant = get_variant(self.entry)
        if self.players in variant.host_chooses_teams:
            raise SetupError("R-SEAT-3", "the host must choose the teams first")
        return choose_sides(variant, self.players, None)

    @staticmethod
    def opening_totals(
        sides: Mapping[str, Sequence[int]], scores_before: Mapping[str, int] | None = None
    ) -> dict[str, int]:
        """Every side starts at 0, or (tests and scenarios) at ``scores_before`` (R-SEAT-3:
        only sides of the table)."""
        totals = {side: 0 for side in sorted(sides)}
        if scores_before:
            unknown = set(scores_before) - set(totals)
            if unknown:
                raise SetupError("R-SEAT-3", f"no such side: {sorted(unknown)}")
            totals.update({k: int(v) for k, v in scores_before.items()})
        return totals

    @event("GameStarted")
    def start(self, sides: dict[str, list[int]], totals: dict[str, int], rotation: int) -> None:
        """``rotation`` shifts the sit-out rotation (0 in play; scenarios may set it)."""
        self.sides = {k: list(v) for k, v in sides.items()}
        self.totals = dict(totals)
        self.rotation = rotation
        self.status = PLAYING

    def virtual_table(self, number: int) -> list[int]:
        """The clockwise order of the active seats of deal ``number`` (R-SEAT-2)."""
        assert self.sides is not None
        return virtual_table(
            self.sides, number - 1 + self.rotation, get_variant(self.entry).sit_outs
        )

    # --- deals ---------------------------------------------------------------------------
    def next_deal(self, player: str) -> tuple[int, list[int], int]:
        """The host opens the next deal of a game in play once the current one is over
        (R-GAME-1): its number, virtual table (R-SEAT-2) and dealer (R-DEAL-2)."""
        self.check_host(player)
        if self.status != PLAYING:
            raise SetupError("R-SEAT-3", f"the game is {self.status}")
        if len(self.deal_scores) < len(self.deals):
            raise SetupError("R-GAME-1", "the current deal is not over")
        assert self.sides is not None and self.dealer is not None
        number = len(self.deals) + 1
        order = self.virtual_table(number)
        return number, order, next_dealer(self.order, self.dealer, order)

    @event("DealOpened")
    def open_deal(self, deal_id: str, number: int, dealer: int, order: list[int]) -> None:
        self.deals.append(deal_id)
        self.dealer = dealer
        self.order = list(order)

    def record_deal(self, deal_id: str, scores: Mapping[str, int], final_link: str = "") -> None:
        """Add a completed deal's scores; end the game if a side reached the target.

        ``final_link`` is the deal's last hash-chain link: the table's own stream then
        vouches for the whole history of the deal (an audit compares them)."""
        totals = {side: self.totals[side] + scores.get(side, 0) for side in self.totals}
        self._deal_recorded(
            deal_id=deal_id, scores=dict(scores), totals=totals, final_link=final_link
        )
        won = get_variant(self.entry).winners(self.totals, self.target, len(self.deal_scores))
        if won is not None:
            self._game_ended(winners=won)

    @event("DealRecorded")
    def _deal_recorded(
        self, deal_id: str, scores: dict[str, int], totals: dict[str, int], final_link: str
    ) -> None:
        self.deal_scores.append(dict(scores))
        self.totals = dict(totals)

    @event("GameEnded")
    def _game_ended(self, winners: list[str]) -> None:
        self.winners = list(winners)
        self.status = FINISHED

    def stop(self, player: str) -> None:
        self.check_host(player)
        if self.status != PLAYING:
            raise SetupError(
                "R-GAME-2", f"only a game in play can be stopped (it is {self.status})"
            )
        self._stopped(completed_deals=len(self.deal_scores))

    @event("GameStopped")
    def _stopped(self, completed_deals: int) -> None:
        self.status = STOPPED

    # --- rematch -------------------------------------------------------------------------
    def check_rematch(self, player: str) -> None:
        """A seated player or the host asks for a rematch once the game is over."""
        if not self.participant(player):
            raise Forbidden("R-SEAT-3", "only the host or a player of this table may ask")
        if self.status not in (FINISHED, STOPPED):
            raise Conflict(f"the game is {self.status}: no rematch yet", code=GAME_NOT_OVER)

    def open_rematch(self) -> Table:
        """The rematch: a new open table with the same host, entry, player count, options,
        target, turn clock and privacy (the same invite code), the same players in the same seats and,
        where the host chose them, the same teams. This table records it."""
        new = type(self)._create(
            type(self).Created,
            id=rematch_id(self.id),
            host=self.host,
            entry=self.entry,
            players=self.players,
            options=dict(self.options),
            target=self.target,
            private=self.private,
            invite=self.invite,
            spectators=self.spectators,
            rematch_of=str(self.id),
            turn_seconds=self.turn_seconds,
        )
        for seat, player in enumerate(self.seats):
            if player is not None:
                new._seat_player(seat=seat, player=player)
        if self.sides is not None and self.players in get_variant(self.entry).host_chooses_teams:
            new._choose_teams(sides=self.sides)
        self._rematch_opened(table_id=str(new.id))
        return new

    @event("RematchOpened")
    def _rematch_opened(self, table_id: str) -> None:
        self.rematch = table_id

    def check_host(self, player: str) -> None:
        if player != self.host:
            raise Forbidden("R-SEAT-3", "only the host may do this")
