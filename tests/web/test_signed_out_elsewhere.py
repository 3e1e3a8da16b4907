"""A seated player's table page when his browser's session ends elsewhere (docs/web.md,
"Signed out elsewhere"; docs/browsers.md): he signs out everywhere else from another device,
or his token is replaced (``POST /me/token``). Before, the page's live streams were refused
(401) on reconnection and the page said "Connection lost: reconnecting..." for ever, his hand
still on the screen and his move buttons still there (a move got a bare "R-CMD-2" refusal);
nothing told him to sign in again. Now the page says so in his language, takes his hand and
his private log off the page, stops his moves, watches on as a spectator where the table
allows it, and links to the lobby's sign-in, which brings him back to this table, playing."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.support.http import register_player
from tests.web.conftest import DESKTOP, PHONES, TOUCH, NewContext, screenshot
from tests.web.pages import in_language, open_lobby, signed_in, table_page
from tests.web.practice import his_draw, start_practice

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

HAND = "#hand [data-card]"


def signs_in_again(page: Page, token: str, table: str, link: str, button: str) -> None:
    """The notice's link to the lobby, its sign-in form, and back at the table playing."""
    page.get_by_role("link", name=link).click()
    page.wait_for_url("**/?back=*")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    page.locator("#sign-in-token").fill(token)
    page.get_by_role("button", name=button, exact=True).click()
    page.wait_for_url(f"**/tables/{table}")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    expect(page.locator("#signed-out")).to_be_hidden()
    expect(page.locator(HAND).first).to_be_visible()
    his_draw(page)
    page.locator('#moves [data-move="draw"]').click()
    expect(page.locator('#moves [data-move="discard"]')).to_be_visible()  # playing


def test_signed_out_everywhere_else_from_another_browser(
    new_context: NewContext, http: httpx.Client
) -> None:
    headers = register_player(http, "sol")
    table, _ = start_practice(http, headers)
    page = table_page(new_context(viewport=DESKTOP), headers, table)
    his_draw(page)
    expect(page.locator(HAND).first).to_be_visible()

    # His other device: the lobby's "Sign out everywhere else".
    other = signed_in(open_lobby(new_context(viewport=DESKTOP))[0], headers)
    other.get_by_role("button", name="Sign out everywhere else").click()
    expect(other.get_by_text("Signed in as sol")).to_be_visible()  # that one stays

    notice = page.get_by_role("alert").filter(has_text="You are signed out")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("session has ended")
    # His cards and his moves are gone; the deal goes on for him as a spectator's.
    expect(page.locator(HAND)).to_have_count(0)
    expect(page.locator("#moves")).to_be_hidden()
    expect(page.locator("#connection")).to_be_hidden()
    expect(page.locator("#who")).to_contain_text("Not signed in")
    expect(page.locator("#deal .deal")).to_be_visible()
    expect(page.locator("#log li[data-step]").first).to_be_attached()
    screenshot(page, "table-signed-out-elsewhere", full_page=False)

    token = headers["Authorization"].split()[1]
    signs_in_again(page, token, table, "Sign in again and come back to this table", "Sign in")


def test_a_replaced_token_on_a_russian_phone(new_context: NewContext, http: httpx.Client) -> None:
    """The token replaced by HTTP (POST /me/token closes every session of the account), at a
    table that refuses spectators: the notice alone stays, nothing is followed any more."""
    headers = register_player(http, "ivan")
    table, _ = start_practice(http, headers, spectators=False)
    page = table_page(new_context(viewport=PHONES["small"], **TOUCH), headers, table)
    page = in_language(page, "ru")
    his_draw(page)

    replaced = http.post("/me/token", headers=headers)
    assert replaced.status_code == 201, replaced.text
    token = replaced.json()["token"]

    notice = page.get_by_role("alert").filter(has_text="Вы вышли из аккаунта")
    expect(notice).to_be_visible()
    expect(page.locator(HAND)).to_have_count(0)
    expect(page.locator("#moves")).to_be_hidden()
    expect(page.locator("#connection")).to_be_hidden()
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    screenshot(page, "table-signed-out-phone-ru", full_page=False)

    signs_in_again(page, token, table, "Войти снова и вернуться за этот стол", "Войти")


def test_his_replay_of_a_deal_he_plays(new_context: NewContext, http: httpx.Client) -> None:
    """The replay shows a seated player his own hand at each step: once a step's read is
    refused (his session closed by a new token), that leaves the page and the notice says why."""
    headers = register_player(http, "rhea")
    table, deal = start_practice(http, headers)
    context = new_context(viewport=DESKTOP)
    playing = table_page(context, headers, table)
    his_draw(playing)  # the cards dealt (he cuts first if the deal asks him to)
    playing.close()
    page = context.new_page()
    page.goto(f"/deals/{deal}/replay?step=1")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    page.get_by_role("button", name="Last").click()
    expect(page.locator("#deal #hand [data-card]").first).to_be_visible()  # his own hand

    replaced = http.post("/me/token", headers=headers)
    assert replaced.status_code == 201, replaced.text
    page.get_by_role("button", name="First").click()  # step 1 was read: still on the page
    page.locator("#step").fill("3")  # a step not read yet: refused 401

    notice = page.get_by_role("alert").filter(has_text="You are signed out")
    expect(notice).to_be_visible()
    expect(page.locator("[data-card]")).to_have_count(0)
    expect(page.locator("#who")).to_contain_text("Not signed in")
    screenshot(page, "replay-signed-out-elsewhere", full_page=False)

    page.get_by_role("link", name="Sign in again and come back to this page").click()
    page.wait_for_url("**/?back=*")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    page.locator("#sign-in-token").fill(replaced.json()["token"])
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.wait_for_url(f"**/deals/{deal}/replay")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    expect(page.locator("#signed-out")).to_have_count(0)
