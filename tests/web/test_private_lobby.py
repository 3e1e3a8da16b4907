"""A private table in the lobby, in a real browser (docs/web.md, docs/tables.md): the host
creates it, gets its invitation link once, and finds it under "Your private tables" (the
lobby's lists never show it); a second player opens the link, signs up and joins with it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Backend
from tests.web.conftest import NewContext
from tests.web.test_lobby import LIVE_MS, open_lobby, sign_up

pytestmark = pytest.mark.slow


def test_a_private_table_is_joined_through_its_invitation_link(
    new_context: NewContext, web_server: Backend
) -> None:
    ann, _ = open_lobby(new_context())
    sign_up(ann, "ann")
    ann.get_by_label("Players").select_option("2")
    ann.get_by_label("Private table: by invitation only").check()
    ann.get_by_role("button", name="Create the table").click()
    box = ann.get_by_role("region", name="Your invitation link")
    expect(box).to_be_visible()
    link = ann.get_by_label("Invitation link", exact=True).input_value()
    assert "/?invite=" in link
    ann.get_by_role("button", name="Done").click()
    expect(box).to_be_hidden()
    assert ann.get_by_label("Invitation link", exact=True).input_value() == ""

    mine = ann.locator("#private-tables").get_by_role(
        "article", name="Classic table of 2, host ann"
    )
    expect(mine).to_contain_text("private", timeout=LIVE_MS)
    mine.get_by_role("button", name="Take a seat").click()
    expect(mine).to_contain_text("Seat 1: ann (you)", timeout=LIVE_MS)
    expect(ann.locator("#open-tables [data-table]")).to_have_count(0)

    bob = new_context().new_page()
    bob.goto(link)
    expect(bob.locator("body[data-ready=true]")).to_be_attached()
    sign_up(bob, "bob")
    field = bob.get_by_label("Invitation link you received")
    expect(field).to_have_value(link.split("invite=")[1].replace("%3A", ":"))
    bob.get_by_role("button", name="Join", exact=True).click()
    expect(bob.get_by_role("status")).to_have_text("You sit in seat 2.")
    bobs = bob.locator("#private-tables").get_by_role(
        "article", name="Classic table of 2, host ann"
    )
    expect(bobs).to_contain_text("Seat 2: bob (you)", timeout=LIVE_MS)

    # A wrong code is refused with the server's code (checked before anything else).
    table = link.split("invite=")[1].replace("%3A", ":").split(":")[0]
    field.fill(f"{table}:not-the-code")
    bob.get_by_role("button", name="Join", exact=True).click()
    expect(bob.get_by_role("alert")).to_contain_text("invite_invalid")
    field.fill("no link at all")
    bob.get_by_role("button", name="Join", exact=True).click()
    expect(bob.get_by_role("alert")).to_have_text("That is not an invitation link.")
