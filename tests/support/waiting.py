"""Waiting in a test for something another thread or process brings about, timing a call, and
running work in threads at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
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


def all_at_once(work: Callable[[Any], object], items: Iterable[Any], timeout: float = 300) -> None:
    """``work(item)`` for each of ``items``, each in a thread of its own, all at once; waits up
    to ``timeout`` seconds for each, and fails if any of them raised."""
    errors: list[BaseException] = []

    def run(item: Any) -> None:
        try:
            work(item)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(item,)) for item in items]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not errors, errors
