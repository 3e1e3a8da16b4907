"""Infrastructure: what talks to the databases.

- ``persistence``: the PostgreSQL application recorder (the library's, cheaper inserts);
- ``group_commit``: commands saved concurrently share one transaction;
- ``event_log``: read-only access to the application's notification log (recorder and mapper
  from the library's factory, no write side);
- ``read_model_store``: the read-model tables (one SQLAlchemy ``MetaData``) and the tracking
  recorders that write and query them, on PostgreSQL and SQLite;
- ``projection_runner``: runs the projections of ``projections.read_models`` against the log
  (pull workers, the elected runner and its leases, waits, rebuilds, queries).
"""
