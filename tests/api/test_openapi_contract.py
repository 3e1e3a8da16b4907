"""What the OpenAPI document promises a client (app/openapi_contract.py), checked against the
server: the links between operations lead to operations that exist and take the parameters
the links fill, a link followed by hand works (registration -> table -> seat -> start ->
deal), an operation whose token is optional says so and answers a spectator, every other
operation that declares the token refuses a request without it, and an integer written
``4.0`` is the integer 4 (as JSON Schema reads ``integer``)."""

from __future__ import annotations

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
