"""Waiting in a test for something another thread or process brings about, and timing it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(condition: Callable[[], Any], timeout: float = 10.0, what: str = "") -> Any:
    """Poll ``condition`` until it is true, and return what it returned then; fail after
    ``timeout`` seconds with ``what`` in the message (a liveness bound, not a timed assertion)."""
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        assert time.monotonic() < deadline, f"timed out after {timeout}s: {what}".rstrip(": ")
        time.sleep(0.02)
    return result


def timed(call: Callable[[], Any]) -> tuple[Any, float]:
    """What ``call()`` returned, and the seconds it took."""
    began = time.monotonic()
    result = call()
    return result, time.monotonic() - began
