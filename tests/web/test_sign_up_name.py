"""Signing up with a name in one's own script (docs/web.md, "The lobby"): a Russian player on a
phone typed "Иван", a Thai one "สมชาย", a Chinese one "主人"; the page sent it and showed the
server's refusal in English, "body.name: a name is 1 to 32 ASCII letters, digits ... (malformed)",
on his very first step. The form now says under the field what a name may be, in his language,
and refuses such a name itself, in his language, without sending it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from domain.accounts import NAME_PATTERN
from tests.e2e.server import REPO
from tests.web.conftest import PHONES, TOUCH, NewContext, screenshot
from tests.web.pages import open_lobby

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

CASES = [
    ("ru-RU", "Иван", "латинскими буквами", "Латинские буквы (a–z)"),
    ("th-TH", "สมชาย", "อักษรละติน", "อักษรละติน (a ถึง z)"),
    ("zh-CN", "主人", "拉丁字母", "拉丁字母（a 到 z）"),
]


@pytest.mark.parametrize(("locale", "name", "refused", "hint"), CASES)
def test_a_name_in_another_script_is_refused_in_the_players_language_before_sending(
    new_context: NewContext, locale: str, name: str, refused: str, hint: str
) -> None:
    page, urls = open_lobby(new_context(viewport=PHONES["upright"], locale=locale, **TOUCH))
    field = page.locator("#sign-up-name")
    # What a name may be is said under the field, before anything is typed, as its description.
    expect(page.locator("#sign-up-name-hint")).to_contain_text(hint)
    assert field.get_attribute("aria-describedby") == "sign-up-name-hint"
    field.fill(name)
    page.locator("#sign-up-form button[type=submit]").tap()
    error = page.locator("#error")
    expect(error).to_contain_text(refused)
    expect(error).to_contain_text(name)
    expect(error).not_to_contain_text("ASCII")  # not the server's English message
    expect(error.get_by_role("link", name="R-CMD-2")).to_be_visible()
    assert not [url for url in urls if url.endswith("/players")], "the name was sent"
    screenshot(page, f"sign-up-name-{locale}")
    # A name of Latin letters then signs up as before.
    field.fill(f"ivan-{locale[:2]}")
    page.locator("#sign-up-form button[type=submit]").tap()
    expect(page.locator("#token-box")).to_be_visible()
    expect(error).to_be_hidden()


def test_the_pages_name_rule_is_the_accounts() -> None:
    """The lobby's pattern (lobby.js) is the one the server checks names with (R-CMD-2)."""
    source = (REPO / "app/web/lobby.js").read_text()
    found = re.search(r"const NAME_PATTERN = /\^(.+)\$/;", source)
    assert found is not None, "lobby.js has no NAME_PATTERN"
    assert found.group(1) == NAME_PATTERN.pattern
