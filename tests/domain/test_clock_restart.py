"""A turn clock started again after an outage of the server (docs/tables.md, "Turn clock"):
``domain.clock.restart_due`` says when; ``Deal.restart_clock`` records ``TurnClockRestarted``,
from which the turn's clock starts (the event's time, or the outage's end if later); the
audit accepts it for the seat to act, whose turn has not timed out, and catches a forged one
(R-HIST-1)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from uuid import UUID

import pytest

from app.application import CanastaApp
from app.autoplay import HOST, SeededRandom, new_table, play_deal
from domain.audit import audit_deal
from domain.clock import deadline, restart_due
from domain.deal import Deal
from domain.legal import seat_to_act
from tests.domain.test_audit import MEMORY_ENV, assert_clean, index_of, replace_at, resigned

SECONDS = 60


def _deal_in_play() -> tuple[CanastaApp, Deal]:
    rng = random.Random(4)
    app = CanastaApp(env=MEMORY_ENV, random=SeededRandom(rng))
    deal_id = app.start_game(new_table(app, "classic", 2), HOST)
    play_deal(app, deal_id, rng, max_commands=6)
    return app, app.get_deal(deal_id)


def test_a_turn_begun_before_the_service_came_back_restarts_once() -> None:
    app, deal = _deal_in_play()
    seat = seat_to_act(deal.state)
    assert seat is not None and deal.turn_since is not None
    began = datetime.fromisoformat(deal.turn_since)
    assert restart_due(deal.turn_since, SECONDS, deal.state, None) is None  # no outage known
    assert restart_due(deal.turn_since, None, deal.state, began + timedelta(1)) is None  # no clock
    assert restart_due(deal.turn_since, SECONDS, deal.state, began) is None  # begun after
    # The service came back in the future of the deal's clocks (clocks apart): the restart
    # starts the turn there, not before, so it is not due again.
    up = datetime.now(began.tzinfo) + timedelta(seconds=30)
    assert restart_due(deal.turn_since, SECONDS, deal.state, up) == seat
    deal.restart_clock(seat, (began + timedelta(seconds=1)).isoformat(), up.isoformat())
    app.save(deal)
    again = app.get_deal(deal.id)
    assert again.turn_since == up.isoformat()
    assert deadline(again.turn_since, SECONDS, again.state) == up + timedelta(seconds=SECONDS)
    assert restart_due(again.turn_since, SECONDS, again.state, up) is None
    assert again.state.missed == deal.state.missed and again.state.timed_out == []
    with pytest.raises(ValueError):  # only the seat to act
        again.restart_clock(1 - seat, None, up.isoformat())
    assert_clean(audit_deal(list(app.events.get(deal.id))))


def test_the_audit_catches_a_forged_restart() -> None:
    app, deal = _deal_in_play()
    seat = seat_to_act(deal.state)
    assert seat is not None and deal.turn_since is not None
    up = datetime.fromisoformat(deal.turn_since) + timedelta(seconds=5)
    deal.restart_clock(seat, None, up.isoformat())
    app.save(deal)
    events = list(app.events.get(UUID(str(deal.id))))
    i = index_of(events, "TurnClockRestarted")
    for forged_fields in (
        {"seat": 1 - seat},  # not the seat to act
        {"down": (up + timedelta(seconds=1)).isoformat()},  # an outage ending before it began
        {"up": "yesterday"},
    ):
        report = audit_deal(resigned(replace_at(events, i, **forged_fields), i))
        assert report.chain_ok and not report.rules_ok, forged_fields
        assert report.first_mismatch_step == events[i].originator_version
