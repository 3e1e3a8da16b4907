"""Property-based fuzzing of the HTTP API from its own OpenAPI schema (schemathesis), with
every check schemathesis has (the Python equivalent of ``--checks all``).

Every operation of ``/openapi.json`` gets generated requests, valid and invalid (positive and
negative generation), sent to the ASGI application in-process on a SQLite store that holds
seeded data: players, an open table, a game in play and its deal. Path parameters are often
replaced by the seeded ids, and command bodies often carry the deal's real expectation, so
that requests reach the rules and not only the validation. Requests are sent anonymously,
with a seated player's token, the host's token or an unknown token. Then the stateful phase
follows the links the document declares (``app.openapi_contract``): from a registration to a
new table, its seats, its start and the deal's operations, and from the seeded tables' views
to their deals.

Whatever the request: no 500 (R-CMD-3: a stable error body instead), every response conforms
to the schema the API publishes (status, content type, headers, body), invalid requests are
refused, valid ones are accepted or refused by a documented rule (400 with a rule id: the one
answer added to what schemathesis expects for valid data, besides 401, 403, 404 and 409
R-CMD-1, which it expects already; each request's ``Idempotency-Key`` is a new one), a 405 names
the allowed methods, an operation that declares a token refuses a request without one unless
it declares the token optional, and a created table can be read at once.

Live streams (``/stream``) are left out: an open stream only ends when its deal does.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import FlakyFailure, FlakyStrategyDefinition
from schemathesis.config import SchemathesisConfig
from schemathesis.generation import GenerationMode

from app.application import CanastaApp
from app.idempotency_keys import HEADER, KEY_PATTERN, MAX_KEY, MIN_KEY
from app.main import create_app
from app.settings import Settings
from domain.legal import legal_command, seat_to_act
from tests.e2e.client import command_body, expectation, open_shadow

pytestmark = pytest.mark.slow

EXAMPLES = 30  # per operation and generation mode: bounded, so that the whole run is short
MORE_EXAMPLES = {"/deals/{deal_id}/commands": 150}  # where the rules are reached
SEATED = ["ann", "bob", "cid", "dan"]  # the players of the game in play; ann hosts the open table
HOST = "hal"  # hosts the game in play; his token is not used, so the game is never stopped
AUDITOR = "audrey"
WHO = ["nobody", "unknown", AUDITOR, *SEATED]  # anonymous, a bad token, auditor, players
#: What valid data may get besides schemathesis' own expectations (2xx, 401, 403, 404, 409):
#: a refusal by a rule, 400 with the rule's id (docs/rules/common.md, the error codes).
RULE_REFUSALS = ["400"]
STATEFUL_EXAMPLES = 60  # scenarios of the stateful phase, per round
STATEFUL_MORE_ROUNDS = 5  # rounds of fresh random scenarios while the walk falls short
STATEFUL_STEPS = 12  # requests per scenario at most


@dataclass
class Seeded:
    api: FastAPI
    shadow: CanastaApp  # the test's own reader of the same store
    tokens: dict[str, str]
    playing_table: str
    open_table: str
    ready_table: str  # full, not started, hosted by ann: kept for the stateful phase to start
    deal: str
    stateful: bool = False  # the stateful phase has begun: the ready table is offered

    def ids(self, name: str) -> list[str]:
        if name == "table_id":
            ready = [self.ready_table] if self.stateful else []
            return [self.playing_table, self.open_table, *ready]
        if name == "deal_id":
            return [self.deal]
        return []


def seed(settings: Settings) -> tuple[dict[str, str], str, str, str, str]:
    """Players, a table in play (host ``hal``, not seated) with a deal some steps in, an
    open 5-player table hosted by ``ann``, and a full 2-player table of ``ann`` and ``bob``
    not started yet; made through the API itself."""
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
        ready = client.post("/tables", json={"players": 2}, headers=auth("ann")).json()["id"]
        for name in SEATED[:2]:
            client.post(f"/tables/{ready}/seats", json={}, headers=auth(name))
    return tokens, playing, open_table, ready, deal_id


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    data_dir: Path = tmp_path_factory.mktemp("fuzz")
    settings_ = Settings(database_url=None, data_dir=data_dir, auditors=[AUDITOR])
    tokens, playing, open_table, ready, deal = seed(settings_)
    shadow = open_shadow(settings_)
    try:
        yield Seeded(create_app(settings_), shadow, tokens, playing, open_table, ready, deal)
    finally:
        shadow.close()


@pytest.fixture(scope="module")
def api_schema(seeded: Seeded) -> Any:
    config = SchemathesisConfig()
    checks = config.projects.default.checks
    checks.update(included_check_names=["all"])  # --checks all
    checks.positive_data_acceptance.expected_statuses = [
        *checks.positive_data_acceptance.expected_statuses,
        *RULE_REFUSALS,
    ]
    # Unknown query parameters are ignored, not refused (docs/api.md: a client may add a
    # cache-buster), so they are not "invalid data" here.
    config.projects.default.generation.update(allow_extra_parameters=False)
    # A body above the documented size is refused before it is parsed (413 body_too_large):
    # a rejection of invalid data like any other.
    checks.negative_data_rejection.expected_statuses = [
        *checks.negative_data_rejection.expected_statuses,
        "413",
    ]
    # The stateful phase sends valid requests only (it follows links; the invalid ones are
    # generated per operation, below), whose tokens the test chooses (``Machine``).
    config.projects.default.phases.stateful.generation.modes = [GenerationMode.POSITIVE]
    schema = schemathesis.openapi.from_asgi("/openapi.json", seeded.api, config=config)

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


#: The operation that revokes the caller's tokens (docs/api.md, "Replacing a token").
REPLACES_TOKENS = "/me/token"


def fresh_key(case: Any) -> dict[str, str]:
    """A generated ``Idempotency-Key`` is replaced by a new one, as a client makes a new key
    for each new request (docs/api.md, "Retrying safely"): hypothesis repeats its values, and
    a key repeated with another body is refused (422 ``idempotency_key_reused``), as it
    should be (tests/api/test_idempotency.py). An invalid one (negative generation) is kept."""
    generated = (case.headers or {}).get(HEADER)
    if not isinstance(generated, str) or not re.fullmatch(KEY_PATTERN, generated):
        return {}
    if not MIN_KEY <= len(generated) <= MAX_KEY:
        return {}
    return {HEADER: str(uuid4())}


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
        elif who != "nobody" and path == REPLACES_TOKENS:
            # Each example replaces the tokens of an account of its own: the seeded ones stay
            # good for every other operation (and the stateful phase) on this worker.
            token = seeded.shadow.register(f"fz-{uuid4().hex[:12]}")
            headers["Authorization"] = f"Bearer {token}"
        elif who != "nobody":
            headers["Authorization"] = f"Bearer {seeded.tokens[who]}"
        headers.update(fresh_key(case))
        case.call_and_validate(headers=headers)  # every check the configuration enables

    fuzz()


def test_the_stateful_phase_follows_the_links_without_a_failure(
    api_schema: Any, seeded: Seeded
) -> None:
    """Sequences of requests along the document's links (registration -> table -> seats ->
    start -> deal; table view -> deal), every check after every answer. A request a link
    gives no token gets one of the seeded players' (or none, or an unknown one), in turn."""
    assert any(
        "links" in answer
        for operations in api_schema.raw_schema["paths"].values()
        for operation in operations.values()
        for answer in operation.get("responses", {}).values()
    ), "the document declares links"
    seeded.stateful = True
    rotation = [None, "not-a-token", *(seeded.tokens[n] for n in [AUDITOR, *SEATED])]
    tokens = iter(rotation * 10**6)
    known = {f"Bearer {token}" for token in seeded.tokens.values()}  # and the registered ones
    # Streams never end; the host's privacy settings (spectators, a new invite code) lead to
    # no further link and only thin the walk. The first phase and
    # tests/api/test_private_tables.py cover them.
    # Nor `POST /me/token`: it would revoke the seeded players' tokens the walk goes on with
    # (the first phase sends it with accounts of its own; tests/api/test_token_*.py).
    base = api_schema.exclude(
        path_regex=r"/stream$|/spectators$|/invite$|^/me/token$"
    ).as_state_machine()

    steps: list[tuple[str, str, int] | None] = []  # method, path, status; None: a new scenario

    class Machine(base):  # type: ignore[misc, valid-type]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            """The token a link handed on (a registered player's, a seeded one) is kept; a
            generated one is replaced by the next of the rotation (an unknown one, the
            auditor's, the seated players'), or kept (a token the server does not know).
            Given as explicit headers, so that the checks know the token is meant
            (``ignored_auth`` then tries the request without it); the case itself is not
            changed (schemathesis would take a changed case for an invalid one)."""
            given = (case.headers or {}).get("Authorization")
            if given not in known:
                token = next(tokens)  # None: the generated header is sent as it is
                given = f"Bearer {token}" if token is not None else None
            headers = {"Authorization": given} if given else {}
            headers.update(fresh_key(case))
            return {"headers": headers} if headers else {}

        def validate_response(
            self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any
        ) -> None:
            case.validate_response(
                response,
                additional_checks=additional_checks,
                headers=kwargs.get("headers"),
                transport_kwargs=kwargs or None,
                recorder=self.recorder,
            )

        def after_call(self, response: Any, case: Any) -> None:
            super().after_call(response, case)
            if case.path == "/players" and response.status_code == 201:
                known.add(f"Bearer {response.json()['token']}")
            steps.append((case.method, case.path, response.status_code))

        def setup(self) -> None:
            steps.append(None)

    def run(examples: int, derandomize: bool) -> None:
        scenarios = 0
        while scenarios < examples:
            before = len(steps)
            try:
                Machine.run(
                    settings=settings(
                        max_examples=examples - scenarios,
                        stateful_step_count=STATEFUL_STEPS,
                        deadline=None,
                        suppress_health_check=list(HealthCheck),
                        database=None,
                        phases=[Phase.generate],  # no shrinking: see below
                        derandomize=derandomize,
                    )
                )
                break
            except FlakyFailure as flaky:  # a failure that did not happen again: a failure
                raise flaky.exceptions[0] from flaky
            except FlakyStrategyDefinition:
                # The store keeps what every scenario did, so a scenario Hypothesis replays
                # does not meet the server it met (a table started once is not started
                # again): the run goes on with new scenarios, as schemathesis' own runner does.
                scenarios += max(1, sum(1 for step in steps[before:] if step is None))

    def missing() -> list[str]:
        """What the walk has not reached yet, of what it must reach."""
        reached = {step for step in steps if step is not None}
        needed = [
            ("POST", "/players", 201),
            ("GET", "/me", 200),  # with the token of a registration (a link)
            ("POST", "/tables", 201),
            ("POST", "/tables/{table_id}/seats", 200),
        ]
        gaps = [str(operation) for operation in needed if operation not in reached]
        # A deal started: by the host's start, or by a practice table, which starts at once.
        started = {("POST", "/tables/{table_id}/start", 201), ("POST", "/tables/practice", 201)}
        if not started & reached:
            gaps.append("a game started")
        if not any(p.startswith("/deals/") and status == 200 for _m, p, status in reached):
            gaps.append("a deal read")
        commands = {status for _m, p, status in reached if p == "/deals/{deal_id}/commands"}
        if not commands & {400, 409}:
            gaps.append("a command that reached the rules")
        return gaps

    # The same scenarios first, on every run; then, while the walk has not reached a started
    # game and its commands (what it reaches depends on what the store already holds, and on
    # the document's operations: each new one thins the walk), fresh random ones, up to a cap.
    run(STATEFUL_EXAMPLES, derandomize=True)
    for _round in range(STATEFUL_MORE_ROUNDS):
        if not missing():
            break
        run(STATEFUL_EXAMPLES, derandomize=False)
    reached = {step for step in steps if step is not None}
    print(
        f"stateful phase: {steps.count(None)} scenarios, {len(steps) - steps.count(None)} requests"
    )
    shown = "\n".join(map(str, sorted(reached)))
    assert not missing(), f"not reached: {missing()}; reached:\n{shown}"
