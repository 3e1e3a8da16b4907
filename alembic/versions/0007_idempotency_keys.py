"""The idempotency keys: ``idempotency_keys`` (docs/api.md, "Retrying safely").

One row per ``Idempotency-Key`` in use (``app.idempotency``): its id (a hash of the caller,
the route and the key), the hash of the request's body, the claim of the request that
holds it, the stored answer (encrypted) and its status, when it was made and when it
expires. The table ``app.infra.idempotency_store.METADATA`` describes (on SQLite the
server creates the same itself); ``tests/infra/test_idempotency_schema.py`` compares them.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        'CREATE TABLE IF NOT EXISTS "public".idempotency_keys ('
        "key_id text NOT NULL, "
        "fingerprint text NOT NULL, "
        "claim text NOT NULL, "
        "status integer, "
        "answer text, "
        "created_at double precision NOT NULL, "
        "expires_at double precision NOT NULL, "
        "PRIMARY KEY (key_id))"
    )
    op.execute(
        "CREATE INDEX IF NOT EXISTS idempotency_keys_expires_idx "
        'ON "public".idempotency_keys (expires_at)'
    )


def downgrade() -> None:
    op.execute('DROP TABLE IF EXISTS "public".idempotency_keys')
