"""The read-model store: the view tables of ``projections.view`` in PostgreSQL or SQLite.

- ``schema``: the tables, written once as SQLAlchemy Core ``MetaData``, compiled per dialect;
- ``base``: tracked transactions (each write records its event's position first) and batches;
- ``recorder``: the writes and queries, written once with ``:name`` parameters (``lobby``:
  the lobby's, the last move of each table among them);
- ``postgres`` and ``sqlite``: the two databases' recorders.
"""

from app.infra.read_model_store.base import MIGRATION_ROW, TrackedTransactions
from app.infra.read_model_store.postgres import PostgresReadModelRecorder
from app.infra.read_model_store.recorder import ReadModelRecorder
from app.infra.read_model_store.schema import METADATA, postgres_view_ddl, sqlite_view_ddl
from app.infra.read_model_store.sqlite import SQLiteReadModelRecorder

__all__ = [
    "METADATA",
    "MIGRATION_ROW",
    "PostgresReadModelRecorder",
    "ReadModelRecorder",
    "SQLiteReadModelRecorder",
    "TrackedTransactions",
    "postgres_view_ddl",
    "sqlite_view_ddl",
]
