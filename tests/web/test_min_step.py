"""The table page sends its player's last step with its reads of the deal (docs/api.md,
"Read-your-writes"): after a command, its next ``GET /deals/{id}`` carries
``X-Canasta-Min-Step`` at least the command's answered step, so that a server reading from a
replica never shows him a deal older than his own move (tests/api/test_read_replica.py shows
the server's side)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Request, expect

from app.replica import MIN_STEP_HEADER
from tests.web.conftest import NewContext
from tests.web.test_table import CUT, bob_on_a_new_deal, move, web_server

__all__ = ["web_server"]  # the stacked-deck server of the table page's tests

pytestmark = pytest.mark.slow


def test_the_table_page_reads_the_deal_at_least_at_its_players_last_step(
    new_context: NewContext, web_server: Any
) -> None:
    bob, deal = bob_on_a_new_deal(new_context, web_server)
    reads: list[Request] = []
    bob.on(
        "request",
        lambda request: (
            reads.append(request)
            if request.method == "GET" and request.url.endswith(f"/deals/{deal}")
            else None
        ),
    )
    bob.locator("#cut-n").fill(str(CUT))
    with bob.expect_response(lambda r: r.url.endswith(f"/deals/{deal}/commands")) as answered:
        move(bob, "cut").click()
    step = answered.value.json()["step"]
    expect(bob.locator("#hand [data-card]")).to_have_count(15)
    after = [r for r in reads if int(r.headers.get(MIN_STEP_HEADER.lower(), "0")) >= step]
    assert after, "a read of the deal after the command carries its step"
