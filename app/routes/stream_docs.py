"""How the OpenAPI document describes the live streams (``app.routes.stream``): a streaming
route has no response model of its own, so its 200 answer is written here as one
Server-Sent Events message, and the models of the messages' ``data`` are added to the
document's components."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from app.schemas_events import DealEventView, StreamEnd, StreamHeartbeat, TableEventView

_REF = "#/components/schemas/{model}"
#: The models a stream message's ``data`` follows (added to the document's components).
STREAM_MODELS: tuple[type[BaseModel], ...] = (
    DealEventView,
    TableEventView,
    StreamEnd,
    StreamHeartbeat,
)


def sse_response(data: type[BaseModel], what: str) -> dict[int | str, dict[str, Any]]:
    """The 200 answer of a stream in the OpenAPI document: ``text/event-stream``, whose
    schema describes ONE message (the stream is a sequence of them): ``event``, ``id`` and
    ``data``, a JSON text whose own schema is ``contentSchema`` (``data``'s model,
    ``StreamEnd`` for the last message, ``event: end``, or ``StreamHeartbeat`` for the
    ``event: heartbeat`` messages a client asks for with ``?heartbeat=event``)."""
    message = {
        "title": f"{data.__name__}Message",
        "type": "object",
        "description": f"One Server-Sent Events message of the stream ({what}). The stream "
        "first sends `retry:` (the reconnection delay, in ms) alone, then one message per "
        "event: `event:` its kind, `id:` its step, `data:` the event as JSON; `: heartbeat` "
        "comments while idle; and after the last event a message `event: end` without `id` "
        'whose data is {"step": N}, the final step; then it closes. With `?heartbeat=event` '
        "the heartbeats are messages a browser's EventSource shows, `event: heartbeat` "
        'without `id` whose data is {"seconds": S} (the heartbeat interval), one right '
        "after `retry:` and then one whenever the stream has been silent for S seconds.",
        "properties": {
            "event": {
                "type": "string",
                "description": "the event's kind, end, or heartbeat (?heartbeat=event)",
            },
            "id": {
                "type": "string",
                "pattern": "^[0-9]+$",
                "description": "the event's step: send it back as Last-Event-ID to resume",
            },
            "retry": {
                "type": "string",
                "pattern": "^[0-9]+$",
                "description": "the reconnection delay in ms (the first message, alone)",
            },
            "data": {
                "type": "string",
                "contentMediaType": "application/json",
                "contentSchema": {
                    "oneOf": [
                        {"$ref": _REF.format(model=data.__name__)},
                        {"$ref": _REF.format(model=StreamEnd.__name__)},
                        {"$ref": _REF.format(model=StreamHeartbeat.__name__)},
                    ]
                },
            },
        },
    }
    return {
        200: {
            "description": "Server-Sent Events (text/event-stream)",
            "content": {"text/event-stream": {"schema": message}},
        }
    }


def document_streams(api: FastAPI) -> None:
    """Put the models of the streams' messages into ``api``'s OpenAPI components, where
    ``sse_response`` refers to them (a streaming route has no response model of its own)."""
    generate = api.openapi

    def openapi() -> dict[str, Any]:
        if api.openapi_schema is not None:
            return api.openapi_schema
        doc = generate()
        _, defs = models_json_schema(
            [(model, "serialization") for model in STREAM_MODELS], ref_template=_REF
        )
        schemas = doc.setdefault("components", {}).setdefault("schemas", {})
        for name, schema in defs.get("$defs", {}).items():
            schemas.setdefault(name, schema)
        return doc

    api.openapi = openapi  # type: ignore[method-assign]
