"""Event store for the application named "canasta".

Creates exactly what eventsourcing 9.5.6's PostgreSQL recorders create for an ``Application``
subclass with ``name = "canasta"`` (``eventsourcing/postgres.py``: ``PostgresApplicationRecorder``
for events, ``PostgresAggregateRecorder`` for snapshots, default schema "public", default
``ORIGINATOR_ID_TYPE=uuid``), so that the application can run with ``CREATE_TABLE=n``:

- composite type ``stored_event_uuid`` (the library inserts with ``unnest(%s::stored_event_uuid[])``
  and fails with "Composite type 'stored_event_uuid' not found" without it);
- table ``canasta_events`` with ``notification_id bigserial`` and the unique index
  ``canasta_events_notification_id_idx`` (the notification log);
- table ``canasta_snapshots`` (the library only creates it when snapshotting is enabled; it is
  created here anyway so snapshotting can be switched on without a migration).

Deliberately NOT created: the function ``es_insert_events_uuid``, which the library's
``create_table()`` also creates but only calls when ``POSTGRES_ENABLE_DB_FUNCTIONS`` is on. That
option stays off (it skips the table lock; and the function's name is per schema, not per
application, so two applications in one schema overwrite each other's function).

The statements are copied from the library's DDL (whitespace included). ``CREATE TYPE`` has no
``IF NOT EXISTS``; like the library, an existing type is tolerated.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_AUTOVACUUM = (
    "WITH ("
    "    autovacuum_enabled = true,"
    "    autovacuum_vacuum_threshold = 100000000,"
    "    autovacuum_vacuum_scale_factor = 0.5,"
    "    autovacuum_analyze_threshold = 1000,"
    "    autovacuum_analyze_scale_factor = 0.01"
    ")"
)

CREATE_TYPE = (
    'CREATE TYPE "public"."stored_event_uuid" '
    'AS (originator_id "uuid", '
    "originator_version bigint, "
    "topic text, "
    "state bytea)"
)

CREATE_EVENTS_TABLE = (
    'CREATE TABLE IF NOT EXISTS "public"."canasta_events" ('
    'originator_id "uuid" NOT NULL, '
    "originator_version bigint NOT NULL, "
    "topic text, "
    "state bytea, "
    "notification_id bigserial, "
    "PRIMARY KEY "
    "(originator_id, originator_version)) " + _AUTOVACUUM
)

CREATE_EVENTS_NOTIFICATION_ID_INDEX = (
    'CREATE UNIQUE INDEX IF NOT EXISTS "canasta_events_notification_id_idx" '
    'ON "public"."canasta_events" (notification_id ASC);'
)

CREATE_SNAPSHOTS_TABLE = (
    'CREATE TABLE IF NOT EXISTS "public"."canasta_snapshots" ('
    'originator_id "uuid" NOT NULL, '
    "originator_version bigint NOT NULL, "
    "topic text, "
    "state bytea, "
    "PRIMARY KEY "
    "(originator_id, originator_version)) " + _AUTOVACUUM
)


def upgrade() -> None:
    op.execute("DO $$ BEGIN " + CREATE_TYPE + "; EXCEPTION WHEN duplicate_object THEN NULL; END $$")
    op.execute(CREATE_EVENTS_TABLE)
    op.execute(CREATE_EVENTS_NOTIFICATION_ID_INDEX)
    op.execute(CREATE_SNAPSHOTS_TABLE)


def downgrade() -> None:
    op.execute('DROP TABLE IF EXISTS "public"."canasta_snapshots"')
    op.execute('DROP TABLE IF EXISTS "public"."canasta_events"')
    op.execute('DROP TYPE IF EXISTS "public"."stored_event_uuid"')
