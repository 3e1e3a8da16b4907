"""A friend who opens an invitation link signed out (docs/web.md, "Private tables"): the lobby
looked like any other, nothing said he was invited or what to do; once signed up, the Join box,
filled in, was below the create form, out of sight on a phone, and the focus went to the
create form's entry menu. The lobby now says he is invited and to sign up or in first; once he
is signed in, his Join button is in sight and focused, under "press Join"."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from tests.support.http import register_player
from tests.web.conftest import PHONES, TOUCH, NewContext, screenshot
from tests.web.test_lobby_gaps import IN_SIGHT

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`


def test_an_invited_friend_is_told_what_to_do_and_finds_join_in_sight(
    new_context: NewContext, http: httpx.Client
) -> None:
    host = register_player(http, "zhuren")
    created = http.post(
        "/tables", json={"entry": "classic", "players": 2, "private": True}, headers=host
    ).json()
    link = f"/#invite={created['id']}:{created['invite']}"

    page = new_context(viewport=PHONES["upright"], locale="zh-CN", **TOUCH).new_page()
    page.goto(link)
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    visitor = page.locator("#invited-visitor")
    expect(visitor).to_have_text(
        "你收到了一个私人牌桌的邀请：请先创建账户（或用你的令牌登录），然后点击“加入”。"
    )
    assert visitor.evaluate(IN_SIGHT), "the invitation's note is not on the first screen"
    screenshot(page, "invited-friend-signed-out", full_page=False)

    page.locator("#sign-up-name").fill("pengyou")
    page.locator("#sign-up-form button[type=submit]").tap()
    expect(page.locator("#token-box")).to_be_visible()
    page.locator("#token-done").tap()
    join = page.get_by_role("button", name="加入", exact=True)
    expect(join).to_be_focused()
    expect(page.locator("#invited-member")).to_have_text(
        "你收到了这个牌桌的邀请：点击“加入”即可入座。"
    )
    expect(visitor).to_be_hidden()
    page.wait_for_function("node => (" + IN_SIGHT + ")(node)", arg=join.element_handle())
    screenshot(page, "invited-friend-signed-in", full_page=False)

    join.tap()
    expect(page.locator("#notice")).to_have_text("你坐在1号座位。")
    expect(page.locator("#invited-member")).to_be_hidden()
    seats = http.get(f"/tables/{created['id']}", headers=host).json()["seats"]
    assert seats[0] == "pengyou"  # the host has not sat down yet
