"""``tests/web/recorder.py`` in a real browser: a page that follows the scripted deal's stream
and reads its views records every answer and every SSE message with its step, and the
secrecy checker finds nothing hidden in a spectator's, while a seated player's (his own
hand, by rights) is caught as a leak to a spectator and passes for him."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page

from tests.e2e.conftest import Backend
from tests.support.http import register_player
from tests.web.conftest import NewContext, stacked_decks_server
from tests.web.deals import classic_four, play_step, start_table
from tests.web.pages import open_lobby, signed_in
from tests.web.recorder import PageRecorder
from tests.web.secrecy import read_history

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

AUDITOR = "audrey"
#: Opens the deal's stream in the page (closed at its end); fetches the deal's view.
FOLLOW = """deal => {
  const source = new EventSource(`/deals/${deal}/stream`);
  source.addEventListener("end", () => source.close());
}"""
LOOK = "async deal => (await fetch(`/deals/${deal}`, {credentials: 'same-origin'})).text()"


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """Stacked decks (tests/web/deals.py) and an auditor, to check against his history."""
    yield from stacked_decks_server(tmp_path_factory, "recorder", CANASTA_AUDITORS=AUDITOR)


def test_what_pages_were_given_is_recorded_and_checked(
    new_context: NewContext, web_server: Backend
) -> None:
    with httpx.Client(base_url=web_server.server.url, timeout=10) as http:
        auditor = register_player(http, AUDITOR)
        deal = classic_four()
        game = start_table(http, deal, ("rhea", "sam", "tia", "ugo"))
        spectator, _ = open_lobby(new_context())
        player = signed_in(open_lobby(new_context())[0], game.headers["sam"])  # seat 1
        pages: list[tuple[Page, PageRecorder]] = []
        for page in (spectator, player):
            pages.append((page, PageRecorder(page)))
            page.evaluate(FOLLOW, game.deal_id)
            page.evaluate(LOOK, game.deal_id)
        for step in deal.steps:
            play_step(http, game, step)
            last = http.get(f"/deals/{game.deal_id}").json()["step"]
            for page, recorder in pages:
                for _ in range(300):  # the recorder hears the stream while Playwright waits
                    if recorder.latest >= last:
                        break
                    page.wait_for_timeout(50)
                assert recorder.latest >= last, f"the stream did not bring step {last}"
                page.evaluate(LOOK, game.deal_id)
                recorder.snapshot()
        secrets = read_history(http, game.deal_id, auditor)

    (_, watched), (_, sams) = pages
    seen = watched.seen()
    assert watched.latest == secrets.last_step
    sse = [s for s in seen if s.where.startswith("SSE")]
    assert {s.step for s in sse} >= {1, *range(3, secrets.last_step + 1)}  # 2: the deck
    assert any("AS/1" in s.text for s in sse), "the melded aces came by the stream"
    assert any(s.where.endswith(f"/deals/{game.deal_id}") for s in seen)
    assert secrets.violations(seen) == []

    mine = sams.seen()
    assert secrets.violations(mine, seat=1) == []
    leaks = secrets.violations(mine)  # his hand, were it a spectator's
    assert {v.card for v in leaks} >= {"4D/1", "JD/1"}
    assert any(v.where.startswith("SSE") for v in leaks)
    assert any(v.where.startswith("GET ") for v in leaks)
