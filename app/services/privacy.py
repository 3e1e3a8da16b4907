"""Private tables, spectators and rematches (docs/tables.md).

An invite code is made here with ``secrets`` and shown once to whoever made it; only its
hash (``domain.accounts.token_hash``, as for bearer tokens) reaches the domain and the store.
"""

from __future__ import annotations

import secrets
from uuid import UUID

from eventsourcing.persistence import IntegrityError

from app.services.core import AppCore
from domain.accounts import token_hash
from domain.errors import RACE_LOST, Conflict
from domain.table import Table


def new_invite() -> tuple[str, str]:
    """A fresh invite code and its hash."""
    code = secrets.token_urlsafe(12)
    return code, token_hash(code)


def invite_hash(code: str | None) -> str | None:
    return None if code is None else token_hash(code)


class PrivacyService(AppCore):
    def rotate_invite(self, table_id: UUID, player: str) -> str:
        """The host replaces his private table's invite code; returns the new code."""
        table = self.get_table(table_id)
        code, hashed = new_invite()
        table.rotate_invite(player, hashed)
        self._save(table)
        return code

    def allow_spectators(self, table_id: UUID, player: str, allowed: bool) -> Table:
        table = self.get_table(table_id)
        table.allow_spectators(player, allowed)
        self._save(table)
        return table

    def rematch(self, table_id: UUID, player: str) -> tuple[UUID, bool]:
        """The rematch of a finished or stopped game, and whether this request opened it
        (False: it was open already, and the same table is returned)."""
        table = self.get_table(table_id)
        table.check_rematch(player)
        if table.rematch is not None:
            return UUID(table.rematch), False
        new = table.open_rematch()
        try:
            self._commit(table, new)
        except IntegrityError:  # another request opened it (or changed the table) first
            table = self.get_table(table_id)
            if table.rematch is None:
                raise Conflict(RACE_LOST, "race.table") from None
            return UUID(table.rematch), False
        return new.id, True
