"""Property-based fuzzing of the HTTP API from its own OpenAPI schema (schemathesis).

Every operation of ``/openapi.json`` gets generated requests, valid and invalid (positive and
negative generation), sent to the ASGI application in-process on a SQLite store that holds
seeded data: players, an open table, a game in play and its deal. Path parameters are often
replaced by the seeded ids, and command bodies often carry the deal's real expectation, so
that requests reach the rules and not only the validation. Requests are sent anonymously,
with a seated player's token, the host's token or an unknown token. Whatever the request:
no 500 (R-CMD-3: a stable error body instead) and every response conforms to the schema
the API publishes.

Live streams (``/stream``) are left out: an open stream only ends when its deal does.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

from app.application import CanastaApp
from app.main import create_app
from app.settings import Settings
from domain.legal import legal_command, seat_to_act
from tests.e2e.client import command_body, expectation, open_shadow

EXAMPLES = 30  # per operation and generation mode: bounded, so that the whole run is short
MORE_EXAMPLES = {"/deals/{deal_id}/commands": 150}  # where the rules are reached
SEATED = ["ann", "bob", "cid", "dan"]  # the players of the game in play; ann hosts the open table
HOST = "hal"  # hosts the game in play; his token is not used, so the game is never stopped
AUDITOR = "audrey"
WHO = ["nobody", "unknown", AUDITOR, *SEATED]  # anonymous, a bad token, auditor, players


@dataclass
class Seeded:
    api: FastAPI
    shadow: CanastaApp  # the test's own reader of the same store
    tokens: dict[str, str]
    playing_table: str
    open_table: str
    deal: str

    def ids(self, name: str) -> list[str]:
        if name == "table_id":
            return [self.playing_table, self.open_table]
        if name == "deal_id":
            return [self.deal]
        return []


def seed(settings: Settings) -> tuple[dict[str, str], str, str, str]:
    """Players, a table in play (host ``hal``, not seated) with a deal some steps in, and an
    open 5-player table hosted by ``ann``; made through the API itself."""
    app = create_app(settings)
    with TestClient(app) as client:
        tokens = {}
        for name in [HOST, AUDITOR, *SEATED]:
            answer = client.post("/players", json={"name": name})
            assert answer.status_code == 201, answer.text
            tokens[name] = answer.json()["token"]

        def auth(name: str) -> dict[str, str]:
            return {"Authorization": f"Bearer {tokens[name]}"}

        playing = client.post("/tables", json={"players": 4}, headers=auth(HOST)).json()["id"]
        for seat, name in enumerate(SEATED):
            client.post(f"/tables/{playing}/seats", json={"seat": seat}, headers=auth(name))
        deal_id = client.post(f"/tables/{playing}/start", headers=auth(HOST)).json()["deal"]
        canasta = app.state.canasta
        rng = random.Random(7)
        for seq in range(1, 13):
            deal = canasta.get_deal(UUID(deal_id))
            acting = seat_to_act(deal.state)
            assert acting is not None
            request = {
                "seq": seq,
                "expect": expectation(deal),
                "command": command_body(legal_command(deal.state, acting, rng)),
            }
            answer = client.post(
                f"/deals/{deal_id}/commands", json=request, headers=auth(SEATED[acting])
            )
            assert answer.status_code == 200, answer.text
        open_table = client.post(
            "/tables", json={"players": 5, "options": {"always_frozen": True}}, headers=auth("ann")
        ).json()["id"]
        client.post(f"/tables/{open_table}/seats", json={}, headers=auth("ann"))
    return tokens, playing, open_table, deal_id


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    data_dir: Path = tmp_path_factory.mktemp("fuzz")
    settings_ = Settings(database_url=None, data_dir=data_dir, auditors=[AUDITOR])
    tokens, playing, open_table, deal = seed(settings_)
    shadow = open_shadow(settings_)
    try:
        yield Seeded(create_app(settings_), shadow, tokens, playing, open_table, deal)
    finally:
        shadow.close()


@pytest.fixture(scope="module")
def api_schema(seeded: Seeded) -> Any:
    schema = schemathesis.openapi.from_asgi("/openapi.json", seeded.api)

    @schema.hook
    def flatmap_path_parameters(context: Any, path_parameters: Any) -> Any:
        """Often the seeded tables and deal instead of unknown ids."""
        if not isinstance(path_parameters, dict):
            return st.just(path_parameters)
        options = [path_parameters]
        for name in path_parameters:
            options += [{**path_parameters, name: value} for value in seeded.ids(name)]
        return st.sampled_from(options)

    @schema.hook
    def flatmap_body(context: Any, body: Any) -> Any:
        """A command (or its dry run) often carries the deal's real expectation, so that it
        reaches the rules (R-CMD-1 first, then R-CMD-3)."""
        operation = context.operation
        if operation is None or not operation.path.endswith(("/commands", "/commands/check")):
            return st.just(body)
        if not (isinstance(body, dict) and isinstance(body.get("expect"), dict)):
            return st.just(body)
        deal = seeded.shadow.get_deal(UUID(seeded.deal))
        return st.sampled_from([body, {**body, "expect": expectation(deal)}])

    return schema


def published_operations() -> list[tuple[str, str, GenerationMode]]:
    """(method, path, mode) of every operation the API publishes, live streams left out;
    negative mode only where there is an input to get wrong (a parameter or a body)."""
    paths = create_app(Settings(database_url="memory")).openapi()["paths"]
    cases = []
    for path, methods in paths.items():
        if path.endswith("/stream"):
            continue
        for method, operation in methods.items():
            cases.append((method.upper(), path, GenerationMode.POSITIVE))
            if operation.get("parameters") or operation.get("requestBody"):
                cases.append((method.upper(), path, GenerationMode.NEGATIVE))
    return cases


# The operations are listed when the tests are collected, one test per operation and mode.
# (schemathesis' own pytest integration, ``schemathesis.pytest.from_fixture``, fails with
# pytest 9.2: it sets ``Function._nodeid``, which pytest 9.2 no longer has.)
@pytest.mark.parametrize(("method", "path", "mode"), published_operations())
def test_no_request_gets_a_server_error_or_breaks_the_schema_r_cmd_3(
    api_schema: Any, seeded: Seeded, method: str, path: str, mode: GenerationMode
) -> None:
    operation = api_schema[path][method]

    @settings(
        max_examples=MORE_EXAMPLES.get(path, EXAMPLES),
        deadline=None,
        suppress_health_check=list(HealthCheck),
        database=None,
        derandomize=True,
    )
    @given(case=operation.as_strategy(generation_mode=mode), who=st.sampled_from(WHO))
    def fuzz(case: Any, who: str) -> None:
        headers = {}
        if who == "unknown":
            headers["Authorization"] = "Bearer not-a-token"
        elif who != "nobody":
            headers["Authorization"] = f"Bearer {seeded.tokens[who]}"
        case.call_and_validate(
            headers=headers,
            checks=[not_a_server_error, response_schema_conformance, status_code_conformance],
        )

    fuzz()
