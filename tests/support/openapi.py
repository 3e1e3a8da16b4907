"""Answers checked against the OpenAPI document a server serves (``GET /openapi.json``).

``Contract(doc)`` finds the operation of a request (method and path matched against the
document's path templates) and validates a response's JSON body against the schema the
document declares for its status code, with the document's own components (JSON Schema
2020-12, ``jsonschema_rs``): what is checked is the published document itself, not the
server's models. ``Contract.check_stream`` does the same for the messages of a
``text/event-stream`` answer (the message schema, then its ``data`` against the
``contentSchema``). ``CheckedClient`` wraps any httpx-like client (``TestClient``,
``httpx.Client``) so that every answer it receives is checked.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import jsonschema_rs


@dataclass
class SseMessage:
    """One message of a text/event-stream body, its fields as sent (``data`` as text)."""

    fields: dict[str, str]

    @property
    def event(self) -> str | None:
        return self.fields.get("event")

    @property
    def data(self) -> Any:
        return json.loads(self.fields["data"])


def sse_messages(text: str) -> Iterator[SseMessage]:
    """The messages of a complete text/event-stream body; comments (``: heartbeat``) left out."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if line == "":
            if fields:
                yield SseMessage(fields)
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            fields[name] = f"{fields[name]}\n{value}" if name in fields else value
    if fields:
        yield SseMessage(fields)


def _template(path: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$")


@dataclass
class Contract:
    doc: dict[str, Any]
    checked: Counter[tuple[str, str]] = field(default_factory=Counter)  # (METHOD, template)
    _paths: list[tuple[re.Pattern[str], str]] = field(default_factory=list)
    _validators: dict[str, jsonschema_rs.Validator] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._paths = [(_template(path), path) for path in self.doc["paths"]]

    def validator(self, schema: dict[str, Any]) -> jsonschema_rs.Validator:
        """A validator of ``schema`` whose ``#/components/...`` references resolve in the
        document."""
        key = json.dumps(schema, sort_keys=True)
        if key not in self._validators:
            root = {**schema, "components": self.doc.get("components", {})}
            self._validators[key] = jsonschema_rs.Draft202012Validator(root)
        return self._validators[key]

    def operation(self, method: str, path: str) -> tuple[str, dict[str, Any]]:
        """(path template, operation) of a request; fails if the document has none."""
        for pattern, template in self._paths:
            if pattern.match(path):
                operations = self.doc["paths"][template]
                if method.lower() in operations:
                    return template, operations[method.lower()]
        raise AssertionError(f"{method} {path} is not in the OpenAPI document")

    def response_schema(
        self, method: str, path: str, status: int, media_type: str = "application/json"
    ) -> tuple[str, dict[str, Any]]:
        template, operation = self.operation(method, path)
        responses = operation["responses"]
        declared = responses.get(str(status)) or responses.get("default")
        assert declared is not None, f"{method} {template}: status {status} is not documented"
        content = declared.get("content", {})
        assert media_type in content, f"{method} {template} {status}: no {media_type} content"
        schema = content[media_type].get("schema")
        assert schema, f"{method} {template} {status}: no schema for {media_type}"
        return template, schema

    def check(self, response: httpx.Response) -> None:
        """The response's body is valid against its operation's schema for its status."""
        request = response.request
        media_type = response.headers.get("content-type", "").split(";")[0]
        if request.method == "HEAD" or media_type == "text/event-stream":
            return  # no body; streams are checked message by message (check_stream)
        template, schema = self.response_schema(
            request.method, request.url.path, response.status_code
        )
        body = response.json()
        errors = [str(e) for e in self.validator(schema).iter_errors(body)][:3]
        assert not errors, f"{request.method} {request.url.path}: {errors}\n{body}"
        self.checked[(request.method, template)] += 1

    def check_stream(self, path: str, text: str) -> list[Any]:
        """Every message of a stream's body is valid against the stream's message schema,
        and its ``data`` against the ``contentSchema``; returns the data of every message."""
        template, schema = self.response_schema("GET", path, 200, "text/event-stream")
        data_schema = schema["properties"]["data"]["contentSchema"]
        shown = []
        for message in sse_messages(text):
            errors = [str(e) for e in self.validator(schema).iter_errors(message.fields)]
            assert not errors, f"{path}: {errors}\n{message.fields}"
            if "data" not in message.fields:
                assert set(message.fields) == {"retry"}, message.fields
                continue
            data = message.data
            errors = [str(e) for e in self.validator(data_schema).iter_errors(data)][:3]
            assert not errors, f"{path}: {errors}\n{data}"
            shown.append(data)
        self.checked[("GET", template)] += 1
        return shown


class CheckedClient:
    """An httpx-like client whose every answer is checked against the ``Contract``."""

    def __init__(self, http: Any, contract: Contract) -> None:
        self.http = http
        self.contract = contract

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        response: httpx.Response = self.http.request(method, url, **kwargs)
        self.contract.check(response)
        return response

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", url, **kwargs)

    def put(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("PUT", url, **kwargs)

    def delete(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", url, **kwargs)

    def stream_data(self, url: str, **kwargs: Any) -> list[Any]:
        """A stream read to its end (a finished deal's or game's), every message checked;
        returns the data of its messages."""
        response = self.http.get(url, **kwargs)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("text/event-stream")
        return self.contract.check_stream(response.request.url.path, response.text)


def untyped(doc: dict[str, Any], schema: dict[str, Any], seen: Iterable[str] = ()) -> list[str]:
    """Where ``schema`` (of ``doc``) admits an object whose fields it does not declare: a
    schema without a type, or an object without properties (maps with typed values are
    typed), at any depth: in its properties, items and maps too (a dry run's ``events`` once
    were objects of any shape, under an answer typed at its top level). Empty if the schema
    is typed throughout."""
    ref = schema.get("$ref")
    if ref is not None:
        if ref in seen:
            return []
        name = ref.rsplit("/", 1)[-1]
        return untyped(doc, doc["components"]["schemas"][name], [*seen, ref])
    for union in ("oneOf", "anyOf", "allOf"):
        if union in schema:
            return [p for member in schema[union] for p in untyped(doc, member, seen)]
    kind = schema.get("type")
    title = schema.get("title", "")
    if kind == "array":
        if "prefixItems" in schema:  # a tuple: [seat, card]
            return [p for item in schema["prefixItems"] for p in untyped(doc, item, seen)]
        return [f"{title}[]: {p}" for p in untyped(doc, schema.get("items", {}), seen)]
    if kind == "object":
        values = schema.get("additionalProperties")
        inner = [
            *schema.get("properties", {}).items(),
            *schema.get("patternProperties", {}).items(),
            *([("{}", values)] if isinstance(values, dict) and values else []),
        ]
        if not inner:
            return [title or "an object without properties"]
        return [f"{title}.{name}: {p}" for name, value in inner for p in untyped(doc, value, seen)]
    if kind is None and "const" not in schema and "enum" not in schema:
        return [title or "a schema without a type"]
    return []
