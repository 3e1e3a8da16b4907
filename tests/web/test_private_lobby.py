"""A private table in the lobby, in a real browser (docs/web.md, docs/tables.md): the host
creates it, gets its invitation link once, and finds it under "Your private tables" (the
lobby's lists never show it); a second player opens the link, signs up and joins with it. A
host who lost the link makes a new one on the table's page."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Backend
from tests.support.http import register_player
from tests.web.conftest import NewContext, screenshot
from tests.web.pages import table_page
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
    assert "/#invite=" in link
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


def test_a_host_who_lost_the_link_makes_a_new_one_on_the_table_page(
    new_context: NewContext, http: httpx.Client
) -> None:
    """The link is shown once; the lobby promises a new one if it is lost. The host's table
    page gives it (POST /tables/{id}/invite): the new link seats a player, the old one no
    longer does (R-SEAT-3's invite, docs/tables.md)."""
    cat = register_player(http, "cat")
    created = http.post(
        "/tables", json={"entry": "classic", "players": 2, "private": True}, headers=cat
    ).json()
    old = created["invite"]
    assert http.post(f"/tables/{created['id']}/seats", json={"seat": 0}, headers=cat).is_success
    page = table_page(new_context(), cat, created["id"])
    expect(page.locator("#invite-link")).to_have_count(0)  # the old one is not kept anywhere
    page.get_by_role("button", name="New invitation link").click()
    link = page.get_by_label("Invitation link", exact=True)
    expect(link).to_be_focused()
    table, code = link.input_value().split("invite=")[1].replace("%3A", ":").split(":")
    assert table == created["id"] and code != old
    screenshot(page, "table-new-invite")

    dan = register_player(http, "dan")
    stale = http.post(f"/tables/{table}/seats", json={"invite": old}, headers=dan)
    assert stale.status_code == 403 and stale.json()["error"]["code"] == "invite_invalid"
    assert http.post(f"/tables/{table}/seats", json={"invite": code}, headers=dan).is_success
    expect(page.locator("#waiting-seats")).to_contain_text("dan", timeout=LIVE_MS)
    expect(page.get_by_role("button", name="New invitation link")).to_have_count(0)  # full

    # Nobody else gets the control: another player's page of an open private table.
    eve = register_player(http, "eve")
    other = http.post(
        "/tables", json={"entry": "classic", "players": 2, "private": True}, headers=cat
    ).json()
    seated = {"seat": 1, "invite": other["invite"]}
    assert http.post(f"/tables/{other['id']}/seats", json=seated, headers=eve).is_success
    watcher = table_page(new_context(), eve, other["id"])
    expect(watcher.locator("#waiting-seats")).to_contain_text("eve (you)")
    expect(watcher.get_by_role("button", name="New invitation link")).to_have_count(0)
