"""Request bodies above ``CANASTA_MAX_BODY_BYTES`` (16 KiB by default) get 413
``body_too_large`` before they are parsed, declared or chunked, and change nothing; a normal
command still works. Real HTTP through uvicorn."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx

from tests.support.http import open_table

BIG = 20 * 1024


def _padded(body: dict[str, Any]) -> bytes:
    """``body`` with a key that makes it BIG bytes of valid JSON."""
    return json.dumps({**body, "padding": "x" * BIG}).encode()


def _chunks(data: bytes) -> Iterator[bytes]:
    for start in range(0, len(data), 1024):
        yield data[start : start + 1024]


def _too_large(response: httpx.Response) -> None:
    assert response.status_code == 413, response.text
    assert response.json()["error"]["code"] == "body_too_large"
    assert response.json()["error"]["key"] == "limits.body_too_large"
    assert response.json()["error"]["params"]["max_bytes"] > 0


def test_a_body_above_the_limit_is_413_and_changes_nothing(uvicorn_server: Any) -> None:
    server = uvicorn_server()
    with httpx.Client(base_url=server.url, timeout=30) as http:
        game = open_table(http)
        view = http.get(f"/deals/{game.deal_id}").json()
        cutter = game.names[view["cutter"]]
        command = {
            "seq": 1,
            "expect": {
                "game": game.table,
                "deal": view["number"],
                "step": view["step"],
                "turn": view["turn"],
                "phase": view["phase"],
            },
            "command": {"type": "cut", "n": 10},
        }
        url = f"/deals/{game.deal_id}/commands"
        headers = {**game.headers[cutter], "content-type": "application/json"}
        _too_large(http.post(url, content=_padded(command), headers=headers))
        _too_large(http.post(url, content=_chunks(_padded(command)), headers=headers))
        big_name = {"content-type": "application/json"}
        _too_large(http.post("/players", content=_padded({"name": "zed"}), headers=big_name))
        _too_large(
            http.post("/players", content=_chunks(_padded({"name": "zed"})), headers=big_name)
        )
        assert http.get(f"/deals/{game.deal_id}").json()["step"] == view["step"]
        assert http.post("/players", json={"name": "zed"}).status_code == 201  # not taken
        answer = http.post(url, json=command, headers=game.headers[cutter])
        assert answer.status_code == 200, answer.text  # seq 1 still free: nothing was recorded
