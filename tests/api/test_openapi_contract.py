"""What the OpenAPI document promises a client (app/openapi_contract.py), checked against the
server: the links between operations lead to operations that exist and take the parameters
the links fill, a link followed by hand works (registration -> table -> seat -> start ->
deal), an operation whose token is optional says so and answers a spectator, every other
operation that declares the token refuses a request without it, and an integer written
``4.0`` is the integer 4 (as JSON Schema reads ``integer``)."""

from __future__ import annotations

import re
from http import HTTPStatus
from typing import Any

from fastapi.testclient import TestClient


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    ]


def _resolve(document: dict[str, Any], ref: str) -> dict[str, Any]:
    pointer, method = ref.removeprefix("#/paths/").rsplit("/", 1)
    operation: dict[str, Any] = document["paths"][pointer.replace("~1", "/")][method]
    return operation


def test_every_link_leads_to_an_operation_that_takes_its_parameters(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    seen = 0
    for method, path, operation in _operations(document):
        for status, answer in operation["responses"].items():
            for name, link in answer.get("links", {}).items():
                seen += 1
                target = _resolve(document, link["operationRef"])
                names = {p["name"] for p in target.get("parameters", [])}
                for parameter, expression in link["parameters"].items():
                    where = f"{method.upper()} {path} {status} -> {name}: {parameter}"
                    assert expression.startswith(("$request.", "$response.", "Bearer {$")), where
                    location, _, field = parameter.partition(".")
                    if location == "path":
                        assert field in names, where
                    else:
                        assert (location, field) == ("header", "Authorization"), where
                        assert target.get("security"), where
    assert seen >= 30


def test_following_the_links_by_hand_reaches_a_deal(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    links = document["paths"]["/players"]["post"]["responses"]["201"]["links"]
    assert "CreateTable" in links
    tokens = [client.post("/players", json={"name": n}).json()["token"] for n in ["ann", "bob"]]
    ann, bob = ({"Authorization": f"Bearer {t}"} for t in tokens)
    table = client.post("/tables", json={"players": 2}, headers=ann).json()["id"]
    start_link = document["paths"]["/tables"]["post"]["responses"]["201"]["links"]
    assert start_link["PostTablesStart"]["parameters"]["path.table_id"] == "$response.body#/id"
    for headers in (ann, bob):
        assert client.post(f"/tables/{table}/seats", json={}, headers=headers).status_code == 200
    deal = client.post(f"/tables/{table}/start", headers=ann).json()["deal"]
    deal_links = document["paths"]["/tables/{table_id}/start"]["post"]["responses"]["201"]["links"]
    assert deal_links["GetDeals"]["parameters"]["path.deal_id"] == "$response.body#/deal"
    assert client.get(f"/deals/{deal}", headers=ann).status_code == 200
    view = client.get(f"/tables/{table}").json()
    assert view["current_deal"] == deal  # the table view's link to its deal


def test_optional_tokens_are_declared_and_required_ones_are_enforced(
    client: TestClient, open_game: Any
) -> None:
    game = open_game(client, names=["ann", "bob"])
    document = client.get("/openapi.json").json()
    optional = set()
    for method, path, operation in _operations(document):
        security = operation.get("security")
        if not security or path.endswith("/stream"):
            continue
        url = path.replace("{table_id}", game.table).replace("{deal_id}", game.deal_id)
        query = {"step": 1} if path.endswith("/replay") else {}
        answer = client.request(method.upper(), url, json={}, params=query)
        if {} in security:
            optional.add(path)
            assert answer.status_code == 200, (method, path, answer.text)
        else:
            assert answer.status_code == 401, (method, path, answer.text)
            assert answer.json()["error"]["code"] == "R-CMD-2"
    assert optional == {
        "/deals/{deal_id}",
        "/deals/{deal_id}/events",
        "/deals/{deal_id}/replay",
        "/tables/{table_id}",  # your_last_seq with a token
        # a table without spectators shows these to its players only (docs/tables.md)
        "/deals/{deal_id}/discard-log",
        "/tables/{table_id}/scores",
        "/sessions/current",  # who is signed in: nobody, for a visitor
    }


def test_an_integer_written_with_a_zero_fraction_is_that_integer(
    client: TestClient, register: Any
) -> None:
    ann = register(client, "ann")
    table = client.post("/tables", json={"players": 2.0}, headers=ann)
    assert table.status_code == 201, table.text
    view = client.get(f"/tables/{table.json()['id']}").json()
    assert view["players"] == 2
    assert client.post(f"/tables/{view['id']}/seats", json={"seat": 1.0}, headers=ann).json() == {
        "seat": 1
    }
    for not_an_integer in (1.5, True, "1"):
        answer = client.post("/tables", json={"players": not_an_integer}, headers=ann)
        assert answer.status_code == 422, not_an_integer


def test_every_operation_with_a_body_documents_the_size_limit(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    with_a_body = [(m, p, o) for m, p, o in _operations(document) if "requestBody" in o]
    assert with_a_body
    for method, path, operation in with_a_body:
        assert "413" in operation["responses"], (method, path)
        big = {"name": "x" * 20_000}
        answer = client.request(method.upper(), path, json=big)
        assert answer.status_code == 413, (method, path)
        assert answer.json()["error"]["code"] == "body_too_large"


def test_only_a_deal_s_events_declare_a_deadline(client: TestClient) -> None:
    """A turn clock's ``deadline`` rides on a deal's events (its stream, ``/events``); a
    table's stream and the audit's records never carry one, and their schemas do not offer it."""
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    table_stream = schemas["TableEventView"]["oneOf"]
    assert len(table_stream) >= 10
    for ref in table_stream:
        name = ref["$ref"].rsplit("/", 1)[1]
        assert "deadline" not in schemas[name]["properties"], name
    records = [name for name in schemas if name.endswith("Record")]
    assert "StartedRecord" in records
    for name in records:
        assert "deadline" not in schemas[name].get("properties", {}), name
    for name in ("CardDiscardedView", "StartedView", "TurnTimedOutView"):
        assert "deadline" in schemas[name]["properties"], name


def test_every_operation_says_what_it_does(client: TestClient) -> None:
    """/docs shows each operation's description: none is left with its summary alone (a
    reader of ``POST /tables/{id}/start`` learns there that the body may be left out)."""
    document = client.get("/openapi.json").json()
    bare = [f"{m.upper()} {p}" for m, p, op in _operations(document) if not op.get("description")]
    assert bare == []


def _errors(operation: dict[str, Any]) -> dict[str, str]:
    """status -> description of an operation's error answers."""
    return {
        status: answer.get("description", "")
        for status, answer in operation["responses"].items()
        if status[0] in "45"
    }


def test_every_error_answer_names_what_it_means(client: TestClient) -> None:
    """A client generated from the document reads each error answer's description: none is
    a bare HTTP reason phrase ("Conflict" told the writer of a bot nothing about the 409s of
    ``POST /deals/{id}/commands``), and the command's answers name their codes."""
    document = client.get("/openapi.json").json()
    bare = [
        f"{method.upper()} {path} {status}: {description!r}"
        for method, path, operation in _operations(document)
        for status, description in _errors(operation).items()
        if description.strip().lower() in {"", HTTPStatus(int(status)).phrase.lower()}
    ]
    assert bare == []
    command = _errors(document["paths"]["/deals/{deal_id}/commands"]["post"])
    for code in ("R-CMD-1", "seq_too_far", "race_lost", "turn_timed_out", "clock_not_due"):
        assert code in command["409"], code
    for code in ("R-CMD-2", "seat_not_yours", "timeout_not_allowed"):
        assert code in command["403"], code
    check = _errors(document["paths"]["/deals/{deal_id}/commands/check"]["post"])
    assert "R-CMD-2" in check["403"] and "not_found" in check["404"]


def test_only_the_operations_that_take_an_idempotency_key_name_its_refusals(
    client: TestClient, register: Any
) -> None:
    """``idempotency_key_reused`` (422) and ``idempotency_key_in_progress`` (409) are answers
    of the operations that take the header, and of no other: the command route, which ignores
    it (its sequence numbers do the same), does not list them."""
    document = client.get("/openapi.json").json()
    for method, path, operation in _operations(document):
        takes = any(p["name"] == "Idempotency-Key" for p in operation.get("parameters", []))
        errors = _errors(operation)
        where = f"{method.upper()} {path}"
        assert ("idempotency_key_reused" in errors.get("422", "")) == takes, where
        assert ("idempotency_key_in_progress" in errors.get("409", "")) == takes, where
    # and so the server does: a key reused with another body is refused where it is taken ...
    ann = register(client, "ann")
    key = {**ann, "Idempotency-Key": "7d0f3c1e-5a2b-4c6d-8e9f-0a1b2c3d4e5f"}
    assert client.post("/tables", json={"players": 2}, headers=key).status_code == 201
    reused = client.post("/tables", json={"players": 3}, headers=key)
    assert (reused.status_code, reused.json()["error"]["code"]) == (422, "idempotency_key_reused")
    # ... and ignored where it is not: the same key on the lobby twice, two answers
    assert client.get("/tables", headers=key).status_code == 200
    assert client.get("/tables", params={"status": "playing"}, headers=key).status_code == 200


def test_every_json_answer_is_a_named_schema(client: TestClient) -> None:
    """A client generated from the document gets a type with a name for every JSON answer:
    the schema is a component (or a list of components), never an inline union that a
    generator must name after the route (the dry run's answer was "Response Check Command
    Deals  Deal Id  Commands Check Post")."""
    document = client.get("/openapi.json").json()
    inline = []
    for method, path, operation in _operations(document):
        for status, answer in operation["responses"].items():
            schema = answer.get("content", {}).get("application/json", {}).get("schema")
            if schema is None:
                continue
            if schema.get("type") == "array":
                schema = schema["items"]
            members = schema.get("oneOf", [schema])
            if not all("$ref" in member for member in members):
                inline.append(f"{method.upper()} {path} {status}")
    assert inline == []
    check = document["paths"]["/deals/{deal_id}/commands/check"]["post"]["responses"]["200"]
    assert check["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/CheckOut"
    }


def test_the_document_names_every_bot_level_the_server_takes(
    client: TestClient, register: Any
) -> None:
    """The ``bot`` of a practice table and of a seat: the document named "random, basic",
    while the server takes ``strong`` too (and names all three in its refusal)."""
    ann = register(client, "ann")
    refused = client.post("/tables/practice", json={"bot": "genius"}, headers=ann).json()
    levels = refused["error"]["params"]["levels"]
    assert "strong" in levels
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    said = [
        schemas["PracticeIn"]["properties"]["bot"]["description"],
        *(
            s["description"]
            for s in schemas["JoinIn"]["properties"]["bot"]["anyOf"]
            if "type" in s and s["type"] == "string"
        ),
    ]
    for description in said:
        assert description == "a bot level: " + ", ".join(levels), description
    for level in levels:  # and each is taken
        practice = client.post("/tables/practice", json={"players": 2, "bot": level}, headers=ann)
        assert practice.status_code == 201, (level, practice.text)


def test_every_operation_id_is_the_operation_s_name(client: TestClient) -> None:
    """A client generated from the document names its methods after the operation ids:
    ``send_command``, not FastAPI's ``send_command_deals__deal_id__commands_post``."""
    document = client.get("/openapi.json").json()
    ids = {(m, p): op["operationId"] for m, p, op in _operations(document)}
    assert len(set(ids.values())) == len(ids), "operation ids must be unique"
    for (method, path), operation_id in ids.items():
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", operation_id), (method, path, operation_id)
        assert not operation_id.endswith(f"_{method}"), (method, path, operation_id)
    assert ids["post", "/deals/{deal_id}/commands"] == "send_command"
    assert ids["post", "/deals/{deal_id}/commands/check"] == "check_command"
    assert ids["get", "/deals/{deal_id}/moves"] == "moves"
    assert ids["get", "/audit/deals/{deal_id}"] == "audit_deal"


def _shape(schema: Any) -> Any:
    """A schema without its words (titles, descriptions, defaults) and with ``null`` taken
    out of its unions: what a generated type is made of."""
    if isinstance(schema, list):
        return [_shape(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    words = {"title", "description", "default"}
    out = {k: _shape(v) for k, v in schema.items() if k not in words}
    members = [m for m in out.get("anyOf", []) if m != {"type": "null"}]
    if "anyOf" in out and len(members) == 1:
        return members[0]
    if "propertyNames" in out and out["propertyNames"] == {}:
        del out["propertyNames"]
    return out


def test_a_field_has_one_type_wherever_an_answer_shows_it(client: TestClient) -> None:
    """A generated client gets one type per field: the lobby's row said ``entry`` was any
    string, ``winners`` any strings and ``sides``/``totals`` maps of any keys where the table's
    view says an entry, sides A to C; the move menu's ``phase`` any string where the deal's
    view has the phases, its ``seat`` any integer."""
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    lobby, table = schemas["LobbyTable"]["properties"], schemas["TableView"]["properties"]
    for name in ("entry", "players", "options", "target", "host", "seats", "bots", "status"):
        assert _shape(lobby[name]) == _shape(table[name]), name
    for name in ("sides", "totals", "winners", "current_deal", "version"):
        assert _shape(lobby[name]) == _shape(table[name]), name
    menu, deal = schemas["MovesOut"]["properties"], schemas["DealView"]["properties"]
    assert _shape(menu["phase"]) == _shape(deal["phase"])
    assert _shape(menu["seat"]) == _shape(deal["seat"])


def test_the_document_says_what_each_entry_takes(client: TestClient, register: Any) -> None:
    """A client setting a table up learned from the document only that ``players`` is 2 to 6
    and ``target`` 1 to a million; the server refused ``classic`` to 50 ("classic plays to
    5000; no other target") and a four-player ``extra_six``. The entry's description now
    says each entry's player counts, targets and options, and the server takes exactly those."""
    table_in = client.get("/openapi.json").json()["components"]["schemas"]["TableIn"]
    said = table_in["properties"]["entry"]["description"]
    for words in (
        "classic: 2 to 6 players, plays to 5000, options: always_frozen",
        "extra_six: 6 players, plays to 10000",
        "modern_american: 4 players, plays to 8500 (or 2500, 5000, 7500, 10000: target)",
        "ponytail: 4 players, plays to 50000",
        "PUT /tables/{id}/teams",
    ):
        assert words in said, words
    for name in ("players", "target", "options"):
        assert "see entry" in table_in["properties"][name]["description"], name
    ann = register(client, "ann")
    taken = [
        {"entry": "classic", "players": 3, "target": 5000, "options": {"always_frozen": True}},
        {"entry": "extra_six", "players": 6, "target": 10000},
        *({"entry": "modern_american", "players": 4, "target": t} for t in (2500, 8500, 10000)),
        {"entry": "ponytail", "players": 4, "target": 50000},
    ]
    for body in taken:
        assert client.post("/tables", json=body, headers=ann).status_code == 201, body
    refused = [
        {"entry": "classic", "players": 2, "target": 50},
        {"entry": "extra_six", "players": 4},
        {"entry": "modern_american", "players": 4, "target": 6000},
        {"entry": "modern_american", "players": 4, "options": {"always_frozen": True}},
    ]
    for body in refused:
        answer = client.post("/tables", json=body, headers=ann)
        assert answer.status_code == 400, body
        assert answer.json()["error"]["code"] in ("R-SEAT-1", "R-SEAT-3"), body
