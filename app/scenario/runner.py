"""Playing a scenario through ``CanastaApp`` on a throwaway embedded store, deal by deal,
exactly as the HTTP API would (docs/scenarios.md)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from uuid import UUID

from app.application import CanastaApp
from app.scenario.checks import check, final_report
from app.scenario.commands import build_command
from app.scenario.deck import TableSetup, deck_for, first_dealer, first_order, table_setup
from app.scenario.load import check_top_keys, deals_of, load
from app.scenario.model import Failure, Result, ScenarioError, require
from app.settings import Settings, eventsourcing_env
from domain.commands import Cut
from domain.errors import DomainError
from domain.seating import next_dealer
from domain.table import PLAYING


@contextmanager
def throwaway_app() -> Iterator[CanastaApp]:
    with tempfile.TemporaryDirectory(prefix="canasta-scenario-") as tmp:
        env = eventsourcing_env(Settings(database_url=None, data_dir=Path(tmp)))
        app = CanastaApp(env=env, allow_stacked_decks=True)
        try:
            yield app
        finally:
            app.close()


def run(data: Mapping[str, Any], name: str, app: CanastaApp) -> Result:
    """Play every deal of the scenario in order on one table; stop at the first failure."""
    check_top_keys(data, name)
    ts = table_setup(data, name)
    deals = deals_of(data, name)
    multi = "deals" in data
    result = Result(name=str(data.get("name", name)))
    players = [f"seat{i}" for i in range(ts.players)]
    try:
        table_id = app.create_table(players[0], ts.entry, ts.players, ts.options, ts.target)
    except DomainError as exc:
        raise ScenarioError(f"{name}: {exc.message}") from None
    for seat, player in enumerate(players):
        app.join_table(table_id, player, seat)
    if ts.teams:
        app.choose_teams(table_id, players[0], ts.teams)
    deal_id: UUID | None = None
    for number, item in enumerate(deals, start=1):
        prefix = f"deal {number} " if multi else ""
        where = f"{name}: deal {number}" if multi else name
        opened: tuple[UUID, int] | None
        if number == 1:
            opened = _first_deal(app, table_id, ts, item["deal"], players, where)
        else:
            opened = _next_deal(app, table_id, ts, item["deal"], players, where, result, prefix)
        if opened is None:
            break
        deal_id, cut = opened
        app.act(deal_id, players[app.get_deal(deal_id).state.cutter], Cut(cut))  # R-DEAL-4
        _play(app, table_id, deal_id, item["steps"], players, where, prefix, result)
        if not result.failures and item["expect_end"]:
            st = app.get_deal(deal_id).state
            result.failures += check(app, table_id, st, item["expect_end"], f"{prefix}end")
        if result.failures:
            break
    assert deal_id is not None
    result.final = final_report(app.get_deal(deal_id).state, app.get_table(table_id))
    return result


def _first_deal(
    app: CanastaApp,
    table_id: UUID,
    ts: TableSetup,
    deal: Mapping[str, Any],
    players: list[str],
    where: str,
) -> tuple[UUID, int]:
    """The game's first deal: ``dealer`` and ``sit_out`` fix what chance would decide."""
    order = first_order(ts, deal, where)
    dealer = first_dealer(deal, order, where)
    cut, deck = deck_for(ts, deal, order, dealer, where)
    deal_id = app.start_game(
        table_id,
        players[0],
        dealer=dealer,
        scores_before=ts.scores_before,
        deck=deck,
        sit_out=sorted(set(range(ts.players)) - set(order)),
    )
    return deal_id, cut


def _next_deal(
    app: CanastaApp,
    table_id: UUID,
    ts: TableSetup,
    deal: Mapping[str, Any],
    players: list[str],
    where: str,
    result: Result,
    prefix: str,
) -> tuple[UUID, int] | None:
    """The host's "next deal": the rules choose the dealer (R-DEAL-2) and who sits out
    (R-SEAT-2); the deal's ``dealer`` and ``sit_out`` are expectations of that choice."""
    table = app.get_table(table_id)
    if table.status != PLAYING:  # e.g. a target reached before the last listed deal
        result.failures.append(
            Failure(f"{prefix}start", "a deal to open", f"the game is {table.status}")
        )
        return None
    if len(table.deal_scores) < len(table.deals):
        result.failures.append(
            Failure(f"{prefix}start", "the previous deal over", "it is still being played")
        )
        return None
    assert table.order is not None and table.dealer is not None
    number = len(table.deals) + 1
    order = table.virtual_table(number)
    dealer = next_dealer(table.order, table.dealer, order)
    sit_out = sorted(set(range(ts.players)) - set(order))
    if "dealer" in deal and deal["dealer"] != dealer:
        result.failures.append(Failure(f"{prefix}dealer", deal["dealer"], dealer))
    if "sit_out" in deal:
        require(isinstance(deal["sit_out"], list), f"{where}: 'sit_out' is a list of seats")
        if sorted(deal["sit_out"]) != sit_out:
            result.failures.append(Failure(f"{prefix}sit_out", sorted(deal["sit_out"]), sit_out))
    if result.failures:
        return None
    cut, deck = deck_for(ts, deal, order, dealer, where)
    deal_id = app.start_next_deal(table_id, players[0], deck=deck)
    st = app.get_deal(deal_id).state
    if (st.dealer, list(st.order)) != (dealer, order):  # the engine chose as the runner read
        result.failures.append(
            Failure(f"{prefix}dealer and table", (dealer, order), (st.dealer, st.order))
        )
        return None
    return deal_id, cut


def _play(
    app: CanastaApp,
    table_id: UUID,
    deal_id: UUID,
    steps: list[dict[str, Any]],
    players: list[str],
    where_deal: str,
    prefix: str,
    result: Result,
) -> None:
    n = len(players)
    for number, step in enumerate(steps, start=1):
        where = f"{prefix}step {number}"
        seat = step.get("seat")
        if not isinstance(seat, int) or not 0 <= seat < n:
            raise ScenarioError(f"{where_deal}: step {number}: 'seat' is 0..{n - 1}")
        st = app.get_deal(deal_id).state
        command = build_command(step, st.hands[seat], f"{where_deal}: step {number}")
        expect = step.get("expect", "ok")
        before = app.get_deal(deal_id).version
        message = ""
        try:
            app.act(deal_id, players[seat], command)
            outcome: str = "ok"
        except DomainError as exc:
            outcome = exc.code
            message = exc.message
        wanted = "ok" if expect == "ok" else expect["error"]
        if outcome != wanted:
            actual = outcome if outcome == "ok" else f"{outcome} ({message})"
            result.failures.append(Failure(f"{where} ({step.get('do')})", wanted, actual))
            return
        after = app.get_deal(deal_id)
        if outcome != "ok" and after.version != before:
            result.failures.append(Failure(f"{where} refused", "nothing recorded", "events"))
            return
        if "then" in step:
            result.failures += check(app, table_id, after.state, step["then"], where)
            if result.failures:
                return


def run_file(path: Path) -> Result:
    data = load(path)
    with throwaway_app() as app:
        return run(data, str(path), app)
