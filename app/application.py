"""The application service: the one way commands reach the aggregates and the store.

The HTTP API, the scenario runner, the demo and the benchmarks all go through
``CanastaApp``. It loads aggregates, lets them decide, and saves every event of a
command in one transaction; a concurrent writer makes the save fail and the command is
refused as a lost race (409 ``race_lost``) with nothing recorded.

``CanastaApp`` is made of the services in ``app.services``: the wiring (``core``: the event
store, transcoding, snapshots, the aggregate cache, group commit), ``accounts``, ``tables``,
``commands`` and ``dry_run``. The names callers import from here are re-exported.
"""

from __future__ import annotations

from app.services.accounts import AccountService
from app.services.bot_seats import BotSeatService
from app.services.clock import ClockService
from app.services.commands import Answer, Expected, error_body, refusal_body, said_body
from app.services.core import RandomSource
from app.services.dry_run import DryRunService
from app.services.privacy import PrivacyService
from app.services.seats import SeatService
from app.services.sessions import SessionService

__all__ = [
    "Answer",
    "CanastaApp",
    "Expected",
    "RandomSource",
    "error_body",
    "refusal_body",
    "said_body",
]


class CanastaApp(
    AccountService,
    SessionService,
    SeatService,
    BotSeatService,
    ClockService,
    PrivacyService,
    DryRunService,
):
    """The application service (an eventsourcing ``Application``): accounts, browser
    sessions, tables (with bots: ``BotSeatService``, a ``TableService``), their privacy,
    commands and their dry runs (``DryRunService``, a ``CommandService``) over one event
    store."""

    name = "canasta"
    is_snapshotting_enabled = True  # finished deals are snapshotted (fast game rebuilds)
