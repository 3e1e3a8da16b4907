"""The ``Table`` aggregate: seats, teams, options, dealers and cumulative scores.

Each deal is its own ``Deal`` aggregate; the table records which deals were opened and
what they scored, and decides when the game ends (R-GAME-1) or was stopped (R-GAME-2).

Past 500 lines on purpose: every method that records an event is an ``@event`` method of the
aggregate class itself (the library builds the event classes from them), so the class stays
whole; what is pure lives beside it (``domain.seating``, ``domain.bot_names``, ``domain.seal``).
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping, Sequence
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate, event

from domain.bot_names import bot_level, bot_name, stand_in_name
from domain.errors import Conflict, Forbidden, SetupError
from domain.seal import Signer, record_message
from domain.seating import choose_sides, next_dealer, virtual_table
from domain.variants import get_variant

OPEN = "open"  # seats being filled
PLAYING = "playing"
FINISHED = "finished"  # a side reached the target (R-GAME-1)
STOPPED = "stopped"  # the host stopped the game early (R-GAME-2)

#: Absent players (docs/tables.md): why a seat's player changes, and the refusals.
LEFT = "left"
MISSED_TURNS = "missed_turns"
TAKEN_BACK = "taken_back"
GIVEN = "given"
#: Consecutive turns a player may miss before the bot takes his seat over (0: never).
DEFAULT_MISSED_TURNS_LIMIT = 2
MAX_MISSED_TURNS_LIMIT = 10
NOT_SEATED = "not_seated"  # a leave by somebody with no seat at the table
SEAT_AWAY = "seat_away"  # a leave by a player already away
SEAT_NOT_VACANT = "seat_not_vacant"  # a give of a seat its player plays
HOST_SEAT = "host_seat"  # a give of the host's own seat (he takes it back instead)
#: A private table's seat asked for without its invite code, or with a wrong one.
INVITE_REQUIRED = "invite_required"
INVITE_INVALID = "invite_invalid"
#: A rematch asked for before the game ended or was stopped.
GAME_NOT_OVER = "game_not_over"


def rematch_id(table_id: UUID | str) -> UUID:
    """The rematch of a table has an id derived from the table's: two requests (in any
    process) for the same rematch open the same table, and the store keeps only one."""
    return uuid5(NAMESPACE_URL, f"canasta-ledger:{table_id}:rematch")


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
            counts = variant.player_counts
            raise SetupError(
                "R-SEAT-1", "table.players", entry=entry, counts=counts, players=players
            )
        for name, value in options.items():
            if not isinstance(value, bool):
                raise SetupError("R-SEAT-3", "table.option_bool", name=name)
            if value and name not in variant.options:  # an option left off is no option
                raise SetupError("R-SEAT-3", "table.no_option", entry=entry, name=name)
        if target is None or target == variant.target:
            return variant.target
        if not variant.selectable_targets:
            raise SetupError("R-SEAT-3", "table.one_target", entry=entry, target=variant.target)
        if target not in variant.selectable_targets:
            others = variant.selectable_targets
            raise SetupError(
                "R-SEAT-3",
                "table.targets",
                entry=entry,
                target=variant.target,
                others=others,
                chosen=target,
            )
        return target

    # --- before the game -----------------------------------------------------------------
    def seat_of(self, player: str) -> int | None:
        return self.seats.index(player) if player in self.seats else None

    def seat_taken(self, seat: int) -> bool:
        return 0 <= seat < self.players and self.seats[seat] is not None

    def join(self, player: str, seat: int | None = None, invite: str | None = None) -> int:
        """``invite``: the hash of the invite code given, needed at a private table by
        everybody but its host (checked before anything else, so a wrong code learns
        nothing about the seats)."""
        self.check_invite(player, invite)
        if self.status != OPEN:
            raise SetupError("R-SEAT-5", "seat.started")
        if player in self.seats:
            raise SetupError("R-SEAT-5", "seat.have_one")
        if seat is None:
            free = [i for i, p in enumerate(self.seats) if p is None]
            if not free:
                raise SetupError("R-SEAT-5", "seat.full")
            seat = free[0]
        elif not 0 <= seat < self.players:
            raise SetupError("R-SEAT-5", "seat.no_such", seat=seat)
        elif self.seats[seat] is not None:
            raise SetupError("R-SEAT-5", "seat.taken", seat=seat)
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
                raise SetupError("R-SEAT-5", "seat.full")
        elif seat is not None and self.status == OPEN and self.seat_taken(seat):
            # Before ``join``: a bot of the same level in that seat has the same name, and
            # would be refused as "you already have a seat".
            raise SetupError("R-SEAT-5", "seat.taken", seat=seat)
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
            raise Forbidden(INVITE_REQUIRED, "invite.required")
        if not hmac.compare_digest(invite, self.invite):
            raise Forbidden(INVITE_INVALID, "invite.invalid")

    def rotate_invite(self, player: str, invite: str) -> None:
        """The host replaces the invite code (the old one stops working)."""
        self.check_host(player)
        if not self.private:
            raise SetupError("R-SEAT-3", "table.invite_public")
        if self.status not in (OPEN, PLAYING):
            raise SetupError("R-SEAT-3", "table.invite_over", status=self.status)
        self._invite_rotated(invite=invite)

    @event("InviteRotated")
    def _invite_rotated(self, invite: str) -> None:
        self.invite = invite

    def allow_spectators(self, player: str, allowed: bool) -> None:
        """The host allows or refuses spectators, before the start only."""
        self.check_host(player)
        if self.status != OPEN:
            raise SetupError("R-SEAT-3", "table.spectators_before_start")
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
            raise SetupError("R-SEAT-3", "table.clock_before_start")
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
            raise SetupError("R-SEAT-3", "teams.fixed_started")
        variant = get_variant(self.entry)
        if self.players not in variant.host_chooses_teams:
            raise SetupError("R-SEAT-3", "teams.fixed_for", players=self.players)
        sides = choose_sides(variant, self.players, teams)
        self._choose_teams(sides=sides)

    @event("TeamsChosen")
    def _choose_teams(self, sides: dict[str, list[int]]) -> None:
        self.sides = {k: list(v) for k, v in sides.items()}

    def check_can_start(self, player: str) -> dict[str, list[int]]:
        self.check_host(player)
        if self.status != OPEN:
            raise SetupError("R-SEAT-3", "game.started")
        if any(p is None for p in self.seats):
            raise SetupError("R-SEAT-5", "seat.all_taken_first")
        return self.sides_for_start()

    def sides_for_start(self) -> dict[str, list[int]]:
        if self.sides is not None:
            return self.sides
        variant = get_variant(self.entry)
        if self.players in variant.host_chooses_teams:
            raise SetupError("R-SEAT-3", "teams.choose_first")
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
                raise SetupError("R-SEAT-3", "teams.unknown_side", sides=str(sorted(unknown)))
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
        """``player`` opens the next deal of a game in play once the current one is over
        (R-GAME-1): its number, virtual table (R-SEAT-2) and dealer (R-DEAL-2). Who may:
        ``may_open_next_deal``."""
        if not self.may_open_next_deal(player):
            raise Forbidden("R-SEAT-3", "host.next_deal")
        if self.status != PLAYING:
            raise SetupError("R-SEAT-3", "game.not_playing", status=self.status)
        if len(self.deal_scores) < len(self.deals):
            raise SetupError("R-GAME-1", "game.deal_not_over")
        assert self.sides is not None and self.dealer is not None
        number = len(self.deals) + 1
        order = self.virtual_table(number)
        return number, order, next_dealer(self.order, self.dealer, order)

    def may_open_next_deal(self, player: str) -> bool:
        """Who may open the next deal (docs/tables.md, "The next deal while the host is
        away"): the host; while the bot plays the host's own seat, also every person who
        plays his own seat; and when nobody does (every seat a bot's or away), the bot
        playing the host's seat, which the bots process runs."""
        if player == self.host:
            return True
        host_seat = self.seat_of(self.host)
        if host_seat is None or not self.away(host_seat):
            return False
        return player in self.present_players() or player == self.next_deal_by_bot()

    def present_players(self) -> list[str]:
        """The people who play their own seats now (not away, not bots)."""
        return [
            player
            for seat, player in enumerate(self.seats)
            if player is not None and bot_level(player) is None and not self.away(seat)
        ]

    def next_deal_by_bot(self) -> str | None:
        """The name under which the bots process opens the next deal (the bot playing the
        host's seat) when no person may be waited for, else None (``may_open_next_deal``)."""
        host_seat = self.seat_of(self.host)
        if host_seat is None or not self.away(host_seat) or self.present_players():
            return None
        return self.plays(host_seat)

    @event("DealOpened")
    def open_deal(
        self, deal_id: str, number: int, dealer: int, order: list[int], by: str | None = None
    ) -> None:
        """``by``: who opened it (the host, or while he is away another player or the bot
        playing his seat); deals opened before this was recorded have None."""
        self.deals.append(deal_id)
        self.dealer = dealer
        self.order = list(order)

    def record_deal(
        self,
        deal_id: str,
        scores: Mapping[str, int],
        final_link: str = "",
        signer: Signer | None = None,
    ) -> None:
        """Add a completed deal's scores; end the game if a side reached the target.

        ``final_link`` is the deal's last hash-chain link: the table's own stream then
        vouches for the whole history of the deal (an audit compares them). ``signer`` (the
        server's key, ``domain.seal``) signs the record; without one it is unsigned."""
        totals = {side: self.totals[side] + scores.get(side, 0) for side in self.totals}
        key_id = signature = ""
        if signer is not None:
            number = self.deals.index(deal_id) + 1 if deal_id in self.deals else 0
            message = record_message(str(self.id), deal_id, number, final_link, scores, totals)
            key_id, signature = signer.sign(message)
        self._deal_recorded(
            deal_id=deal_id,
            scores=dict(scores),
            totals=totals,
            final_link=final_link,
            signature=signature,
            key_id=key_id,
        )
        won = get_variant(self.entry).winners(self.totals, self.target, len(self.deal_scores))
        if won is not None:
            self._game_ended(winners=won)

    @event("DealRecorded")
    def _deal_recorded(
        self,
        deal_id: str,
        scores: dict[str, int],
        totals: dict[str, int],
        final_link: str,
        signature: str = "",
        key_id: str = "",
    ) -> None:
        """``signature``, ``key_id``: the server's signature of the record (``domain.seal``);
        records made before signing existed have none."""
        self.deal_scores.append(dict(scores))
        self.totals = dict(totals)

    @event("GameEnded")
    def _game_ended(self, winners: list[str]) -> None:
        self.winners = list(winners)
        self.status = FINISHED

    def stop(self, player: str) -> None:
        self.check_host(player)
        if self.status != PLAYING:
            raise SetupError("R-GAME-2", "game.stop_not_playing", status=self.status)
        self._stopped(completed_deals=len(self.deal_scores))

    @event("GameStopped")
    def _stopped(self, completed_deals: int) -> None:
        self.status = STOPPED

    # --- rematch -------------------------------------------------------------------------
    def check_rematch(self, player: str) -> None:
        """A seated player or the host asks for a rematch once the game is over."""
        if not self.participant(player):
            raise Forbidden("R-SEAT-3", "host.rematch_ask")
        if self.status not in (FINISHED, STOPPED):
            raise Conflict(GAME_NOT_OVER, "game.no_rematch_yet", status=self.status)

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
            raise Forbidden("R-SEAT-3", "host.only")

    # --- absent players (docs/tables.md) -------------------------------------------------
    @property
    def playing(self) -> dict[int, dict[str, str]]:
        """The seats whose player changed during the game: seat -> who plays it now
        (``player``), why (``reason``: left, missed_turns, taken_back, given) and since when
        (``since``, the time the service gave). Tables recorded before this read empty."""
        playing: dict[int, dict[str, str]] = self.__dict__.setdefault("_playing", {})
        return playing

    @property
    def missed_turns_limit(self) -> int:
        return int(self.__dict__.get("_missed_turns_limit", DEFAULT_MISSED_TURNS_LIMIT))

    def plays(self, seat: int) -> str | None:
        """Who plays ``seat`` now: its player, or the bot standing in for him."""
        change = self.playing.get(seat)
        return change["player"] if change is not None else self.seats[seat]

    def players_now(self) -> list[str | None]:
        """Who plays each seat now (a new deal records these)."""
        return [self.plays(seat) for seat in range(self.players)]

    def away(self, seat: int) -> bool:
        """Whether the bot plays ``seat`` for its absent player."""
        return self.plays(seat) != self.seats[seat]

    def away_seat(self, player: str) -> int | None:
        """The seat ``player`` sits in but does not play now (he left or missed turns)."""
        seat = self.seat_of(player)
        return seat if seat is not None and self.away(seat) else None

    def set_missed_turns_limit(self, player: str, limit: int) -> None:
        """The host chooses, before the start, after how many turns missed in a row the bot
        takes a seat over (0: never)."""
        self.check_host(player)
        if self.status != OPEN:
            raise SetupError("R-SEAT-3", "table.missed_turns_before_start")
        if not 0 <= limit <= MAX_MISSED_TURNS_LIMIT:
            raise SetupError("R-SEAT-3", "table.missed_turns_range", most=MAX_MISSED_TURNS_LIMIT)
        if limit != self.missed_turns_limit:
            self._missed_turns_limit_set(limit=limit)

    @event("MissedTurnsLimitSet")
    def _missed_turns_limit_set(self, limit: int) -> None:
        self.__dict__["_missed_turns_limit"] = limit

    def leave(self, player: str, at: str) -> tuple[int, str | None]:
        """``player`` leaves his seat: before the start the seat is free again; during the
        game it stays his and the bot plays it until he takes it back. Returns the seat and
        the bot now playing it (None before the start)."""
        seat = self.seat_of(player)
        if seat is None:
            raise Forbidden(NOT_SEATED, "seat.none_here")
        if self.status not in (OPEN, PLAYING):
            raise SetupError("R-SEAT-5", "seat.fixed", status=self.status)
        if self.away(seat):
            raise Conflict(SEAT_AWAY, "seat.away_already")
        self._seat_left(seat=seat, player=player, freed=self.status == OPEN)
        if self.status == OPEN:
            return seat, None
        return seat, self.take_over(seat, LEFT, at)

    @event("SeatLeft")
    def _seat_left(self, seat: int, player: str, freed: bool) -> None:
        if freed:
            self.seats[seat] = None

    def take_over(self, seat: int, reason: str, at: str) -> str:
        """The bot takes ``seat`` over for its player (``reason``: he left, or missed
        ``missed_turns_limit`` turns in a row: the turn clock's hook), until he takes it
        back; returns the bot's name. Only a person's seat, in a game in play."""
        player = self.seats[seat] if 0 <= seat < self.players else None
        if self.status != PLAYING or player is None or bot_level(player) is not None:
            raise SetupError("R-SEAT-5", "seat.no_person", seat=seat)
        if self.away(seat):
            raise Conflict(SEAT_AWAY, "seat.bot_plays", seat=seat)
        if reason not in (LEFT, MISSED_TURNS):
            raise ValueError(f"no takeover for {reason!r}")
        by = stand_in_name(seat, player)
        self._seat_taken_over(seat=seat, player=player, by=by, reason=reason, since=at)
        return by

    @event("SeatTakenOver")
    def _seat_taken_over(self, seat: int, player: str, by: str, reason: str, since: str) -> None:
        self.playing[seat] = {"player": by, "reason": reason, "since": since}

    def take_back(self, player: str, at: str) -> int:
        """``player`` plays his seat again (the call that seats him: he is away from it)."""
        seat = self.away_seat(player)
        if seat is None or self.status != PLAYING:
            raise SetupError("R-SEAT-5", "seat.not_away")
        self._seat_taken_back(seat=seat, player=player, since=at)
        return seat

    @event("SeatTakenBack")
    def _seat_taken_back(self, seat: int, player: str, since: str) -> None:
        self.playing[seat] = {"player": player, "reason": TAKEN_BACK, "since": since}

    def give_seat(self, host: str, seat: int, player: str, at: str) -> str:
        """The host gives a vacant seat (one the bot plays for its absent player) to another
        person, who plays it from now on in his place; returns the player who had it."""
        self.check_host(host)
        if self.status != PLAYING:
            raise SetupError("R-SEAT-5", "seat.none_to_give", status=self.status)
        if not 0 <= seat < self.players:
            raise SetupError("R-SEAT-5", "seat.no_such", seat=seat)
        if not self.away(seat):
            raise Conflict(SEAT_NOT_VACANT, "seat.player_plays", seat=seat)
        if self.seats[seat] == host:
            raise Conflict(HOST_SEAT, "seat.own_not_given")
        if bot_level(player) is not None or player in self.seats:
            raise SetupError("R-SEAT-5", "seat.cannot_give", player=player)
        previous = self.seats[seat]
        assert previous is not None
        self._seat_given(seat=seat, player=player, previous=previous, since=at)
        return previous

    @event("SeatGiven")
    def _seat_given(self, seat: int, player: str, previous: str, since: str) -> None:
        self.seats[seat] = player
        self.playing[seat] = {"player": player, "reason": GIVEN, "since": since}
