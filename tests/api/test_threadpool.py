"""``CANASTA_THREADPOOL_SIZE`` sizes the threadpool that runs the blocking routes (anyio's
default would be 40 threads contending for the GIL with the event loop)."""

from __future__ import annotations

from collections.abc import Callable

import anyio.to_thread
import pytest
from fastapi.testclient import TestClient


async def threadpool_tokens() -> float:
    return anyio.to_thread.current_default_thread_limiter().total_tokens


@pytest.mark.parametrize("size", [None, 3])
def test_the_blocking_routes_get_the_configured_threadpool(
    make_client: Callable[..., TestClient], size: int | None
) -> None:
    client = make_client() if size is None else make_client(threadpool_size=size)
    assert client.portal is not None
    assert client.portal.call(threadpool_tokens) == (8 if size is None else size)
    assert client.get("/tables").status_code == 200  # a blocking route (the lobby) answers


def test_the_size_must_be_positive(make_client: Callable[..., TestClient]) -> None:
    with pytest.raises(ValueError, match="threadpool_size"):
        make_client(threadpool_size=0)
