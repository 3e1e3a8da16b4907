"""The lobby's last move: ``last_move_at`` (docs/api.md, "The lobby").

``last_move_at``: the time of the table's last move as far as the lobby knows it (a table
event, or any public event of its current deal), at most a minute behind
(``app/infra/read_model_store/lobby.py``); the tables in play are listed by it, latest first,
and those without a move for ``CANASTA_LOBBY_IDLE_SECONDS`` are shown apart as idle. Rows of
tables recorded before get the time of the table's last event (``updated_at``), which is
its last move when no deal is under way; the lobby rebuilt (``canasta rebuild-read-models``)
has each table's true last move. Two indexes: by status and last move (the list), and by
current deal (a move finds its table).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        'ALTER TABLE "public".tables ADD COLUMN IF NOT EXISTS last_move_at timestamp with time zone'
    )
    op.execute('UPDATE "public".tables SET last_move_at = updated_at WHERE last_move_at IS NULL')
    op.execute(
        'CREATE INDEX IF NOT EXISTS tables_last_move_idx ON "public".tables (status, last_move_at)'
    )
    op.execute(
        'CREATE INDEX IF NOT EXISTS tables_current_deal_idx ON "public".tables (current_deal)'
    )


def downgrade() -> None:
    op.execute('DROP INDEX IF EXISTS "public".tables_current_deal_idx')
    op.execute('DROP INDEX IF EXISTS "public".tables_last_move_idx')
    op.execute('ALTER TABLE "public".tables DROP COLUMN IF EXISTS last_move_at')
