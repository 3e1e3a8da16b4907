"""Tables: creating and joining them, teams, starting and stopping games, opening deals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from app.services.core import AppCore
from app.services.privacy import invite_hash, new_invite
from domain.clock import check_turn_seconds, deadline
from domain.deal import Deal
from domain.errors import SetupError
from domain.seating import check_first_dealer, rotation_for, side_of_seats
from domain.shuffle import commitment, stacked_commitment
from domain.table import PLAYING, Table
from domain.variants import get_variant


def deal_id_for(table_id: UUID, number: int) -> UUID:
    """Deal ids are derived, so two processes opening the same deal collide in the store."""
    return uuid5(NAMESPACE_URL, f"canasta-ledger:{table_id}:deal:{number}")


class TableService(AppCore):
    def create_table(
        self,
        host: str,
        entry: str,
        players: int,
        options: Mapping[str, Any] | None = None,
        target: int | None = None,
    ) -> UUID:
        return self.open_table(host, entry, players, options, target)[0]

    def open_table(
        self,
        host: str,
        entry: str,
        players: int,
        options: Mapping[str, Any] | None = None,
        target: int | None = None,
        *,
        private: bool = False,
        spectators: bool = True,
        turn_seconds: int | None = None,
    ) -> tuple[UUID, str | None]:
        """A new table, and a private table's invite code (None for a listed table): the
        code is shown this once, only its hash is recorded (docs/tables.md). ``turn_seconds``:
        the turn clock (None: none)."""
        options = dict(options or {})
        variant = get_variant(entry)
        target = Table.check_setup(entry, players, options, target)
        turn_seconds = check_turn_seconds(turn_seconds, self.turn_seconds_min)
        full_options = variant.table_options(options)
        code, hashed = new_invite() if private else (None, None)
        table: Table = Table(
            host=host,
            entry=entry,
            players=players,
            options=full_options,
            target=target,
            private=private,
            invite=hashed,
            spectators=spectators,
            turn_seconds=turn_seconds,
        )
        self._commit(table)
        return table.id, code

    def set_turn_clock(self, table_id: UUID, player: str, turn_seconds: int | None) -> None:
        """The host sets the turn clock before the start (docs/tables.md)."""
        table = self.get_table(table_id)
        table.set_turn_clock(player, check_turn_seconds(turn_seconds, self.turn_seconds_min))
        self._save(table)

    def table_deadline(self, table: Table) -> datetime | None:
        """When the seat to act in the table's current deal runs out of time (None: no
        clock, no deal in play, nobody to act, or his turn already timed out)."""
        if table.turn_seconds is None or table.status != PLAYING or not table.deals:
            return None
        deal = self.get_deal(UUID(table.deals[-1]))
        return deadline(deal.turn_since, table.turn_seconds, deal.state)

    def join_table(
        self, table_id: UUID, player: str, seat: int | None = None, invite: str | None = None
    ) -> int:
        """``invite``: the invite code of a private table (the code, not its hash)."""
        table = self.get_table(table_id)
        taken = table.join(player, seat, invite_hash(invite))
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
        return self._open_deal(table, 1, first, order, deck, player)

    def start_next_deal(
        self, table_id: UUID, player: str, *, deck: Sequence[str] | None = None
    ) -> UUID:
        table = self.get_table(table_id)
        number, order, dealer = table.next_deal(player)
        return self._open_deal(table, number, dealer, order, deck, player)

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
        by: str,
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
            player_ids=[p or "" for p in table.players_now()],  # a bot for who is away
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
        table.open_deal(deal_id=str(deal_id), number=number, dealer=dealer, order=order, by=by)
        self._save(table, deal)
        return deal_id

    def _check_test_setup(self, what: str) -> None:
        if not self.allow_stacked_decks:
            raise SetupError("R-DEAL-3", "table.test_only", what=what)
