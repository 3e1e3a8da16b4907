"""A new token from the lobby (docs/web.md, "The lobby"; docs/api.md, "Replacing a token"): a
player whose token leaked, or who lost it while this browser is still signed in, replaces it
with a button. The page asks first (every earlier token stops working at once, in his scripts
and on his other devices), then shows the new one once, as at sign-up. Before, the only way was
`POST /me/token` by hand."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from tests.web.conftest import DESKTOP, PHONES, TOUCH, NewContext, screenshot
from tests.web.pages import in_language, open_lobby, sign_up, signed_in

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`


def works(http: httpx.Client, token: str) -> int:
    return http.get("/me", headers={"Authorization": f"Bearer {token}"}).status_code


def test_a_player_replaces_his_token_from_the_lobby(
    new_context: NewContext, http: httpx.Client
) -> None:
    page, _ = open_lobby(new_context(viewport=DESKTOP))
    old = sign_up(page, "nat")
    assert works(http, old) == 200

    # Asked first; "no" changes nothing.
    page.get_by_role("button", name="New token").click()
    box = page.get_by_role("region", name="Replace your token?")
    expect(box).to_contain_text("stops working at once")
    expect(page.get_by_role("button", name="No, keep it")).to_be_focused()
    page.get_by_role("button", name="No, keep it").click()
    expect(box).to_be_hidden()
    assert works(http, old) == 200
    # By the keyboard: Escape says no too (it did nothing), and the focus goes back.
    page.get_by_role("button", name="New token").press("Enter")
    expect(page.get_by_role("button", name="No, keep it")).to_be_focused()
    page.keyboard.press("Shift+Tab")  # on "Replace my token": Escape still says no
    page.keyboard.press("Escape")
    expect(box).to_be_hidden()
    expect(page.get_by_role("button", name="New token")).to_be_focused()
    assert works(http, old) == 200

    page.get_by_role("button", name="New token").click()
    screenshot(page, "lobby-new-token-asked", full_page=False)
    page.get_by_role("button", name="Replace my token").click()
    shown = page.get_by_role("region", name="Your token: keep it safe")
    expect(shown).to_be_visible()
    new = page.get_by_label("Token", exact=True).input_value()
    assert new and new != old
    assert works(http, old) == 401  # refused at once
    assert works(http, new) == 200
    page.get_by_role("button", name="I have saved my token").click()
    expect(shown).to_be_hidden()
    expect(box).to_be_hidden()
    # This browser stays signed in.
    page.reload()
    expect(page.get_by_text("Signed in as nat")).to_be_visible()


def test_the_new_token_button_on_a_russian_phone(new_context: NewContext) -> None:
    """In the header on a phone, in the player's language; only once he is signed in."""
    page, _ = open_lobby(new_context(viewport=PHONES["small"], **TOUCH))
    expect(page.locator("#new-token")).to_be_hidden()
    sign_up(page, "ola")
    page = in_language(page, "ru")
    button = page.get_by_role("button", name="Новый токен")
    expect(button).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    button.tap()
    expect(page.get_by_role("region", name="Заменить ваш токен?")).to_be_visible()
    screenshot(page, "lobby-new-token-phone-ru", full_page=False)


def test_the_new_token_signs_out_the_browser_the_leaked_token_signed_in(
    new_context: NewContext, http: httpx.Client
) -> None:
    """The token leaked and its finder signed a browser in with it (a cookie good for days):
    the player's New token signs that browser out, and its lobby says so at its next look at
    the server. The player's own browser stays signed in."""
    player, _ = open_lobby(new_context(viewport=DESKTOP))
    old = sign_up(player, "lea")
    finder, _ = open_lobby(new_context(viewport=DESKTOP))
    signed_in(finder, {"Authorization": f"Bearer {old}"})
    expect(finder.get_by_text("Signed in as lea")).to_be_visible()

    player.get_by_role("button", name="New token").click()
    player.get_by_role("button", name="Replace my token").click()
    expect(player.get_by_role("region", name="Your token: keep it safe")).to_be_visible()
    new = player.get_by_label("Token", exact=True).input_value()
    assert works(http, new) == 200

    expect(finder.get_by_text("this browser's session has ended")).to_be_visible()
    expect(finder.get_by_text("Signed in as lea")).to_be_hidden()
    expect(finder.get_by_role("button", name="Sign out", exact=True)).to_be_hidden()
    expect(finder.get_by_role("button", name="Sign in", exact=True)).to_be_visible()
    screenshot(finder, "lobby-session-closed", full_page=False)
    finder.reload()  # and it stays signed out
    expect(finder.locator("body[data-ready=true]")).to_be_attached()
    expect(finder.get_by_role("button", name="Sign in", exact=True)).to_be_visible()

    player.get_by_role("button", name="I have saved my token").click()
    player.reload()
    expect(player.get_by_text("Signed in as lea")).to_be_visible()


def test_sign_out_everywhere_else(new_context: NewContext, http: httpx.Client) -> None:
    """The player thinks a browser of his is signed in where he cannot reach it (a cookie
    that leaked, a shared computer): he signs every other browser out from this one, which
    stays signed in, and his token keeps working."""
    player, _ = open_lobby(new_context(viewport=DESKTOP))
    token = sign_up(player, "sam")
    elsewhere, _ = open_lobby(new_context(viewport=DESKTOP))
    signed_in(elsewhere, {"Authorization": f"Bearer {token}"})

    player.get_by_role("button", name="Sign out everywhere else").click()
    expect(player.get_by_text("Every other browser signed in to your account")).to_be_visible()
    screenshot(player, "lobby-signed-out-elsewhere", full_page=False)
    expect(elsewhere.get_by_text("this browser's session has ended")).to_be_visible()
    expect(elsewhere.get_by_role("button", name="Sign in", exact=True)).to_be_visible()
    player.reload()
    expect(player.get_by_text("Signed in as sam")).to_be_visible()
    assert works(http, token) == 200
