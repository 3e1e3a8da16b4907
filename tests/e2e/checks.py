"""What the end-to-end tests assert about deals, tables, views and the event store."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any
from uuid import UUID

from eventsourcing.persistence import OperationalError

from app.application import CanastaApp
from app.infra.projection_runner import ReadModels
from app.settings import Settings, eventsourcing_env
from domain.chain import first_broken_link
from domain.deal import Deal
from tests.e2e.client import JSON, Api, Game
from tests.e2e.server import Server

#: How long the server's read models may take to reach the end of the event log.
READ_MODELS_SECONDS = 30.0

#: Keys that only an auditor's view may hold (projections/visibility.py, R-VIEW-4).
AUDITOR_ONLY_KEYS = frozenset({"hands", "stock", "pile_cards", "deck", "seed"})


def stored_events(app: CanastaApp, deal_id: str) -> list[Any]:
    return list(app.events.get(UUID(deal_id)))


def check_stream(app: CanastaApp, deal_id: str) -> list[Any]:
    """R-HIST-1: the deal's stored events are steps 1..N, no gap, no duplicate, and their
    hash chain verifies; returns them."""
    events = stored_events(app, deal_id)
    steps = [event.originator_version for event in events]
    repeated = [step for step, n in Counter(steps).items() if n > 1]
    assert not repeated, f"deal {deal_id}: steps stored twice: {repeated}"
    assert steps == list(range(1, len(steps) + 1)), f"deal {deal_id}: gap in steps {steps}"
    assert first_broken_link(events) is None, f"deal {deal_id}: broken hash chain"
    return events


def fold(events: list[Any]) -> Deal:
    """The deal rebuilt from its stored events alone (no cache, no snapshot)."""
    aggregate: Any = None
    for event in events:
        aggregate = event.mutate(aggregate)
    assert isinstance(aggregate, Deal)
    return aggregate


def cold_app(settings: Settings) -> CanastaApp:
    """A new ``CanastaApp`` on the same store with its aggregate cache off."""
    return CanastaApp(
        env=eventsourcing_env(settings.model_copy(update={"aggregate_cache_maxsize": 0}))
    )


def check_replay_equals_live(settings: Settings, deal_id: str, live: Deal) -> None:
    """A replay from scratch (fresh application, cold cache; and a plain fold of the stored
    events) gives the live deal: same step, same state."""
    app = cold_app(settings)
    try:
        rebuilt = app.get_deal(UUID(deal_id))
        folded = fold(check_stream(app, deal_id))
    finally:
        app.close()
    assert rebuilt.version == live.version == folded.version
    assert rebuilt.state.to_dict() == live.state.to_dict() == folded.state.to_dict()


def check_spectator_view(view: JSON) -> None:
    """R-VIEW-1/2/4: a spectator sees no hand, no stock, no seed."""
    assert view["hand"] is None and view["seat"] is None, view
    leaked = AUDITOR_ONLY_KEYS & set(view)
    assert not leaked, f"a spectator's view holds {sorted(leaked)}"


def check_spectator_events(events: list[JSON]) -> None:
    """R-VIEW-3/4: a spectator's history shows no dealt or drawn card and no seed."""
    for event in events:
        assert event["kind"] not in ("DeckShuffled", "DeckStacked"), event
        if event["kind"] in ("CardsDealt", "CardsDrawn"):
            assert "cards" not in event, event


def check_finished_deal(api: Api, game: Game, deal_id: str) -> JSON:
    """After a deal: the views, the history and the table's scores agree (R-SCORE-*, R-VIEW-*,
    R-HIST-1); returns the spectator's view of the deal."""
    view = api.deal(deal_id)
    assert view["phase"] == "over" and view["scores"] is not None, view
    check_spectator_view(view)
    check_spectator_view(api.deal(deal_id, game.host, spectator=True))
    check_spectator_events(api.events(deal_id))

    # Each seated player sees his own hand as the store has it; a sit-out, nothing (R-SEAT-4).
    live = game.shadow.get_deal(UUID(deal_id))
    for seat, player in enumerate(game.seats):
        own = api.deal(deal_id, player)
        if seat in live.state.order:
            assert own["seat"] == seat and own["hand"] == sorted(live.state.hands[seat])
        else:
            check_spectator_view(own)
    assert view["step"] == live.version

    # The table's totals are the sum of its deals' scores (R-SCORE-1, R-GAME-1).
    table = api.table(game.table_id)
    index = game.deals.index(deal_id)
    assert table["deals"][: index + 1] == game.deals[: index + 1]
    deal_scores = {side: breakdown["total"] for side, breakdown in view["scores"].items()}
    assert table["deal_scores"][index] == deal_scores
    assert len(table["deal_scores"]) == index + 1
    totals = {side: sum(s.get(side, 0) for s in table["deal_scores"]) for side in table["totals"]}
    assert table["totals"] == totals, (table["totals"], table["deal_scores"])

    check_stream(game.shadow, deal_id)
    return view


def check_game_over(api: Api, game: Game, table: JSON) -> None:
    """R-GAME-1: the game ended after a deal in which a side reached the target; the highest
    total wins; no deal can follow."""
    assert table["status"] == "finished", table
    totals: dict[str, int] = table["totals"]
    best = max(totals.values())
    assert best >= game.target, totals
    assert sorted(table["winners"]) == sorted(s for s, t in totals.items() if t == best)
    assert len(table["deals"]) == len(game.deals) == len(table["deal_scores"])
    refused = api.call("POST", f"/tables/{game.table_id}/deals", player=game.host)
    assert refused.status_code == 400, refused.text


def open_read_models(settings: Settings, app: CanastaApp, attempts: int = 20) -> ReadModels:
    """``ReadModels`` beside a running server. On SQLite its set-up (CREATE TABLE IF NOT
    EXISTS, then an INSERT, in one deferred transaction) fails at once with "database is
    locked" when the server writes meanwhile (a stale read snapshot cannot be upgraded to
    a write): retried here; reported as a defect of app/infra/read_model_store/."""
    for attempt in range(attempts):
        try:
            return ReadModels(settings, app=app)
        except OperationalError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.1)
    raise AssertionError("unreachable")


def check_read_models_equal_a_rebuild(server: Server, settings: Settings) -> None:
    """The server's own read models (discard logs, draw logs, score tables, lobby) reach the
    end of the event log by themselves, and then equal a rebuild from scratch: every event
    processed exactly once, none lost, none twice.

    Stops the server first: a rebuild is maintenance, which no running server may share."""
    app = cold_app(settings)
    read_models = open_read_models(settings, app)  # not started: it only reads, then rebuilds
    try:
        head = read_models.head()
        deadline = time.monotonic() + READ_MODELS_SECONDS
        while not all(w.has_processed(head) for w in read_models.workers.values()):
            assert time.monotonic() < deadline, (
                f"the server's read models stay behind the log's head {head}: "
                f"{read_models.positions()}"
            )
            time.sleep(0.05)
        server.stop()
        live = read_models.dump()
        assert any(live.values()), "the read models are empty"
        read_models.rebuild()
        rebuilt = read_models.dump()
        for table, rows in live.items():
            assert rows == rebuilt[table], f"read model table {table} differs from a rebuild"
    finally:
        read_models.close()
        app.close()
