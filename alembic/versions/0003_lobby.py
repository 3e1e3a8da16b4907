"""The lobby read model: the ``tables`` table and the ``lobby`` projection's tracking table.

``tables`` is what ``projections.store.PostgresReadModelRecorder`` writes for the lobby (its
DDL, ``postgres_lobby_ddl("public")``, is the same; tests/projections/test_postgres.py compares
the migrated schema with what the recorders create). ``lobby_tracking`` is what eventsourcing
9.5.6's ``PostgresTrackingRecorder`` creates for a projection named ``lobby`` (single-row
tracking), with the ``__migration__`` row, as revision 0002 does for the other projections.

Revision ID: 0003
Revises: 0002
Create Date: 2025-01-03
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PROJECTIONS = ("lobby",)

# As in revision 0002 (a migration keeps its own copy: later code may change, it may not).
_AUTOVACUUM = (
    "WITH ("
    "    autovacuum_enabled = true,"
    "    autovacuum_vacuum_threshold = 100000000,"
    "    autovacuum_vacuum_scale_factor = 0.5,"
    "    autovacuum_analyze_threshold = 1000,"
    "    autovacuum_analyze_scale_factor = 0.01"
    ")"
)


def create_tracking_table(name: str) -> str:
    return (
        f'CREATE TABLE IF NOT EXISTS "public"."{name}_tracking" ('
        "application_name text, "
        "notification_id bigint, "
        "PRIMARY KEY "
        "(application_name))" + _AUTOVACUUM
    )


def insert_migration_row(name: str) -> str:
    return (
        f'INSERT INTO "public"."{name}_tracking" VALUES (\'__migration__\', 1) '
        "ON CONFLICT (application_name) DO NOTHING"
    )


VIEW_TABLES = [
    'CREATE TABLE IF NOT EXISTS "public".tables ('
    "table_id uuid NOT NULL, "
    "entry text NOT NULL, "
    "players integer NOT NULL, "
    "options jsonb NOT NULL, "
    "target integer NOT NULL, "
    "host text NOT NULL, "
    "seats jsonb NOT NULL, "
    "sides jsonb, "
    "totals jsonb, "
    "status text NOT NULL, "
    "deals integer NOT NULL, "
    "current_deal uuid, "
    "winners jsonb, "
    "version integer NOT NULL, "
    "created_position bigint NOT NULL, "
    "updated_position bigint NOT NULL, "
    "created_at timestamp with time zone NOT NULL, "
    "updated_at timestamp with time zone NOT NULL, "
    "PRIMARY KEY (table_id))",
    'CREATE INDEX IF NOT EXISTS tables_status_idx ON "public".tables (status, created_position)',
]


def upgrade() -> None:
    for statement in VIEW_TABLES:
        op.execute(statement)
    for name in PROJECTIONS:
        op.execute(create_tracking_table(name))
        op.execute(insert_migration_row(name))


def downgrade() -> None:
    for name in PROJECTIONS:
        op.execute(f'DROP TABLE IF EXISTS "public"."{name}_tracking"')
    op.execute('DROP TABLE IF EXISTS "public".tables')
