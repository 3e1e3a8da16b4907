"""A page address with a mistyped or unknown id (docs/web.md): the browser gets the page, and
the page says in words what the API refused (422 ``malformed``, 404), never bare JSON, and the
table page shows no empty "What happened" panel beside the refusal, and its header says who is
signed in there too (it was left empty, and pushed "Back to the lobby" aside on a phone)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.conftest import NewContext, screenshot

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

UNKNOWN = "00000000-0000-4000-8000-000000000000"


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/tables/not-a-table", "malformed"),
        ("/deals/12345", "malformed"),
        ("/deals/not-a-deal/replay", "malformed"),
        (f"/tables/{UNKNOWN}", "not_found"),
        (f"/deals/{UNKNOWN}/replay", "not_found"),
    ],
)
def test_a_mistyped_or_unknown_id_shows_the_page_with_the_refusal_in_words(
    new_context: NewContext, path: str, code: str
) -> None:
    page = new_context().new_page()
    answer = page.goto(path)
    assert answer is not None and answer.headers["content-type"].startswith("text/html")
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    expect(page.get_by_role("alert").filter(has_text=code)).to_be_visible()
    assert '{"error"' not in page.content()
    if not path.endswith("/replay"):  # the table page: no empty "What happened" beside it
        expect(page.locator("#log-panel")).to_be_hidden()
        expect(page.locator("#who")).to_have_text("Not signed in: watching")  # it was empty
    if path == "/tables/not-a-table":
        screenshot(page, "table-mistyped-id")
