"""Running the read-model projections (``projections.read_models``) against the event log.

- ``runner``: ``ReadModels``, the one entry point (elect, follow, wait, rebuild, query);
- ``worker``: ``PullWorker``, one projection following the log in batches;
- ``leases``: which process of a database runs the projections.
"""

from app.infra.projection_runner.leases import (
    LEASE_KEY,
    LOCK_FILE_SUFFIX,
    FileLease,
    LeaseLost,
    PostgresLease,
    ProcessLease,
)
from app.infra.projection_runner.runner import POSTGRES, SQLITE, ReadModels
from app.infra.projection_runner.worker import PullWorker, tracking_table_name

__all__ = [
    "LEASE_KEY",
    "LOCK_FILE_SUFFIX",
    "POSTGRES",
    "SQLITE",
    "FileLease",
    "LeaseLost",
    "PostgresLease",
    "ProcessLease",
    "PullWorker",
    "ReadModels",
    "tracking_table_name",
]
