"""What an operator watches (docs/operations.md, "Metrics", "Readiness", "Log lines"):
``/metrics`` counts accepted and refused commands by code whether the command lane or the
route answered them, per route template (never a raw path); ``/ready`` says 503 when the
read models lag the store by more than the bound; every answer carries the request's id,
the client's own when it sent a sane one. Through HTTP on the ASGI application (httpx)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from app.command_lane import CommandLane
from domain.legal import legal_command, seat_to_act
from tests.support.bots import bot_table
from tests.support.http import open_table, state_reader
from tests.support.waiting import wait_for

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(client: TestClient) -> Samples:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


def lane_of(client: TestClient) -> Any:
    layer: Any = client.app.middleware_stack  # type: ignore[attr-defined]
    while not isinstance(layer, CommandLane):
        layer = layer.app
    return layer


@pytest.mark.parametrize("lane", [True, False], ids=["command-lane", "route"])
def test_metrics_count_commands_accepted_replayed_and_refused_by_code(
    make_client: Callable[..., TestClient], lane: bool
) -> None:
    client = make_client(command_lane=lane)
    game = open_table(client)
    before = scrape(client)
    game.play_commands(state_reader(client.app.state.canasta), random.Random(3), 3)  # type: ignore[attr-defined]

    # A retry of the last command under its seq: answered again, not recorded twice.
    st = state_reader(client.app.state.canasta)(game.deal_id)  # type: ignore[attr-defined]
    seat = seat_to_act(st)
    assert seat is not None
    name = game.names[seat]
    url = f"/deals/{game.deal}/commands"
    body = game.request(name, legal_command(st, seat, random.Random(1)), game.seqs.get(name, 0) + 1)
    assert client.post(url, json=body, headers=game.headers[name]).status_code == 200
    retry = client.post(url, json=body, headers=game.headers[name])
    assert retry.status_code == 200 and retry.json()["replayed"] is True
    # Stale (the step moved on: R-CMD-1), malformed (422), without a token (401).
    stale = client.post(url, json={**body, "seq": body["seq"] + 1}, headers=game.headers[name])
    assert stale.status_code == 409, stale.text
    stale_code = stale.json()["error"]["code"]
    assert client.post(url, json={"seq": 1}, headers=game.headers[name]).status_code == 422
    unauthenticated = client.post(url, json=body)
    assert unauthenticated.status_code == 401
    assert unauthenticated.json()["error"]["code"] == "R-CMD-2"

    after = scrape(client)
    if lane:  # the accepted commands were answered below the routing, and counted there
        assert lane_of(client).answered >= 4
    assert moved(before, after, "canasta_commands_accepted_total") == 4
    assert moved(before, after, "canasta_commands_replayed_total") == 1
    assert moved(before, after, "canasta_commands_refused_total", code=stale_code) == 1
    assert moved(before, after, "canasta_commands_refused_total", code="malformed") == 1
    assert moved(before, after, "canasta_commands_refused_total", code="R-CMD-2") == 1
    route = {"method": "POST", "route": "/deals/{deal_id}/commands"}
    assert moved(before, after, "canasta_http_request_duration_seconds_count", **route) == 8
    assert moved(before, after, "canasta_http_responses_total", **route, status="200") == 5
    # Every view read for an ``expect`` is counted under its template, never its raw path.
    reads = moved(
        before,
        after,
        "canasta_http_request_duration_seconds_count",
        method="GET",
        route="/deals/{deal_id}",
    )
    assert reads >= 4
    assert game.deal_id not in client.get("/metrics").text


def test_a_rule_refusal_is_counted_under_its_rule_id(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    game = open_table(client)
    st = state_reader(client.app.state.canasta)(game.deal_id)  # type: ignore[attr-defined]
    seat = seat_to_act(st)
    assert seat is not None
    other = game.names[(seat + 1) % len(game.names)]  # not his turn
    before = scrape(client)
    refused = game.send(other, legal_command(st, seat, random.Random(2)))
    assert refused.status_code in (400, 403, 409), refused.text
    code = refused.json()["error"]["code"]
    after = scrape(client)
    assert moved(before, after, "canasta_commands_refused_total", code=code) == 1
    assert moved(before, after, "canasta_commands_accepted_total") == 0


def test_ready_answers_503_while_the_read_models_lag_beyond_the_bound(
    make_client: Callable[..., TestClient],
) -> None:
    # Nobody projects in the background here: the read models stay where they are.
    client = make_client(read_models="off", ready_max_lag=5)
    assert client.get("/ready").status_code == 200
    game = open_table(client)  # registrations, a table, seats, a start: many notifications
    game.play_commands(state_reader(client.app.state.canasta), random.Random(3), 3)  # type: ignore[attr-defined]

    answer = client.get("/ready")
    assert answer.status_code == 503
    error = answer.json()["error"]
    assert error["code"] == "read_models_behind" and "behind" in error["message"]
    assert client.get("/health").status_code == 200  # alive all the same
    lags = scrape(client)
    assert value(lags, "canasta_store_up") == 1
    assert value(lags, "canasta_projection_lag", projection="lobby") > 5

    client.app.state.read_models.catch_up()  # type: ignore[attr-defined]
    answer = client.get("/ready")
    assert answer.status_code == 200, answer.text
    ready = answer.json()
    assert ready["status"] == "ready" and ready["head"] > 5
    assert set(ready["read_models"].values()) == {0}


def test_every_answer_carries_the_request_id_the_clients_own_when_sane(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client()
    game = open_table(client)
    echoed = client.get("/health", headers={"X-Request-ID": "lb-7f3a:42"})
    assert echoed.headers["x-request-id"] == "lb-7f3a:42"
    made = {client.get("/health").headers["x-request-id"] for _ in range(3)}
    assert len(made) == 3 and all(len(rid) == 32 for rid in made)
    for insane in ("has space", "x" * 129, "semi;colon", "<script>"):
        replaced = client.get("/health", headers={"X-Request-ID": insane}).headers["x-request-id"]
        assert replaced != insane and len(replaced) == 32
    # The command lane's answers, an error and a 404 carry it too.
    state_of = state_reader(client.app.state.canasta)  # type: ignore[attr-defined]
    st = state_of(game.deal_id)
    seat = seat_to_act(st)
    assert seat is not None
    name = game.names[seat]
    body = game.request(name, legal_command(st, seat, random.Random(4)), 1)
    sent = client.post(
        f"/deals/{game.deal}/commands",
        json=body,
        headers={**game.headers[name], "X-Request-ID": "cmd-1"},
    )
    assert sent.status_code == 200 and sent.headers["x-request-id"] == "cmd-1"
    missing = client.get("/deals/not-a-deal", headers={"X-Request-ID": "err-1"})
    assert missing.status_code in (404, 422) and missing.headers["x-request-id"] == "err-1"


def test_the_bots_moves_are_counted(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    canasta = client.app.state.canasta  # type: ignore[attr-defined]
    before = value(scrape(client), "canasta_bot_moves_total", outcome="accepted")
    bot_table(canasta, "classic", 4, level="random")
    wait_for(
        lambda: value(scrape(client), "canasta_bot_moves_total", outcome="accepted") >= before + 5,
        timeout=30,
        what="the bots' moves are not counted",
    )


def test_every_answer_is_counted_under_a_route_template_never_a_raw_path(
    client: TestClient,
) -> None:
    deal = "5b7f3c1e-0d4a-4c55-9f0e-3a2b1c0d9e8f"
    before = scrape(client)
    client.head(f"/deals/{deal}")  # HEAD: answered as a GET
    client.delete(f"/deals/{deal}/commands")  # 405
    too_big = client.post(
        f"/deals/{deal}/commands",
        content=b"x" * 20000,
        headers={"content-type": "application/json"},
    )
    assert too_big.status_code == 413
    client.get("/web/common.js")  # a mounted file
    client.get(f"/nothing/{deal}")  # no route at all
    after = scrape(client)
    for method, route, status in [
        ("HEAD", "/deals/{deal_id}", "404"),
        ("DELETE", "/deals/{deal_id}/commands", "405"),
        ("POST", "/deals/{deal_id}/commands", "413"),
        ("GET", "/web/{path}", "200"),
        ("GET", "unmatched", "404"),
    ]:
        labels = {"method": method, "route": route, "status": status}
        assert moved(before, after, "canasta_http_responses_total", **labels) == 1, labels
    assert moved(before, after, "canasta_commands_refused_total", code="body_too_large") == 1
    assert deal not in client.get("/metrics").text
