"""Who may watch a table and its deals (docs/tables.md, "Spectators").

A table whose host allows no spectators shows itself and its deals only to its host, its
seated players and auditors; anybody else (signed in or not) gets 403
``spectators_not_allowed`` from every read route of the table and its deals. The routes
take one of the dependencies below (``dependencies=[WATCH_TABLE]`` or ``[WATCH_DEAL]``), which
read the path's id before the route does.
"""

from __future__ import annotations

from uuid import UUID

from fastapi import Depends

from app.application import CanastaApp
from app.deps import Caller, CanastaDep, MaybeAccount, SettingsDep, roles_of
from app.settings import Settings
from domain.accounts import AUDITOR
from domain.errors import Forbidden


def check_watcher(
    canasta: CanastaApp, settings: Settings, table_id: UUID, account: Caller | None
) -> None:
    """Refuse a spectator of a table that allows none (an auditor may watch any table)."""
    table = canasta.get_table(table_id)
    name = None if account is None else account.name
    if table.may_watch(name):
        return
    if name is not None and AUDITOR in roles_of(canasta, settings, name):
        return
    raise Forbidden(
        "spectators_not_allowed",
        "this table allows no spectators: only its host, its players and auditors see it",
    )


def watch_table(
    table_id: UUID, canasta: CanastaDep, settings: SettingsDep, account: MaybeAccount
) -> None:
    check_watcher(canasta, settings, table_id, account)


def watch_deal(
    deal_id: UUID, canasta: CanastaDep, settings: SettingsDep, account: MaybeAccount
) -> None:
    """A seated player of the deal is let in without reading the table."""
    state = canasta.get_deal(deal_id).state
    if account is not None and account.name in state.player_ids:
        return
    check_watcher(canasta, settings, UUID(state.table_id), account)


WATCH_TABLE = Depends(watch_table)
WATCH_DEAL = Depends(watch_deal)
