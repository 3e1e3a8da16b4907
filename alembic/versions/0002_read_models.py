"""Read models: the public discard log, the private draw logs, the score table, and each
projection's tracking table.

The view tables are the ones ``projections.store.PostgresReadModelRecorder`` writes (its DDL,
``postgres_view_ddl("public")`` without the lobby of revision 0003, is the same;
tests/projections/test_postgres.py compares the migrated schema with it).
The tracking tables are what eventsourcing 9.5.6's ``PostgresTrackingRecorder`` creates for a
projection named ``discard_log``, ``draw_log`` or ``score_table`` (single-row tracking; its
factory names the table ``<projection name>_tracking``), including the ``__migration__`` row
the library writes when it creates such a table: without that row, a later run with
``CREATE_TABLE=y`` would take the table for a legacy multi-row one and "migrate" it.

Revision ID: 0002
Revises: 0001
Create Date: 2025-01-02
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PROJECTIONS = ("discard_log", "draw_log", "score_table")

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
    'CREATE TABLE IF NOT EXISTS "public".discard_log ('
    "deal_id uuid NOT NULL, "
    "step bigint NOT NULL, "
    "kind text NOT NULL, "
    "seat integer, "
    "card text, "
    "top text, "
    "size integer, "
    "crosswise boolean, "
    "partner integer, "
    "yes boolean, "
    "PRIMARY KEY (deal_id, step))",
    'CREATE TABLE IF NOT EXISTS "public".draw_log ('
    "deal_id uuid NOT NULL, "
    "step bigint NOT NULL, "
    "seat integer NOT NULL, "
    "cards text[] NOT NULL, "
    "replacement boolean NOT NULL, "
    "PRIMARY KEY (deal_id, step))",
    'CREATE INDEX IF NOT EXISTS draw_log_seat_idx ON "public".draw_log (deal_id, seat, step)',
    'CREATE TABLE IF NOT EXISTS "public".score_deals ('
    "deal_id uuid NOT NULL, "
    "table_id uuid NOT NULL, "
    "deal_number integer NOT NULL, "
    "reason text, "
    "PRIMARY KEY (deal_id))",
    "CREATE INDEX IF NOT EXISTS score_deals_table_idx "
    'ON "public".score_deals (table_id, deal_number)',
    'CREATE TABLE IF NOT EXISTS "public".deal_scores ('
    "table_id uuid NOT NULL, "
    "deal_id uuid NOT NULL, "
    "deal_number integer NOT NULL, "
    "side text NOT NULL, "
    "melds integer, "
    "natural_canastas integer, "
    "mixed_canastas integer, "
    "wild_canastas integer, "
    "special_canastas integer, "
    "canasta_bonus integer, "
    "going_out integer, "
    "concealed integer, "
    "red_threes integer, "
    "hands integer, "
    "penalties integer, "
    "ponytails integer, "
    "cut_bonus integer, "
    "total integer NOT NULL, "
    "breakdown jsonb, "
    "cumulative integer, "
    "PRIMARY KEY (deal_id, side))",
    "CREATE INDEX IF NOT EXISTS deal_scores_table_idx "
    'ON "public".deal_scores (table_id, deal_number)',
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
    for table in ("deal_scores", "score_deals", "draw_log", "discard_log"):
        op.execute(f'DROP TABLE IF EXISTS "public".{table}')
