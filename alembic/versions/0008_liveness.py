"""The service's sign of life: ``canasta_liveness`` (docs/operations.md, "Restarts and
crashes").

One row (``id`` 1): ``alive_at``, the last time a serving process said it was alive;
``up_since``, when the service came back after its last outage; ``down_since``, the last
sign of life before that outage (``app/infra/liveness.py``). The bots' leader restarts the
turn clocks of the turns that ran through an outage from it (docs/tables.md, "Turn clock").
Created empty: the first server to start writes the row.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        'CREATE TABLE IF NOT EXISTS "public".canasta_liveness ('
        "id smallint PRIMARY KEY CHECK (id = 1), "
        "alive_at timestamptz NOT NULL, "
        "up_since timestamptz NOT NULL, "
        "down_since timestamptz)"
    )


def downgrade() -> None:
    op.execute('DROP TABLE IF EXISTS "public".canasta_liveness')
