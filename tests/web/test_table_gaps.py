"""Turn clocks and absent players in a real browser (docs/tables.md, docs/web.md): the lobby
shows each table's clock and the seats the bot plays for absent players; the host changes the
clock on the table page before the start, and the other players see it change (and no empty
"What happened" panel until the deal's first events); while the
host is away a present player opens the next deal from the table page, the host is never
offered his own seat to give, and the log names the bot that played a seat for its absent
player ("the basic bot (for ann) ..."), live and after a reload."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Backend
from tests.support.http import QUICK_MOVES, move_from_menu, open_table, register_player
from tests.web.conftest import NewContext, screenshot, stacked_decks_server
from tests.web.deals import classic_played
from tests.web.pages import LIVE_MS, open_lobby, signed_in, table_page

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

Headers = dict[str, str]


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """This module's server deals stacked decks (tests/web/deals.py), to end a deal fast."""
    yield from stacked_decks_server(tmp_path_factory, "gaps")


def leave(http: httpx.Client, table: str, headers: Headers) -> Any:
    """The player leaves his seat: the answer's body, which must be a success (a failure
    shows its status and error, not a KeyError on the body)."""
    answer = http.post(f"/tables/{table}/leave", headers=headers)
    assert answer.status_code == 200, f"leave: {answer.status_code} {answer.text}"
    return answer.json()


def test_the_lobby_shows_the_clock_and_who_is_away(
    new_context: NewContext, http: httpx.Client
) -> None:
    game = open_table(http, ("fay", "gus"), table={"turn_seconds": 120})
    fay, gus = (game.headers[name] for name in game.names)
    clocked = game.table
    assert leave(http, clocked, gus)["seat"] == 1
    plain = http.post("/tables", json={"entry": "classic", "players": 2}, headers=gus).json()["id"]

    page, _ = open_lobby(new_context())
    card = page.locator(f"article[data-table='{clocked}']")
    expect(card.locator(".meta")).to_contain_text("120 seconds a turn", timeout=LIVE_MS)
    away = card.locator("li.seat[data-away=true]")
    expect(away).to_have_count(1)
    expect(away).to_contain_text("Seat 2: gus · away: the basic bot plays")
    expect(card.locator("li.seat").first).not_to_contain_text("away")
    expect(page.locator(f"article[data-table='{plain}'] .meta")).to_contain_text("No clock")
    screenshot(page, "lobby-clock-away")

    http.post(f"/tables/{clocked}/seats", json={}, headers=gus)  # back: the lobby follows
    expect(card.locator("li.seat[data-away=true]")).to_have_count(0, timeout=LIVE_MS)

    # Away again, and the host stops the game: the played games' card says nobody is away.
    assert http.post(f"/tables/{clocked}/leave", headers=gus).is_success
    expect(card.locator("li.seat[data-away=true]")).to_have_count(1, timeout=LIVE_MS)
    assert http.post(f"/tables/{clocked}/stop", headers=fay).is_success
    played = page.locator(f"#finished-tables article[data-table='{clocked}']")
    expect(played).to_contain_text("Seat 2: gus", timeout=LIVE_MS)
    expect(played).not_to_contain_text("away")


def test_the_host_changes_the_clock_before_the_start(
    new_context: NewContext, http: httpx.Client
) -> None:
    hal, ida = register_player(http, "hal"), register_player(http, "ida")
    table = http.post("/tables", json={"entry": "classic", "players": 2}, headers=hal).json()["id"]
    assert http.post(f"/tables/{table}/seats", json={"seat": 1}, headers=ida).is_success
    host = table_page(new_context(), hal, table)
    other = table_page(new_context(), ida, table)
    expect(host.locator("#clock-shown")).to_have_text("Turn clock: No clock")
    expect(other.locator("#clock-shown")).to_have_text("Turn clock: No clock")
    expect(other.locator("#clock-choice")).to_have_count(0)  # the host's alone
    # Nothing has happened yet: no empty "What happened" panel.
    for page in (host, other):
        expect(page.locator("#log-panel")).to_be_hidden()

    host.get_by_label("Change the turn clock").select_option(label="60 seconds a turn")
    host.get_by_role("button", name="Set the clock").click()
    expect(host.locator("#clock-shown[data-seconds='60']")).to_be_visible(timeout=LIVE_MS)
    assert http.get(f"/tables/{table}").json()["turn_seconds"] == 60
    # The other player's page follows the table's TurnClockSet.
    expect(other.locator("#clock-shown")).to_have_text(
        "Turn clock: 60 seconds a turn", timeout=LIVE_MS
    )
    screenshot(host, "table-clock-choice")

    host.get_by_label("Change the turn clock").select_option(label="No clock")
    host.get_by_role("button", name="Set the clock").click()
    expect(other.locator("#clock-shown[data-seconds='']")).to_be_visible(timeout=LIVE_MS)
    assert http.get(f"/tables/{table}").json()["turn_seconds"] is None
    # A forged change by the other player is refused and changes nothing.
    forged = other.request.put(
        f"/tables/{table}/clock", data={"turn_seconds": 30}, headers={"X-Canasta-CSRF": "1"}
    )
    assert forged.status == 403 and forged.json()["error"]["code"] == "R-SEAT-3"
    assert http.get(f"/tables/{table}").json()["turn_seconds"] is None

    assert http.post(f"/tables/{table}/seats", json={"seat": 0}, headers=hal).is_success
    assert http.post(f"/tables/{table}/start", headers=hal).status_code == 201
    expect(host.locator("#clock-choice")).to_have_count(0, timeout=LIVE_MS)  # fixed now
    # The deal's first events: "What happened" says them.
    expect(host.locator("#log-panel")).to_be_visible(timeout=LIVE_MS)
    expect(host.locator("#log li").first).to_be_visible()


def test_a_refused_clock_change_is_said(new_context: NewContext, http: httpx.Client) -> None:
    """The host signed out in another tab meanwhile: "Set the clock" is refused, and the page
    says so (a stray name in the page's handler threw instead: nothing was said). The refusal
    is a 401: the page finds his session ended and says that (docs/web.md, "Signed out
    elsewhere")."""
    jay = register_player(http, "jay")
    table = http.post("/tables", json={"entry": "classic", "players": 2}, headers=jay).json()["id"]
    host = table_page(new_context(), jay, table)
    gone = host.request.delete("/sessions", headers={"X-Canasta-CSRF": "1"})
    assert gone.status == 204
    host.get_by_label("Change the turn clock").select_option(label="60 seconds a turn")
    host.get_by_role("button", name="Set the clock").click()
    expect(host.get_by_role("alert")).to_contain_text("You are signed out")
    assert http.get(f"/tables/{table}").json()["turn_seconds"] is None


def play_until(page: Page, done: str, http: httpx.Client, people: list[Headers], deal: str) -> None:
    """The present people play on (the bots play the other seats) until ``done`` shows."""
    rng = random.Random(5)
    for _ in range(400):
        if page.locator(done).count():
            return
        if not any([move_from_menu(http, who, deal, rng, QUICK_MOVES) for who in people]):
            page.wait_for_timeout(100)
    raise AssertionError(f"{done} never showed")


def test_while_the_host_is_away_a_player_opens_the_next_deal_and_the_log_names_the_bot(
    new_context: NewContext, http: httpx.Client
) -> None:
    game = classic_played(http, ("ann", "bob", "cyd", "dee"))
    ann, bob, cyd, dee = (game.headers[name] for name in game.names)
    assert leave(http, game.table, ann)["seat"] == 0
    assert leave(http, game.table, dee)["seat"] == 3

    # The host, away: no "Give" for his own seat, only for dee's.
    host = table_page(new_context(), ann, game.table)
    expect(host.locator("#give-seat-3")).to_be_visible(timeout=LIVE_MS)
    expect(host.locator("#give-seat-0")).to_have_count(0)
    expect(host.locator("#take-back")).to_be_visible()

    # The lobby offers bob the next deal too (the same rule as the table page), not dee (away).
    lobby = signed_in(open_lobby(new_context())[0], bob)
    card = lobby.locator(f"article[data-table='{game.table}']")
    expect(card.get_by_role("button", name="Next deal")).to_be_visible(timeout=LIVE_MS)
    expect(card).to_contain_text("The host is away: any player at the table may open")
    expect(card.get_by_role("button", name="Stop the game")).to_have_count(0)
    screenshot(lobby, "lobby-host-away-next-deal")
    away = signed_in(open_lobby(new_context())[0], dee)
    expect(away.locator(f"article[data-table='{game.table}']")).to_contain_text("Seat 4: dee")
    expect(away.get_by_role("button", name="Next deal")).to_have_count(0)

    page = table_page(new_context(), bob, game.table)
    # bob played the deal: "Next deal" is in his move panel (on a phone, at the screen's bottom).
    expect(page.locator("#moves")).to_contain_text("The host is away", timeout=LIVE_MS)
    expect(page.locator("#stop-game")).to_have_count(0)  # the host's alone
    # Deal 1 was played by dee herself: she left after its end, and its log says so.
    expect(page.locator("#log li:has-text('dee went out concealed')")).to_have_count(1)
    expect(page.locator("#log li:has-text('the basic bot')")).to_have_count(0)
    screenshot(page, "table-host-away-next-deal")
    page.locator("#next-deal").click()
    shown = page.locator(f"#deal .deal:not([data-deal='{game.deal_id}'])")
    expect(shown).to_be_attached(timeout=LIVE_MS)
    second = http.get(f"/tables/{game.table}").json()["current_deal"]
    assert second != game.deal_id and shown.get_attribute("data-deal") == second

    # Deal 2 opened with the bot in ann's and dee's seats: the log names them so.
    bots = "#log li:has-text('the basic bot (for ann)')"
    play_until(page, bots, http, [bob, cyd], second)
    play_until(page, "#log li:has-text('the basic bot (for dee)')", http, [bob, cyd], second)
    # cyd leaves mid-deal: his lines before say cyd, the bot's after say so.
    play_until(page, "#log li:has-text('cyd drew')", http, [bob, cyd], second)
    assert leave(http, game.table, cyd)["seat"] == 2
    changed = page.locator("#log li[data-kind=SeatPlayerChanged]")
    expect(changed).to_contain_text(
        "cyd is away: the basic bot (for cyd) plays the seat until he is back.", timeout=LIVE_MS
    )
    after = "#log li[data-kind=SeatPlayerChanged] ~ li:has-text('the basic bot (for cyd)')"
    play_until(page, after, http, [bob], second)
    screenshot(page, "table-log-stand-ins")
    lines = page.locator("#log li").all_inner_texts()
    page.reload()  # the whole log drawn again names each seat as it was played then
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    expect(page.locator("#log li").nth(len(lines) - 1)).to_be_attached(timeout=LIVE_MS)
    assert page.locator("#log li").all_inner_texts()[: len(lines)] == lines
    left_at = next(i for i, line in enumerate(lines) if line.startswith("cyd is away"))
    assert any(line.startswith("cyd drew") for line in lines[:left_at])
    assert not any(line.startswith("cyd ") for line in lines[left_at + 1 :])
    assert not any(line.startswith(("ann ", "dee ")) for line in lines)
