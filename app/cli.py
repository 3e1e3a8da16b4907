"""The ``canasta`` command line: rule scenarios, a demo game, and operator tools."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app import cli_keys, cli_read_models, scenario
from app.cli_store import add_retry_argument, count, open_store, store_name

if TYPE_CHECKING:
    from pydantic import ValidationError

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
            print(f"MALFORMED {exc}", file=sys.stderr)  # the message names the file
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
    from domain.errors import SetupError
    from domain.table import Table

    options = {"always_frozen": True} if args.always_frozen else {}
    try:  # before anything is printed or opened, as the arena checks its set-up
        Table.check_setup(args.entry, args.players, options, None)
    except SetupError as exc:
        print(f"canasta demo: error: {exc.message}", file=sys.stderr)
        return 2
    if args.data_dir is not None:
        try:
            args.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            print(
                f"canasta demo: error: --data-dir {args.data_dir}: {exc.strerror}", file=sys.stderr
            )
            return 2
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


def _on_account(args: argparse.Namespace, act: Callable[[Any, Any, Any], int]) -> int:
    """``act(settings, canasta, account)`` on the account ``args.name`` found in any case (its
    own spelling from there on; an older store's names claimed first, as the server does) in
    the store the environment configures: exit 2 without a store, 1 without the account."""
    from domain.errors import NotFound

    opened = open_store(existing=True)
    if opened is None:
        return 2
    settings, canasta = opened
    try:
        canasta.claim_names()
        try:
            account = canasta.account(args.name)
        except NotFound:
            print(f"no account {args.name!r} in {store_name(settings)}", file=sys.stderr)
            return 1
        return act(settings, canasta, account)
    finally:
        canasta.close()


def _set_auditor(args: argparse.Namespace, *, granted: bool) -> int:
    from app.deps import named_auditor
    from domain.accounts import AUDITOR
    from domain.errors import NotFound

    def act(settings: Any, canasta: Any, account: Any) -> int:
        name = account.name
        if (AUDITOR in account.roles) == granted:
            state = "already holds" if granted else "does not hold"
            print(f"{name} {state} the {AUDITOR} role; nothing changed ({store_name(settings)})")
        else:
            try:
                canasta.set_role(name, AUDITOR, granted=granted)
            except NotFound:
                print(f"no account {name!r} in {store_name(settings)}", file=sys.stderr)
                return 1
            done = f"granted the {AUDITOR} role to" if granted else f"revoked the {AUDITOR} role of"
            print(f"{done} {name} ({store_name(settings)})")
        if not granted and named_auditor(canasta, settings, name):
            print(f"note: {name} is still an auditor through CANASTA_AUDITORS")
        return 0

    return _on_account(args, act)


def _grant_auditor(args: argparse.Namespace) -> int:
    return _set_auditor(args, granted=True)


def _revoke_auditor(args: argparse.Namespace) -> int:
    return _set_auditor(args, granted=False)


def _revoke_token(args: argparse.Namespace) -> int:
    def act(settings: Any, canasta: Any, account: Any) -> int:
        name = account.name
        token, revoked, closed = canasta.replace_tokens(name, "operator")
        tokens = "token" if revoked == 1 else "tokens"
        sessions = "browser session" if closed == 1 else "browser sessions"
        print(
            f"revoked {revoked} {tokens} of {name} ({store_name(settings)}): every server "
            "refuses them within 2 s and ends the live streams opened with them"
        )
        print(
            f"closed {closed} {sessions} of {name}: every server refuses them at once and "
            "ends the live streams signed in by them"
        )
        print(f"new token of {name}, to hand over by a safe channel (shown once):")
        print(token)
        return 0

    return _on_account(args, act)


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


def _print_table_report(table: Any) -> None:
    print(f"table {table.table_id}: {'ok' if table.ok else 'PROBLEMS'}")
    for problem in table.problems:
        print(f"  - {problem}")
    for number, deal in enumerate(table.deals, start=1):
        _print_deal_report(deal, number)


def _audit_all(canasta: Any, settings: Any, as_json: bool) -> int:
    """Every table of the store and every deal it opened (after a restore, say): a line a
    clean table, the whole report of one with problems, then the count."""
    from app.routes.audit import table_ids, table_report

    reports = []
    deals = unchecked = 0
    for table_id in table_ids(canasta):
        table = table_report(canasta, table_id)
        deals += len(table.deals)
        unchecked += sum(1 for deal in table.deals if deal.signature == "unchecked")
        reports.append(table.to_dict() if as_json else table.ok)
        if as_json:
            continue
        if table.ok:
            print(f"table {table.table_id}: ok ({len(table.deals)} deals)")
        else:
            _print_table_report(table)
    ok = all(r["ok"] if isinstance(r, dict) else r for r in reports)
    if as_json:
        print(json.dumps({"ok": ok, "tables": reports}, indent=2, sort_keys=True))
    else:
        bad = sum(1 for r in reports if not r)
        verdict = "all ok" if ok else f"PROBLEMS in {bad} of them"
        print(f"{store_name(settings)}: {len(reports)} tables, {deals} deals audited: {verdict}")
        if unchecked:
            print(
                f"signatures of {unchecked} deals unchecked: no key to check them with; give "
                "this command the servers' CANASTA_SIGNING_KEY_FILE (and CANASTA_RETIRED_KEYS_DIR)"
                ' (docs/operations.md, "Signing keys")'
            )
    return 0 if ok else 1


def _audit(args: argparse.Namespace) -> int:
    from uuid import UUID

    from app.routes.audit import deal_report, table_report
    from domain.errors import NotFound

    if (args.id is None) == (not args.all):
        print("name a deal or table id, or --all (not both)", file=sys.stderr)
        return 2
    target = None
    if args.id is not None:
        try:
            target = UUID(args.id)
        except ValueError:
            print(f"not a deal or table id: {args.id!r}", file=sys.stderr)
            return 2
    opened = open_store(existing=True)
    if opened is None:
        return 2
    settings, canasta = opened
    try:
        if target is None:
            return _audit_all(canasta, settings, args.json)
        try:
            report = deal_report(canasta, target)
        except NotFound:
            try:
                table = table_report(canasta, target)
            except NotFound:
                print(f"no deal or table {target} in {store_name(settings)}", file=sys.stderr)
                return 2
            if args.json:
                print(json.dumps(table.to_dict(), indent=2, sort_keys=True))
            else:
                _print_table_report(table)
            return 0 if table.ok else 1
        if args.json:
            print(json.dumps(report.to_dict(), indent=2, sort_keys=True))
        else:
            _print_deal_report(report)
        return 0 if report.ok else 1
    finally:
        canasta.close()


def _bots(args: argparse.Namespace) -> int:
    """Play the tables' bots in the foreground (whatever ``CANASTA_RUN_BOTS`` says) until
    Ctrl-C or SIGTERM; exit 0 when stopped so."""
    from app.cli_bots import run_foreground

    opened = open_store(signing=True, existing=True)
    if opened is None:
        return 2
    settings, canasta = opened
    try:
        return run_foreground(canasta, settings, store_name(settings), args.retry_seconds)
    finally:
        canasta.close()


#: The ``--entry`` of the commands that play games.
ENTRIES = "classic, extra_six, modern_american or ponytail (default classic)"


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
    p.add_argument("files", nargs="+", metavar="FILE_OR_DIR", help="scenario files or folders")
    p.add_argument("--json", action="store_true", help="also print final views and scores")
    p.set_defaults(func=_scenario)

    p = sub.add_parser(
        "demo",
        help="play one random legal game and print its logs",
        description="Play one game between random legal players, deal after deal, and print "
        "each deal's public discard log and scores and the game's totals. Exit 0; 2 for a "
        "set-up the entry does not allow.",
    )
    p.add_argument("--entry", default="classic", help=ENTRIES)
    p.add_argument("--players", type=int, default=4, help="a count the entry allows (default 4)")
    p.add_argument("--always-frozen", action="store_true", help="the option always_frozen")
    p.add_argument("--seed", type=int, default=None, help="seed of the random players")
    p.add_argument("--data-dir", type=Path, default=None, help="keep the store here")
    p.add_argument(
        "--max-deals", type=count, default=100, help="stop the game after this many (default 100)"
    )
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
    p.add_argument("--entry", default="classic", help=ENTRIES)
    p.add_argument("--players", type=int, default=4, help="a count the entry allows (default 4)")
    p.add_argument("--bots", default="basic,random", help="levels, comma-separated")
    p.add_argument("--games", type=int, default=20, help="whole games to play (default 20)")
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
        "revoke-token",
        help="revoke an account's bearer tokens (a token that leaked) and print a new one",
        description="Revoke every bearer token of an account: every server refuses them "
        "within 2 s (401, as an unknown token) and ends the live streams opened with them. "
        "A new token is issued and printed, once, for you to hand over to the player; he may "
        "also get one himself from a browser still signed in (POST /me/token). " + store,
    )
    p.add_argument("name", metavar="NAME", help="the account's name")
    p.set_defaults(func=_revoke_token)

    p = sub.add_parser(
        "audit",
        help="audit a deal (or every deal of a table, or of the store: --all): exit 0 ok, "
        "1 problems, 2 not found",
        description="Check a deal's hash chain, its seed against the published commitment, "
        "and every command re-decided by the rules; with a table id, every deal of the "
        "table and the table's record of their scores; with --all, every table of the "
        "store (after a restore, say). " + store,
    )
    p.add_argument("id", metavar="ID", nargs="?", help="a deal id (or a table id)")
    p.add_argument(
        "--all", action="store_true", help="every table of the store and every deal it opened"
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_audit)

    cli_read_models.add_parsers(sub, store)

    p = sub.add_parser(
        "bots",
        help="play the bots seated at tables, in the foreground (one elected runner per database)",
        description="Play every bot seated at a table of the store (docs/bots.md) until Ctrl-C "
        "or SIGTERM (exit 0): each bot's move goes through the players' command path. Only one "
        "process per database plays them (a lease, as for `canasta project`); this one waits "
        "for it if a server or another `canasta bots` holds it. For deployments whose servers "
        "run with CANASTA_RUN_BOTS=false. " + store,
    )
    add_retry_argument(p)
    p.set_defaults(func=_bots)
    cli_keys.add_parser(sub)
    return parser


def _settings_problems(exc: ValidationError) -> str:
    """What is wrong with the ``CANASTA_*`` environment, by variable (``app.settings``)."""
    problems = []
    for error in exc.errors(include_url=False):
        name = str(error["loc"][0]) if error["loc"] else ""
        variable = name if name.isupper() else f"CANASTA_{name.upper()}"
        problems.append(f"{variable}: {error['msg']}" if name else error["msg"])
    return "; ".join(problems)


def main(argv: Sequence[str] | None = None) -> int:
    from pydantic import ValidationError

    args = build_parser().parse_args(argv)
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # here, not at exit, where a reader gone is "Exception ignored", 120
        return code
    except BrokenPipeError:  # the reader went away (``canasta demo | head``): not an error
        # Python's own advice: point stdout at /dev/null so its flush at exit cannot fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except ValidationError as exc:  # the commands that read app.settings.Settings
        if exc.title != "Settings":
            raise
        problems = _settings_problems(exc)
        print(f"canasta: a setting of the environment is wrong: {problems}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
