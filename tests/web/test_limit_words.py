"""The server's limits are said in the page's language (docs/web.md, "Refusals"): a 429
``rate_limited`` came with the server's English message only, so a Chinese visitor who had
signed up too often from his address read "被拒绝：too many registrations from this client
address (at most 2 per 1 minute): retry in 57 s（rate_limited）". Its error body now carries
a key and params (``limits.rate``: docs/api.md, "Errors"), and the page fills its own
template, the kind of request and whom the limit counts included."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Backend
from tests.web.conftest import NewContext, screenshot, stacked_decks_server
from tests.web.pages import in_language, open_lobby

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """Limits on, two registrations a minute per address."""
    yield from stacked_decks_server(
        tmp_path_factory,
        "limit-words",
        CANASTA_RATE_LIMITS="true",
        CANASTA_RATE_LIMIT_REGISTRATION="2/minute",
    )


def test_a_visitor_over_the_registration_limit_is_told_so_in_his_language(
    new_context: NewContext, http: httpx.Client
) -> None:
    for name in ("liu", "ma"):  # two registrations from this address, the limit
        assert http.post("/players", json={"name": name}).status_code == 201
    page = in_language(open_lobby(new_context())[0], "zh")
    page.locator("#sign-up-name").fill("niu")
    page.locator("#sign-up-form button[type=submit]").click()
    alert = page.get_by_role("alert")
    expect(alert).to_have_text(
        re.compile(
            r"^被拒绝：该客户端地址的注册过多（60 秒内最多 2 次）：请 \d+ 秒后重试（rate_limited）$"
        )
    )
    screenshot(page, "refusal-429-zh", full_page=False)
    in_language(page, "ru")
    expect(alert).to_have_text(
        re.compile(
            r"^Отказ: слишком много регистраций с этого адреса \(не больше 2 за 60 с\): "
            r"повторите через \d+ с \(rate_limited\)$"
        )
    )
    in_language(page, "en")  # the server's own words on an English page
    expect(alert).to_have_text(
        re.compile(
            r"^Refused: too many registrations from this client address \(at most 2 in 60 s\): "
            r"retry in \d+ s \(rate_limited\)$"
        )
    )
