"""Heartbeats a browser sees (docs/api.md, "Streams"): ``?heartbeat=event`` sends each
heartbeat of a live stream as an ``event: heartbeat`` message (an ``EventSource`` never shows
a comment to JavaScript, so a page could not tell a quiet stream from a dead connection), one
right after ``retry:`` and one after each ``stream_heartbeat_seconds`` of silence, without an
``id`` and with the interval as its data; without it a stream is exactly as before, comments
only. Over real HTTP (uvicorn), every message checked against the published OpenAPI
document."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

from tests.api.conftest import Server
from tests.support.http import open_table
from tests.support.openapi import Contract, sse_messages

HEARTBEAT = 0.5
ENV = {"CANASTA_STREAM_POLL_SECONDS": "0.05", "CANASTA_STREAM_HEARTBEAT_SECONDS": str(HEARTBEAT)}


def read_until_idle(url: str, params: dict[str, str], idle_beats: int = 2) -> str:
    """The stream's text up to its ``idle_beats``-th heartbeat (message or comment) after
    the first event message, then closed (a live deal's stream does not end by itself)."""
    lines: list[str] = []
    beats = 0
    seen_event = False
    deadline = time.monotonic() + 30
    with httpx.stream("GET", url, params=params, timeout=httpx.Timeout(10.0)) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            lines.append(line)
            seen_event = seen_event or (line.startswith("id:"))
            if seen_event and line in ("event: heartbeat", ": heartbeat"):
                beats += 1
            if beats >= idle_beats and line == "":
                break
            assert time.monotonic() < deadline, "the stream sent no heartbeat"
    return "\n".join(lines) + "\n"


def fields_of(text: str) -> list[dict[str, str]]:
    return [message.fields for message in sse_messages(text)]


def test_heartbeat_event_sends_heartbeats_a_browser_sees_and_the_default_stays_comments(
    uvicorn_server: Callable[..., Server],
) -> None:
    server = uvicorn_server(env=ENV)
    with httpx.Client(base_url=server.url, timeout=30) as http:
        game = open_table(http)
        contract = Contract(http.get("/openapi.json").json())
    assert game.deal is not None
    deal_path, table_path = f"/deals/{game.deal}/stream", f"/tables/{game.table}/stream"

    text = read_until_idle(server.url + deal_path, {"heartbeat": "event"})
    messages = fields_of(text)
    beat = {"event": "heartbeat", "data": f'{{"seconds": {HEARTBEAT}}}'}
    # retry: alone, then at once a heartbeat: the stream is open, and its interval.
    assert messages[0] == {"retry": "1000"}
    assert messages[1] == beat
    events = [m for m in messages[2:] if m.get("event") != "heartbeat"]
    assert events and all("id" in m for m in events)
    # While the deal waits for the cut, heartbeats: no id (Last-Event-ID stays the event's).
    assert messages[-1] == beat and messages[-2] == beat
    assert ": heartbeat" not in text.splitlines(), "no comments once heartbeats are messages"
    shown: list[Any] = contract.check_stream(deal_path, text)
    assert {"seconds": HEARTBEAT} in shown

    # The default: the same events, heartbeats as comments, no heartbeat message.
    plain = read_until_idle(server.url + deal_path, {})
    assert [m for m in fields_of(plain) if m.get("event") == "heartbeat"] == []
    assert ": heartbeat" in plain.splitlines()
    assert [m for m in fields_of(plain) if "id" in m] == events
    contract.check_stream(deal_path, plain)

    # The table's stream offers the same, and refuses an unknown kind of heartbeat.
    table = fields_of(read_until_idle(server.url + table_path, {"heartbeat": "event"}))
    assert table[:2] == [{"retry": "1000"}, beat] and table[-1] == beat
    refused = httpx.get(server.url + table_path, params={"heartbeat": "loud"}, timeout=10)
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "malformed"
