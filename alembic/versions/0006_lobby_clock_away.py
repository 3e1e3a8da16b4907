"""The lobby's turn clock and away seats: ``turn_seconds`` and ``away`` (docs/tables.md).

``turn_seconds``: the table's turn clock in seconds (null: none); ``away``: the room seats
the basic bot plays for their absent players (a JSON array of seat numbers). Rows of tables
created before read as without a clock and with nobody away until the lobby is rebuilt
(``canasta rebuild-read-models``), which fills them from the tables' events.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        'ALTER TABLE "public".tables '
        "ADD COLUMN IF NOT EXISTS turn_seconds integer, "
        "ADD COLUMN IF NOT EXISTS away jsonb DEFAULT '[]'::jsonb NOT NULL"
    )


def downgrade() -> None:
    op.execute(
        'ALTER TABLE "public".tables DROP COLUMN IF EXISTS away, DROP COLUMN IF EXISTS turn_seconds'
    )
