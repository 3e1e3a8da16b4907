"""``canasta rebuild-read-models`` and ``canasta project``: the read models' operator
commands (docs/operations.md)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app.cli_store import (
    add_retry_argument,
    in_memory,
    no_sqlite_store,
    seconds,
    store_answers,
    store_name,
)


def _rebuild_read_models(args: argparse.Namespace) -> int:
    """Empty every read model and replay the whole event log into it (exactly once: each
    batch's rows and position are committed together)."""
    import time

    from app.infra.projection_runner import ReadModels
    from app.settings import Settings

    settings = Settings()
    if in_memory(settings) or no_sqlite_store(settings) or not store_answers(settings):
        return 2
    print(
        "WARNING: stop every server (uvicorn app.main:app) on this store first, and start none "
        "until this is done. A server runs the projections too: while it runs, the rebuild "
        "would skip events and leave the read models incomplete.",
        file=sys.stderr,
    )
    try:
        read_models = ReadModels(settings)
    except Exception as exc:  # a bad URL, a database that is down, a schema not migrated
        print(f"cannot open the read models ({store_name(settings)}): {exc}", file=sys.stderr)
        return 2
    with read_models:
        lease = read_models.lease()
        if not lease.try_acquire():
            print(
                f"cannot rebuild the read models of {store_name(settings)}: another process "
                f"runs them ({lease.where} is held: a server, or `canasta project`). Stop every "
                "server, `canasta project` and `canasta bots` of this store, then run this "
                'again; nothing was changed. (docs/operations.md, "The read models", says '
                "how to see who leads.)",
                file=sys.stderr,
            )
            return 2
        head = read_models.head()
        print(f"rebuilding the read models of {store_name(settings)} from {head} events")
        began = time.monotonic()

        def progress(name: str, count: int, position: int) -> None:
            print(f"  {name}: {count} events read, at {position} of {head}", flush=True)

        try:  # holding the lease: no server or `canasta project` started meanwhile runs them
            read_models.rebuild(progress=progress)
        finally:
            lease.release()
        seconds = time.monotonic() - began
        positions = read_models.positions()
        for name, rows in read_models.dump().items():
            print(f"  table {name}: {len(rows)} rows")
        done = ", ".join(f"{name} at {position or 0}" for name, position in positions.items())
        print(f"rebuilt in {seconds:.1f} s ({done})")
    return 0


def _positions(read_models: Any) -> tuple[int, dict[str, int | None]] | None:
    """The log's head and each read model's position, for the progress line; None while the
    database does not answer (the runner's thread says so once and retries: a report that
    cannot be read is skipped, it never ends the process)."""
    from eventsourcing.persistence import InterfaceError, OperationalError

    try:
        return read_models.head(), read_models.positions()
    except (OperationalError, InterfaceError):
        return None


def _project(args: argparse.Namespace) -> int:
    """Run the read models in the foreground (taking the lease whatever
    ``CANASTA_READ_MODELS`` says) until Ctrl-C or SIGTERM; exit 0 when stopped so."""
    import logging
    import signal
    import threading
    import time

    from app.infra.projection_runner import ReadModels
    from app.settings import Settings

    settings = Settings().model_copy(update={"read_models": "auto"})
    if in_memory(settings) or no_sqlite_store(settings) or not store_answers(settings):
        return 2
    # The projections' warnings and errors (with tracebacks) go to stderr; the lease and
    # the progress are printed below.
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    stopping = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stopping.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            read_models = ReadModels(settings, lease_retry_seconds=args.retry_seconds)
        except Exception as exc:  # a bad URL, a database that is down, a schema not migrated
            print(f"cannot open the read models ({store_name(settings)}): {exc}", file=sys.stderr)
            return 2
        with read_models:
            print(
                f"projecting {store_name(settings)}: waiting for the lease (Ctrl-C or SIGTERM stops)",
                flush=True,
            )
            read_models.start()
            leading = False
            shown: tuple[int, dict[str, int | None]] | None = None
            report_at = 0.0
            while not stopping.wait(0.05):
                if read_models.is_leading != leading:
                    leading = read_models.is_leading
                    if leading:
                        print("leading: this process runs the read models", flush=True)
                    else:
                        print("not leading any more: waiting for the lease", flush=True)
                if leading and time.monotonic() >= report_at:
                    report_at = time.monotonic() + args.progress_seconds
                    now = _positions(read_models)
                    if now is not None and now != shown:
                        shown = now
                        at = ", ".join(f"{n} at {p or 0}" for n, p in now[1].items())
                        print(f"  log at {now[0]}: {at}", flush=True)
            print("stopping", flush=True)
        print("stopped", flush=True)
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def add_parsers(sub: Any, store: str) -> None:
    """The two commands on the command line's subparsers (``store``: the text saying which
    store the environment chooses)."""
    p = sub.add_parser(
        "rebuild-read-models",
        help="empty the read models and rebuild them from the event log (servers stopped!)",
        description="Delete every row of the read models (discard logs, draw logs, score "
        "tables, lobby) and their tracking positions, and replay the whole event log into "
        "them. Maintenance only: NO server may run on the store meanwhile (each server runs "
        "the projections; stop them all first and start them again afterwards). " + store,
    )
    p.set_defaults(func=_rebuild_read_models)

    p = sub.add_parser(
        "project",
        help="run the read models in the foreground (one elected runner per database)",
        description="Run the read-model projections in this process until Ctrl-C or SIGTERM "
        "(exit 0). Only one process per database runs them (a lease: a PostgreSQL advisory "
        "lock, or a lock file next to the SQLite file); this one waits for the lease if a "
        "server or another `canasta project` holds it, and takes over when that one ends. "
        "For deployments whose servers run with CANASTA_READ_MODELS=off. " + store,
    )
    p.add_argument(
        "--progress-seconds",
        type=seconds,
        default=5.0,
        metavar="S",
        help="print the positions at most this often, when they changed (default 5)",
    )
    add_retry_argument(p)
    p.set_defaults(func=_project)
