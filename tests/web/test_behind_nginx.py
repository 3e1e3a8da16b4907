"""The pages behind the deployment kit's nginx (``deploy/nginx/canasta.conf``, docs/deployment.md),
over HTTPS and HTTP/2 as a browser meets a production server: a player signs up in the lobby
(his session cookie is Secure), plays by clicking (his commands carry the cookie and the CSRF
header through the proxy), and a spectator's page follows the deal live, every log line once."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.e2e.client import Api, Player, play_from_menu
from tests.e2e.conftest import Backend, make_backend, running
from tests.e2e.nginx import Nginx, nginx_in_front
from tests.web.conftest import DESKTOP, PAGE_WAIT_MS, screenshot
from tests.web.pages import goto_ready, open_lobby, sign_up

pytestmark = pytest.mark.slow  # a browser, nginx and a server: part of `make test`


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Backend, Nginx]]:
    workdir = tmp_path_factory.mktemp("behind-nginx")
    (workdir / "server").mkdir()
    for backend in running(make_backend("sqlite", workdir / "server")):
        with nginx_in_front(workdir / "nginx", backend.server.port) as nginx:
            yield backend, nginx


def https_context(browser: Browser, nginx: Nginx) -> BrowserContext:
    """A person's browser on the site (it trusts the test's certificate)."""
    context = browser.new_context(
        base_url=nginx.url, viewport=DESKTOP, locale="en-GB", ignore_https_errors=True
    )
    context.set_default_timeout(PAGE_WAIT_MS)
    return context


def menu_types(api: Api, player: Player, deal: str) -> tuple[set[str], int]:
    """The types of the player's moves now, and the step of the deal they are for."""
    menu = api.call("GET", f"/deals/{deal}/moves", player=player, expect=200).json()
    return {move["type"] for move in menu["moves"]}, menu["expect"]["step"]


def click_a_move(page: Page, types: set[str], step: int) -> bool:
    """ann's move by clicking, when it is a draw or a discard (of her first card). The hand
    is counted once her page shows the deal at ``step`` (the menu's): a page still showing
    an earlier step (the hands not dealt yet, a draw not drawn) would be counted wrong, and a
    draw then seemed drawn at the first redraw."""
    if types & {"draw", "discard"}:
        expect(page.locator(f'#deal .deal[data-step="{step}"]')).to_be_attached()
    if "draw" in types:
        before = page.locator("#hand [data-card]").count()
        page.locator('#moves [data-move="draw"]').click()
        expect(page.locator("#hand [data-card]")).not_to_have_count(before)
        return True
    if "discard" in types:
        before = page.locator("#hand [data-card]").count()
        page.locator("#hand [data-card]").first.click()
        page.locator('#moves [data-move="discard"]').click()
        expect(page.locator("#hand [data-card]")).to_have_count(before - 1)
        return True
    return False


def test_a_player_and_a_spectator_through_nginx_over_https(
    browser: Browser, site: tuple[Backend, Nginx]
) -> None:
    _backend, nginx = site
    ann_context = https_context(browser, nginx)
    ann_page, _ = open_lobby(ann_context)
    ann = Player("ann", sign_up(ann_page, "ann"))
    session = next(c for c in ann_context.cookies() if c["name"] == "canasta_session")
    assert session["secure"] and session["httpOnly"], session

    api = Api(nginx.url)
    api.http.close()
    api.http = nginx.client()
    bob = api.register("bob")
    table = api.seated_table([ann, bob])
    goto_ready(ann_page, f"/tables/{table}")
    deal = api.start(ann, table)
    expect(ann_page.locator(f'#deal .deal[data-deal="{deal}"]')).to_be_attached()
    watcher = https_context(browser, nginx).new_page()
    goto_ready(watcher, f"/deals/{deal}")

    rng = random.Random(5)
    clicked = 0
    for _ in range(40):
        if clicked >= 4:
            break
        types, at = menu_types(api, ann, deal)
        if click_a_move(ann_page, types, at):
            clicked += 1
        elif types:
            play_from_menu(api, ann, deal, rng)  # a cut, a meld...: through the API
        else:
            assert play_from_menu(api, bob, deal, rng)
        step = int(api.events(deal)[-1]["step"])  # the last step a spectator may see
        expect(watcher.locator(f'#log li[data-step="{step}"]')).to_be_attached()
    assert clicked >= 4, "ann never got to draw and discard twice"
    screenshot(watcher, "behind-nginx-spectator")
    screenshot(ann_page, "behind-nginx-player")

    # The spectator's page followed every step it may see, each once and in order, and
    # shows no hand.
    steps: list[Any] = watcher.locator("#log li").evaluate_all(
        "nodes => nodes.map(n => Number(n.dataset.step))"
    )
    public = [int(event["step"]) for event in api.events(deal)]
    assert steps == public, (steps, public)
    assert watcher.locator("#hand").count() == 0
    api.close()
