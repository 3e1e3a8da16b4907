"""Rule scenarios as data (docs/scenarios.md): load, set up, play, check.

A scenario fixes the cards of one deal, or of several deals played in order on one table;
the runner turns them into the deck order that the real cut and deal produce, then plays the
steps through ``CanastaApp`` on a throwaway embedded store, exactly as the HTTP API would.

- ``load``: reading files and checking their shape (malformed: exit 2);
- ``deck``: the table set-up and each deal's deck order;
- ``commands``: a step as a domain command;
- ``checks``: ``then`` and ``expect_end``;
- ``runner``: playing the deals.
"""

from app.scenario.checks import check, final_report
from app.scenario.commands import build_command
from app.scenario.deck import Setup, TableSetup, build_setup, table_setup
from app.scenario.load import CHECK_KEYS, deals_of, load, scenario_files
from app.scenario.model import Failure, Result, ScenarioError
from app.scenario.runner import run, run_file, throwaway_app

__all__ = [
    "CHECK_KEYS",
    "Failure",
    "Result",
    "ScenarioError",
    "Setup",
    "TableSetup",
    "build_command",
    "build_setup",
    "check",
    "deals_of",
    "final_report",
    "load",
    "run",
    "run_file",
    "scenario_files",
    "table_setup",
    "throwaway_app",
]
