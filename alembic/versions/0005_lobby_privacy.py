"""The lobby's privacy columns: ``listed`` and ``spectators`` (docs/tables.md).

An unlisted (private) table is never in the lobby; a table that allows no spectators is
there only while it is open. Rows of tables created before are listed and watchable (the
defaults), as those tables are.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        'ALTER TABLE "public".tables '
        "ADD COLUMN IF NOT EXISTS listed boolean DEFAULT true NOT NULL, "
        "ADD COLUMN IF NOT EXISTS spectators boolean DEFAULT true NOT NULL"
    )


def downgrade() -> None:
    op.execute(
        'ALTER TABLE "public".tables DROP COLUMN IF EXISTS spectators, DROP COLUMN IF EXISTS listed'
    )
