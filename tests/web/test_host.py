"""The host's controls in the lobby (docs/web.md), in a real browser: teams where the entry
needs them, start, next deal once the last deal is over, stop; shown to the host only, and
refused by the server (403 R-SEAT-3, nothing changed) when another player forges them with
his own session cookie and the CSRF header. And the links to a table in play: "Open the
table" for its players, "Watch" for everybody else."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Locator, expect

from tests.e2e.conftest import Backend
from tests.support.http import register_player
from tests.web.conftest import PHONE, NewContext, screenshot, stacked_decks_server
from tests.web.deals import classic_four, play_step, start_table
from tests.web.pages import LIVE_MS, open_lobby, signed_in

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`

CSRF = {"X-Canasta-CSRF": "1"}


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """This module's server deals stacked decks (tests/web/deals.py), to end a deal fast."""
    yield from stacked_decks_server(tmp_path_factory, "host")


def refused(answer: Any) -> str:
    """The code of a 403 refusal (Playwright's APIResponse)."""
    assert answer.status == 403, answer.text()
    code: str = answer.json()["error"]["code"]
    return code


def controls(card: Locator) -> dict[str, int]:
    """How many of each host control a table's card shows."""
    return {
        "teams": card.get_by_role("group", name="Teams").count(),
        "start": card.get_by_role("button", name="Start the game").count(),
        "next": card.get_by_role("button", name="Next deal").count(),
        "stop": card.get_by_role("button", name="Stop the game").count(),
    }


def test_the_host_chooses_teams_and_starts_others_cannot(
    new_context: NewContext, http: httpx.Client
) -> None:
    names = ["tess", "uma", "vic", "wes", "xia"]
    headers = {name: register_player(http, name) for name in names}
    created = http.post("/tables", json={"entry": "classic", "players": 5}, headers=headers["tess"])
    table = created.json()["id"]
    for seat, name in enumerate(names):
        http.post(f"/tables/{table}/seats", json={"seat": seat}, headers=headers[name])
    label = "Classic table of 5, host tess"

    host = signed_in(open_lobby(new_context(viewport=PHONE))[0], headers["tess"])
    uma = signed_in(open_lobby(new_context())[0], headers["uma"])
    hosts_card = host.get_by_role("article", name=label)
    umas_card = uma.get_by_role("article", name=label)
    expect(hosts_card.get_by_role("group", name="Teams")).to_be_visible(timeout=LIVE_MS)
    expect(hosts_card).to_contain_text("Choose the teams before the start")
    expect(umas_card).to_contain_text("Seat 5: xia", timeout=LIVE_MS)
    assert controls(umas_card) == {"teams": 0, "start": 0, "next": 0, "stop": 0}
    assert controls(hosts_card)["start"] == 0  # not before the teams are chosen (R-SEAT-3)

    # Uma forges the host's requests with her own session: refused, nothing changes.
    forged = uma.request.put(f"/tables/{table}/teams", data={"teams": [[1, 2, 3]]}, headers=CSRF)
    assert refused(forged) == "R-SEAT-3"
    assert refused(uma.request.post(f"/tables/{table}/start", headers=CSRF)) == "R-SEAT-3"
    after = http.get(f"/tables/{table}").json()
    assert (after["sides"], after["status"], after["deals"]) == (None, "open", [])

    # Teams of a shape the entry does not allow: the server's refusal is shown.
    for seat in range(5):
        hosts_card.get_by_label(f"Seat {seat + 1} ({names[seat]})").select_option("A")
    hosts_card.get_by_role("button", name="Choose these teams").click()
    expect(host.get_by_role("alert")).to_contain_text("(R-SEAT-2)")
    for seat, team in enumerate("AABAB"):
        hosts_card.get_by_label(f"Seat {seat + 1} ({names[seat]})").select_option(team)
    hosts_card.get_by_role("button", name="Choose these teams").click()
    expect(host.get_by_role("status")).to_have_text("The teams are chosen.")
    assert http.get(f"/tables/{table}").json()["sides"] == {"A": [0, 1, 3], "B": [2, 4]}
    expect(umas_card).to_contain_text("Seat 2: uma (you) · Side A", timeout=LIVE_MS)
    expect(hosts_card.get_by_label("Seat 3 (vic)")).to_have_value("B")
    screenshot(host, "lobby-host-teams-phone")
    fits = "() => document.scrollingElement.scrollWidth <= window.innerWidth"
    assert host.evaluate(fits), host.evaluate("() => document.scrollingElement.scrollWidth")

    hosts_card.get_by_role("button", name="Start the game").click()
    expect(host.get_by_role("status")).to_have_text("The game has started.")
    assert http.get(f"/tables/{table}").json()["status"] == "playing"
    playing = uma.locator("#playing-tables").get_by_role("article", name=label)
    expect(playing.get_by_role("link", name="Open the table")).to_be_visible(timeout=LIVE_MS)
    assert controls(playing) == {"teams": 0, "start": 0, "next": 0, "stop": 0}


def test_next_deal_and_stop_are_the_hosts_alone(
    new_context: NewContext, http: httpx.Client
) -> None:
    deal = classic_four()
    game = start_table(http, deal, ("nina", "oscar", "pia", "quinn"))
    label = "Classic table of 4, host nina"
    host = signed_in(open_lobby(new_context())[0], game.headers["nina"])
    oscar = signed_in(open_lobby(new_context())[0], game.headers["oscar"])
    watcher, _ = open_lobby(new_context())  # signed out: anybody
    hosts_card = host.locator("#playing-tables").get_by_role("article", name=label)
    oscars_card = oscar.locator("#playing-tables").get_by_role("article", name=label)
    watchers_card = watcher.locator("#playing-tables").get_by_role("article", name=label)

    expect(hosts_card.get_by_role("button", name="Stop the game")).to_be_visible(timeout=LIVE_MS)
    assert controls(hosts_card) == {"teams": 0, "start": 0, "next": 0, "stop": 1}  # deal on
    expect(oscars_card.get_by_role("link", name="Open the table")).to_be_visible(timeout=LIVE_MS)
    assert controls(oscars_card) == {"teams": 0, "start": 0, "next": 0, "stop": 0}
    watch = watchers_card.get_by_role("link", name="Watch")
    expect(watch).to_have_attribute("href", f"/tables/{game.table}", timeout=LIVE_MS)
    assert controls(watchers_card) == {"teams": 0, "start": 0, "next": 0, "stop": 0}

    for step in deal.steps:  # the deal, to its end
        play_step(http, game, step)
    next_deal = hosts_card.get_by_role("button", name="Next deal")
    expect(next_deal).to_be_visible(timeout=LIVE_MS)
    expect(hosts_card).to_contain_text("Side B: 735")
    screenshot(host, "lobby-host-controls")
    expect(oscars_card).to_contain_text("Side B: 735", timeout=LIVE_MS)
    assert controls(oscars_card)["next"] == 0

    # Oscar forges the next deal and the stop: refused, nothing changes.
    assert refused(oscar.request.post(f"/tables/{game.table}/deals", headers=CSRF)) == "R-SEAT-3"
    assert refused(oscar.request.post(f"/tables/{game.table}/stop", headers=CSRF)) == "R-SEAT-3"
    after = http.get(f"/tables/{game.table}").json()
    assert (after["status"], len(after["deals"])) == ("playing", 1)

    next_deal.click()
    expect(host.get_by_role("status")).to_have_text("The next deal has started.")
    assert len(http.get(f"/tables/{game.table}").json()["deals"]) == 2
    expect(hosts_card.get_by_role("button", name="Next deal")).to_have_count(0)

    host.once("dialog", lambda dialog: dialog.accept())
    hosts_card.get_by_role("button", name="Stop the game").click()
    expect(host.get_by_role("status")).to_have_text("The game is stopped.")
    assert http.get(f"/tables/{game.table}").json()["status"] == "stopped"
    expect(hosts_card).to_have_count(0)
