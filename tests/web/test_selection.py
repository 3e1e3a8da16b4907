"""A card selected while a command is on its way stays selected (docs/web.md): the live log
can show a player's move before his own answer comes back; he selects his next card then, and
the answer's arrival must not drop it (it used to: CI once timed out on a discard button that
stayed disabled). The command's answer is held here, after the server has recorded it, until
the card is selected."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Route, expect

from tests.web.conftest import NewContext
from tests.web.test_table import CUT, bob_on_a_new_deal, card, move, web_server

__all__ = ["web_server"]  # the stacked-deck server of the table page's tests

pytestmark = pytest.mark.slow


def test_a_card_selected_before_the_answer_comes_stays_selected(
    new_context: NewContext, web_server: Any
) -> None:
    bob, deal = bob_on_a_new_deal(new_context, web_server)
    bob.locator("#cut-n").fill(str(CUT))
    move(bob, "cut").click()
    expect(bob.locator("#hand [data-card]")).to_have_count(15)
    move(bob, "draw").click()
    expect(bob.locator("#hand [data-card]")).to_have_count(17)

    held: list[tuple[Route, Any]] = []

    def hold_the_answer(route: Route) -> None:
        held.append((route, route.fetch()))  # the server records the meld; the page waits

    commands = f"**/deals/{deal}/commands"
    bob.route(commands, hold_the_answer)
    for code in ("AS/1", "AH/1", "AD/1"):
        card(bob, code).click()
    move(bob, "meld").click()
    # The live log shows the meld while its answer is held; bob selects his discard.
    expect(bob.locator('[data-meld="A"][data-side="B"]')).to_have_count(1)
    card(bob, "4C/1").click()
    expect(card(bob, "4C/1")).to_have_attribute("aria-pressed", "true")
    assert len(held) == 1
    route, response = held.pop()
    route.fulfill(response=response)
    bob.unroute(commands)

    expect(move(bob, "discard")).to_be_enabled()  # the answer came: 4C is still selected
    expect(card(bob, "4C/1")).to_have_attribute("aria-pressed", "true")
    move(bob, "discard").click()
    expect(bob.locator(".pile")).to_contain_text("4")
    expect(card(bob, "4C/1")).to_have_count(0)
