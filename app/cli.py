"""The ``canasta`` command line: rule scenarios, a demo game, and operator tools."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from app import cli_keys, scenario

if TYPE_CHECKING:
    from app.application import CanastaApp
    from app.settings import Settings
    from domain.audit import AuditReport


def _scenario(args: argparse.Namespace) -> int:
    status = 0
    try:
        paths = scenario.scenario_files(args.files)
    except scenario.ScenarioError as exc:
        print(f"MALFORMED {exc}", file=sys.stderr)
        return 2
    for path in paths:
        try:
            result = scenario.run_file(path)
        except scenario.ScenarioError as exc:
            print(f"MALFORMED {path}: {exc}", file=sys.stderr)
            return 2
        if result.ok:
            print(f"ok      {path}  {result.name}")
        else:
            status = 1
            print(f"FAILED  {path}  {result.name}")
            for failure in result.failures:
                print(f"        {failure}")
        if args.json:
            print(json.dumps({"file": str(path), "ok": result.ok, **result.final}, indent=2))
    return status


def _demo(args: argparse.Namespace) -> int:
    from app.demo import play_demo

    return play_demo(
        entry=args.entry,
        players=args.players,
        always_frozen=args.always_frozen,
        seed=args.seed,
        data_dir=args.data_dir,
        max_deals=args.max_deals,
    )


def _arena(args: argparse.Namespace) -> int:
    import time

    from app import arena

    setup = arena.Setup(
        entry=args.entry,
        players=args.players,
        bots=tuple(b.strip() for b in args.bots.split(",") if b.strip()),
        games=args.games,
        seed=args.seed,
        strong_ms=args.strong_ms or None,
        strong_rollouts=args.strong_rollouts,
    )
    try:
        setup.check()
        if args.jobs is not None and args.jobs < 1:
            raise arena.ArenaError(f"--jobs must be at least 1, not {args.jobs}")
    except arena.ArenaError as exc:
        print(f"canasta arena: error: {exc}", file=sys.stderr)
        return 2
    started = time.monotonic()
    results = arena.run(setup, args.jobs, arena.stderr_progress())
    summary = arena.summary(setup, results, time.monotonic() - started)
    print(json.dumps(summary) if args.json else arena.report(summary))
    return 0 if summary["unfinished"] == 0 else 1


# --- operator tools: roles and audits (on the store the environment configures) ----------


def _store(settings: Settings) -> str:
    """Where the settings point, without credentials."""
    from app.settings import MEMORY

    url = settings.database_url
    if url is None:
        return f"SQLite {settings.sqlite_path}"
    if url == MEMORY:
        return "memory"
    parts = urlsplit(url)
    return f"PostgreSQL {parts.hostname or 'localhost'}:{parts.port or 5432}{parts.path}"


def _in_memory(settings: Settings) -> bool:
    """The operator's commands work on a server's store, which the in-memory one never is
    (it belongs to one process): True, with the reason on stderr, if it is that one."""
    from app.settings import MEMORY

    if settings.database_url != MEMORY:
        return False
    print(
        "the in-memory store belongs to one process: set DATABASE_URL (PostgreSQL) or "
        "CANASTA_DATA_DIR (SQLite) to the server's store",
        file=sys.stderr,
    )
    return True


def _open_store(*, signing: bool = False) -> tuple[Settings, CanastaApp] | None:
    """The application on the configured store (``DATABASE_URL`` / ``CANASTA_*``) and its
    keys (``app.signing``; ``signing``: it signs what it records, and needs the key)."""
    from app.application import CanastaApp
    from app.settings import Settings, eventsourcing_env
    from app.signing import load_keyring

    settings = Settings()
    if _in_memory(settings):
        return None
    try:
        keys = load_keyring(settings, signing=signing) or None  # none: signatures unchecked
        return settings, CanastaApp(env=eventsourcing_env(settings), keys=keys)
    except Exception as exc:  # a bad URL, a database that is down, no signing key
        print(f"cannot open the store ({_store(settings)}): {exc}", file=sys.stderr)
        return None


def _set_auditor(args: argparse.Namespace, *, granted: bool) -> int:
    from app.deps import named_auditor
    from domain.accounts import AUDITOR
    from domain.errors import NotFound

    opened = _open_store()
    if opened is None:
        return 2
    settings, canasta = opened
    try:
        canasta.claim_names()  # an older store: its names found in any case, as by the server
        try:  # the name in any case; the account's own spelling from here on
            account = canasta.account(args.name)
        except NotFound:
            print(f"no account {args.name!r} in {_store(settings)}", file=sys.stderr)
            return 1
        name = account.name
        if (AUDITOR in account.roles) == granted:
            state = "already holds" if granted else "does not hold"
            print(f"{name} {state} the {AUDITOR} role; nothing changed ({_store(settings)})")
        else:
            try:
                canasta.set_role(name, AUDITOR, granted=granted)
            except NotFound:
                print(f"no account {name!r} in {_store(settings)}", file=sys.stderr)
                return 1
            done = f"granted the {AUDITOR} role to" if granted else f"revoked the {AUDITOR} role of"
            print(f"{done} {name} ({_store(settings)})")
        if not granted and named_auditor(canasta, settings, name):
            print(f"note: {name} is still an auditor through CANASTA_AUDITORS")
        return 0
    finally:
        canasta.close()


def _grant_auditor(args: argparse.Namespace) -> int:
    return _set_auditor(args, granted=True)


def _revoke_auditor(args: argparse.Namespace) -> int:
    return _set_auditor(args, granted=False)


def _print_deal_report(report: AuditReport, number: object = None) -> None:
    what = f"deal {number} " if number is not None else "deal "
    print(f"{what}{report.deal_id}: {'ok' if report.ok else 'PROBLEMS'}")
    chain = "ok" if report.chain_ok else f"BROKEN at step {report.first_broken_step}"
    commitment = "ok" if report.commitment_ok else "FAILS"
    rules = "ok" if report.rules_ok else f"MISMATCH at step {report.first_mismatch_step}"
    print(
        f"  events {report.events}, commands re-decided {report.commands}; hash chain {chain}; "
        f"commitment {commitment}{' (prepared deck)' if report.stacked else ''}; rules {rules}"
        f"; signature {report.signature}"
    )
    if report.complete:
        scores = ", ".join(f"{side} {total}" for side, total in (report.final_scores or {}).items())
        print(f"  ended: {report.end_reason}{'; ' + scores if scores else ''}")
    else:
        print("  not over yet")
    for problem in report.problems():
        print(f"  - {problem}")
    if report.expected is not None:
        print(f"    the rules record: {json.dumps(report.expected, sort_keys=True)}")
    if report.stored is not None:
        print(f"    the store holds:  {json.dumps(report.stored, sort_keys=True)}")


def _audit(args: argparse.Namespace) -> int:
    from uuid import UUID

    from app.routes.audit import deal_report, table_report
    from domain.errors import NotFound

    try:
        target = UUID(args.id)
    except ValueError:
        print(f"not a deal or table id: {args.id!r}", file=sys.stderr)
        return 2
    opened = _open_store()
    if opened is None:
        return 2
    settings, canasta = opened
    try:
        try:
            report = deal_report(canasta, target)
        except NotFound:
            try:
                table = table_report(canasta, target)
            except NotFound:
                print(f"no deal or table {target} in {_store(settings)}", file=sys.stderr)
                return 2
            if args.json:
                print(json.dumps(table.to_dict(), indent=2, sort_keys=True))
            else:
                print(f"table {table.table_id}: {'ok' if table.ok else 'PROBLEMS'}")
                for problem in table.problems:
                    print(f"  - {problem}")
                for number, deal in enumerate(table.deals, start=1):
                    _print_deal_report(deal, number)
            return 0 if table.ok else 1
        if args.json:
            print(json.dumps(report.to_dict(), indent=2, sort_keys=True))
        else:
            _print_deal_report(report)
        return 0 if report.ok else 1
    finally:
        canasta.close()


def _rebuild_read_models(args: argparse.Namespace) -> int:
    """Empty every read model and replay the whole event log into it (exactly once: each
    batch's rows and position are committed together)."""
    import time

    from app.infra.projection_runner import ReadModels
    from app.settings import Settings

    settings = Settings()
    if _in_memory(settings):
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
        print(f"cannot open the read models ({_store(settings)}): {exc}", file=sys.stderr)
        return 2
    with read_models:
        head = read_models.head()
        print(f"rebuilding the read models of {_store(settings)} from {head} events")
        began = time.monotonic()

        def progress(name: str, count: int, position: int) -> None:
            print(f"  {name}: {count} events read, at {position} of {head}", flush=True)

        read_models.rebuild(progress=progress)
        seconds = time.monotonic() - began
        positions = read_models.positions()
        for name, rows in read_models.dump().items():
            print(f"  table {name}: {len(rows)} rows")
        done = ", ".join(f"{name} at {position or 0}" for name, position in positions.items())
        print(f"rebuilt in {seconds:.1f} s ({done})")
    return 0


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
    if _in_memory(settings):
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
            print(f"cannot open the read models ({_store(settings)}): {exc}", file=sys.stderr)
            return 2
        with read_models:
            print(
                f"projecting {_store(settings)}: waiting for the lease (Ctrl-C or SIGTERM stops)",
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
                    now = (read_models.head(), read_models.positions())
                    if now != shown:
                        shown = now
                        at = ", ".join(f"{n} at {p or 0}" for n, p in now[1].items())
                        print(f"  log at {now[0]}: {at}", flush=True)
            print("stopping", flush=True)
        print("stopped", flush=True)
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _bots(args: argparse.Namespace) -> int:
    """Play the tables' bots in the foreground (whatever ``CANASTA_RUN_BOTS`` says) until
    Ctrl-C or SIGTERM; exit 0 when stopped so."""
    from app.bot_runner import run_foreground

    opened = _open_store(signing=True)
    if opened is None:
        return 2
    settings, canasta = opened
    try:
        return run_foreground(canasta, settings, _store(settings), args.retry_seconds)
    finally:
        canasta.close()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="canasta", description="canasta-ledger tools")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "scenario",
        help="run rule scenario files (format: docs/scenarios.md)",
        description="Run rule scenario files (format: docs/scenarios.md). A folder runs every "
        "*.json file under it. Exit 0: every expectation holds; 1: one failed; 2: a file is "
        "malformed.",
    )
    p.add_argument("files", nargs="+", metavar="FILE_OR_DIR")
    p.add_argument("--json", action="store_true", help="also print final views and scores")
    p.set_defaults(func=_scenario)

    p = sub.add_parser("demo", help="play one random legal game and print its logs")
    p.add_argument("--entry", default="classic")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--always-frozen", action="store_true")
    p.add_argument("--seed", type=int, default=None, help="seed of the random players")
    p.add_argument("--data-dir", type=Path, default=None, help="keep the store here")
    p.add_argument("--max-deals", type=int, default=100, help="stop the game after this many")
    p.set_defaults(func=_demo)

    p = sub.add_parser(
        "arena",
        help="bots play whole games against each other in memory; wins, margins, CPU per move",
        description="Play GAMES whole games in memory between bot levels (docs/bots.md), each "
        "level on its own side, the sides swapped every other game, over JOBS processes, and "
        "print per level: games won, the win rate with its Wilson 95% interval, the average "
        "score margin and the CPU per move. Exit 0; 1 if a game did not end (a safety cap); "
        "2 for a bad argument.",
    )
    p.add_argument("--entry", default="classic")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--bots", default="basic,random", help="levels, comma-separated")
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--seed", type=int, default=0, help="the run's seed (same seed, same games)")
    p.add_argument("--jobs", type=int, default=None, help="processes (default: one per core)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--strong-ms", type=float, default=200.0,
                   help="strong: CPU ms per searched move (0: count worlds only)")  # fmt: skip
    p.add_argument("--strong-rollouts", type=int, default=24,
                   help="strong: sampled worlds per searched move at most")  # fmt: skip
    p.set_defaults(func=_arena)

    store = (
        "Works on the store the environment configures (DATABASE_URL, CANASTA_DATABASE_URL or "
        "CANASTA_DATA_DIR), as the server does."
    )
    p = sub.add_parser(
        "grant-auditor",
        help="give an account the auditor role (R-VIEW-4)",
        description="Give an account the auditor role: it may then fetch the full history "
        "of any deal and audit it (GET /audit/...). The API never grants roles. " + store,
    )
    p.add_argument("name", metavar="NAME", help="the account's name")
    p.set_defaults(func=_grant_auditor)

    p = sub.add_parser(
        "revoke-auditor",
        help="take the auditor role from an account",
        description="Take the auditor role from an account. " + store,
    )
    p.add_argument("name", metavar="NAME", help="the account's name")
    p.set_defaults(func=_revoke_auditor)

    p = sub.add_parser(
        "audit",
        help="audit a deal (or every deal of a table): exit 0 ok, 1 problems, 2 not found",
        description="Check a deal's hash chain, its seed against the published commitment, "
        "and every command re-decided by the rules; with a table id, every deal of the "
        "table and the table's record of their scores. " + store,
    )
    p.add_argument("id", metavar="ID", help="a deal id (or a table id)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_audit)

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
        type=float,
        default=5.0,
        metavar="S",
        help="print the positions at most this often, when they changed (default 5)",
    )
    p.add_argument(
        "--retry-seconds",
        type=float,
        default=1.0,
        metavar="S",
        help="how often to try for the lease while another process holds it (default 1)",
    )
    p.set_defaults(func=_project)

    p = sub.add_parser(
        "bots",
        help="play the bots seated at tables, in the foreground (one elected runner per database)",
        description="Play every bot seated at a table of the store (docs/bots.md) until Ctrl-C "
        "or SIGTERM (exit 0): each bot's move goes through the players' command path. Only one "
        "process per database plays them (a lease, as for `canasta project`); this one waits "
        "for it if a server or another `canasta bots` holds it. For deployments whose servers "
        "run with CANASTA_RUN_BOTS=false. " + store,
    )
    p.add_argument(
        "--retry-seconds",
        type=float,
        default=1.0,
        metavar="S",
        help="how often to try for the lease while another process holds it (default 1)",
    )
    p.set_defaults(func=_bots)
    cli_keys.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
