"""Who may watch a table and its deals (docs/tables.md, "Spectators").

A table whose host allows no spectators shows itself and its deals only to its host, its
seated players and auditors; anybody else (signed in or not) gets 403
``spectators_not_allowed`` from every read route of the table and its deals. The routes
take one of the dependencies below (``dependencies=[WATCH_TABLE]`` or ``[WATCH_DEAL]``), which
read the path's id before the route does. With a read replica the table and the deal are read
where the route reads them (``app.replica``), the roles from the primary.

What they read (fresh, a moment before the route runs) they leave on the request
(``watched_deal``, ``watched_table``), for a route that needs the same aggregate from the
same store: a live stream's opening then reads neither again (``app.routes.stream``).
"""

from __future__ import annotations

from uuid import UUID

from fastapi import Depends, Request

from app.application import CanastaApp
from app.deps import Caller, CanastaDep, MaybeAccount, SettingsDep, roles_of
from app.replica import DealStore, TableStore
from app.settings import Settings
from domain.accounts import AUDITOR
from domain.errors import Forbidden
from domain.table import Table


def check_watcher(
    canasta: CanastaApp,
    settings: Settings,
    table_id: UUID,
    account: Caller | None,
    store: CanastaApp | None = None,
) -> Table:
    """Refuse a spectator of a table that allows none (an auditor may watch any table); the
    table, else. ``store``: where the table is read (default ``canasta``, where the roles
    are read)."""
    table = (store or canasta).get_table(table_id)
    name = None if account is None else account.name
    if table.may_watch(name):
        return table
    if name is not None and AUDITOR in roles_of(canasta, settings, name):
        return table
    raise Forbidden("spectators_not_allowed", "table.no_spectators")


def watch_table(
    table_id: UUID,
    request: Request,
    canasta: CanastaDep,
    store: TableStore,
    settings: SettingsDep,
    account: MaybeAccount,
) -> None:
    request.state.watched_table = check_watcher(canasta, settings, table_id, account, store)


def watch_deal(
    deal_id: UUID,
    request: Request,
    canasta: CanastaDep,
    store: DealStore,
    settings: SettingsDep,
    account: MaybeAccount,
) -> None:
    """A seated player of the deal is let in without reading the table."""
    deal = store.get_deal(deal_id)
    request.state.watched_deal = deal
    if account is not None and account.name in deal.state.player_ids:
        return
    table = check_watcher(canasta, settings, UUID(deal.state.table_id), account, store)
    request.state.watched_table = table


WATCH_TABLE = Depends(watch_table)
WATCH_DEAL = Depends(watch_deal)
