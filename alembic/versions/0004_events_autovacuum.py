"""The events table out of autovacuum.

Every write takes ``LOCK TABLE canasta_events IN EXCLUSIVE MODE`` (eventsourcing's PostgreSQL
recorder: notification ids in commit order). Autovacuum's VACUUM and ANALYZE hold SHARE UPDATE
EXCLUSIVE on the table while they run, and that lock waits for it: every command of every
server process stalls until autovacuum ends or PostgreSQL cancels it for blocking a lock
request (after ``deadlock_timeout``, 1 s by default). With the library's table options
(``autovacuum_analyze_scale_factor = 0.01``: an ANALYZE after each 1% of growth) and the
insert-triggered VACUUM of PostgreSQL 13+ (after 20% of growth), a busy server stalled for
100 ms to 1 s on every autovacuum visit (``make bench``: the open loop's worst spikes, with the
two workers' inserts slow at the same instant).

Off for this table only: ``autovacuum_enabled = false``. PostgreSQL still runs the
anti-wraparound vacuum when it must. An append-only table has no dead rows to reclaim; the
operator runs ``VACUUM (FREEZE, ANALYZE) canasta_events`` at a quiet time (README,
"Operations"), which blocks writes for as long as it runs.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute('ALTER TABLE "public"."canasta_events" SET (autovacuum_enabled = false)')


#: The library's WITH clause for the table, in its order (revision 0001).
_LIBRARY_OPTIONS = (
    "autovacuum_enabled = true, "
    "autovacuum_vacuum_threshold = 100000000, "
    "autovacuum_vacuum_scale_factor = 0.5, "
    "autovacuum_analyze_threshold = 1000, "
    "autovacuum_analyze_scale_factor = 0.01"
)


def downgrade() -> None:
    # Exactly as the library creates it (the options in its order).
    op.execute(
        'ALTER TABLE "public"."canasta_events" RESET (autovacuum_enabled, '
        "autovacuum_vacuum_threshold, autovacuum_vacuum_scale_factor, "
        "autovacuum_analyze_threshold, autovacuum_analyze_scale_factor)"
    )
    op.execute(f'ALTER TABLE "public"."canasta_events" SET ({_LIBRARY_OPTIONS})')
