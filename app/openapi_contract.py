"""What the OpenAPI document says beyond what FastAPI writes from the routes: the links
between operations, and which operations take the bearer token optionally.

- **Links** (OpenAPI 3 ``links``): the id a creating answer returns is the path parameter of
  the operations that use it: ``POST /players`` gives the token for ``GET /me`` and
  ``POST /tables``; ``POST /tables`` (and ``GET /tables/{id}``) the table's id for the
  table's operations; ``POST /tables/{id}/start`` and ``/deals`` (and the table view's
  ``current_deal``) the deal's id for the deal's operations. The caller's token is handed on
  (``$request.header.Authorization``). A client (or a conformance tool such as schemathesis'
  stateful phase) can follow them from a registration to a deal.
- **413**: every operation that takes a body documents the answer to a body above the limit
  (``app.limits``).
- **Idempotency-Key**: the header on the operations that take it, and ``Idempotent-Replayed``
  on their success answers (``app.idempotency``).
- **Operation ids**: the route's name (``send_command``, ``get_deal``, ``moves``), which a
  client generated from the document names its methods after (FastAPI's own ids add the
  path and method: ``send_command_deals__deal_id__commands_post``).
- **Optional tokens**: an operation that answers anonymous spectators as well as players
  (the deal view, its events, its replay, its stream) lists the empty requirement ``{}``
  beside the bearer token, so that a client knows the token is optional there.

Routes are not edited for it: ``install`` wraps ``FastAPI.openapi``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute

from app import idempotency
from app.deps import lenient_account, optional_account, required_account

AUTH = "$request.header.Authorization"
TOO_LARGE = "request body above CANASTA_MAX_BODY_BYTES (code: body_too_large)"
TABLE = "/tables/{table_id}"
DEAL = "/deals/{deal_id}"

#: The operations that take a table's id, and those that take a deal's id.
TABLE_OPERATIONS = [
    ("get", TABLE),
    ("post", TABLE + "/seats"),
    ("put", TABLE + "/teams"),
    ("post", TABLE + "/start"),
    ("post", TABLE + "/deals"),
    ("post", TABLE + "/stop"),
    ("get", TABLE + "/scores"),
    ("get", "/audit" + TABLE),
]
DEAL_OPERATIONS = [
    ("get", DEAL),
    ("post", DEAL + "/commands"),
    ("post", DEAL + "/commands/check"),
    ("get", DEAL + "/moves"),
    ("get", DEAL + "/events"),
    ("get", DEAL + "/replay"),
    ("get", DEAL + "/discard-log"),
    ("get", DEAL + "/draw-log"),
    ("get", "/audit" + DEAL),
    ("get", "/audit" + DEAL + "/replay"),
]


def _ref(method: str, path: str) -> str:
    return "#/paths/" + path.replace("~", "~0").replace("/", "~1") + "/" + method


def _target(ref: str) -> tuple[str, str]:
    """``#/paths/~1tables~1{table_id}/get`` -> (``/tables/{table_id}``, ``get``)."""
    pointer, method = ref.removeprefix("#/paths/").rsplit("/", 1)
    return pointer.replace("~1", "/").replace("~0", "~"), method


def _name(method: str, path: str) -> str:
    """``POST /tables/{table_id}/seats`` -> ``PostTablesSeats``."""
    words = [w for w in path.strip("/").split("/") if not w.startswith("{")]
    return "".join(w.title().replace("-", "").replace("_", "") for w in [method, *words])


def _to(targets: list[tuple[str, str]], parameter: str, source: str) -> dict[str, Any]:
    return {
        _name(method, path): {
            "operationRef": _ref(method, path),
            "parameters": {parameter: source, "header.Authorization": AUTH},
        }
        for method, path in targets
    }


def links() -> dict[tuple[str, str, str], dict[str, Any]]:
    """(method, path, status) -> the links of that answer."""
    token = "Bearer {$response.body#/token}"
    return {
        ("post", "/players", "201"): {
            "GetMe": {
                "operationRef": _ref("get", "/me"),
                "parameters": {"header.Authorization": token},
            },
            "CreateTable": {
                "operationRef": _ref("post", "/tables"),
                "parameters": {"header.Authorization": token},
            },
        },
        ("post", "/tables", "201"): _to(TABLE_OPERATIONS, "path.table_id", "$response.body#/id"),
        ("get", TABLE, "200"): {
            **_to(TABLE_OPERATIONS[1:], "path.table_id", "$response.body#/id"),
            **_to(DEAL_OPERATIONS, "path.deal_id", "$response.body#/current_deal"),
        },
        ("post", TABLE + "/seats", "200"): _to(
            [("post", TABLE + "/start"), ("get", TABLE)], "path.table_id", "$request.path.table_id"
        ),
        ("post", TABLE + "/start", "201"): _to(
            DEAL_OPERATIONS, "path.deal_id", "$response.body#/deal"
        ),
        ("post", TABLE + "/deals", "201"): _to(
            DEAL_OPERATIONS, "path.deal_id", "$response.body#/deal"
        ),
        ("post", DEAL + "/commands", "200"): _to(
            [(m, p) for m, p in DEAL_OPERATIONS if p != DEAL + "/commands"],
            "path.deal_id",
            "$request.path.deal_id",
        ),
    }


def operation_id(route: APIRoute) -> str:
    """An operation's ``operationId``: its route's name (unique: a test checks it)."""
    return route.name


def api_routes(routes: list[Any]) -> Iterator[APIRoute]:
    """Every ``APIRoute`` of the application, included routers' too."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from api_routes(included.routes)


def _calls(dependant: Any) -> Iterator[Any]:
    for dependency in dependant.dependencies:
        yield dependency.call
        yield from _calls(dependency)


def optional_token_operations(api: FastAPI) -> set[tuple[str, str]]:
    """(method, path) of the operations that accept a token but do not require one."""
    found = set()
    for route in api_routes(api.router.routes):
        calls = set(_calls(route.dependant))
        optional = optional_account in calls or lenient_account in calls
        if optional and required_account not in calls:
            found |= {(method.lower(), route.path) for method in route.methods or ()}
    return found


def install(api: FastAPI) -> None:
    build = api.openapi

    def openapi() -> dict[str, Any]:
        if api.openapi_schema is not None:
            return api.openapi_schema
        document = build()
        paths = document["paths"]
        optional = optional_token_operations(api)
        for (method, path, status), answer_links in links().items():
            source = paths[path][method]
            for link in answer_links.values():
                # the token is handed on from a request that carries one (it is required
                # there) to one that takes it
                target_path, target_method = _target(link["operationRef"])
                if (
                    not source.get("security")
                    or (method, path) in optional
                    or not paths[target_path][target_method].get("security")
                ):
                    link["parameters"].pop("header.Authorization", None)
            answer = source["responses"][status]
            answer["links"] = {**answer.get("links", {}), **answer_links}
        for operations in paths.values():  # app.limits: a body above the limit, on every route
            for operation in operations.values():
                if "requestBody" in operation and "422" in operation["responses"]:
                    operation["responses"].setdefault(
                        "413", {**operation["responses"]["422"], "description": TOO_LARGE}
                    )
        for method, path in optional:
            operation = paths.get(path, {}).get(method)
            if (
                operation is not None
                and operation.get("security")
                and {} not in operation["security"]
            ):
                operation["security"] = [*operation["security"], {}]
        idempotency.document(paths)  # the Idempotency-Key header
        api.openapi_schema = document
        return document

    api.openapi = openapi  # type: ignore[method-assign]
