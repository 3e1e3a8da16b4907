"""The replay (``/deals/{id}/replay``) and the audit (``/audit/deals/{id}``) pages in a real
browser (docs/web.md, "Replay and audit"): every step of a finished deal through the page's
controls, a shared step link, a spectator's replay without a hand; the auditor's clean verdict,
the broken link after a stored event is tampered with, and the refusal anyone else gets.

The deals are played over HTTP against the running server by the seeded random legal player
(``tests/support/http.py``); a browser signs in with ``POST /sessions`` and a player's token.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Backend
from tests.support.games import stacked_deck
from tests.support.http import Game, Headers, open_table, register_player, state_reader
from tests.support.store import sqlite_row, sqlite_tamper
from tests.web.conftest import PHONE, NewContext, screenshot, stacked_decks_server
from tests.web.pages import open_page, sign_in

pytestmark = pytest.mark.slow  # a browser and a server: part of `make test`, not `make test-fast`

AUDITOR = "audrey"
SUITS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
#: The deck and player seed of the shortest deal found (about 110 steps): the replay test
#: walks every step.
SHORT_SEED = 36
FITS = "() => document.scrollingElement.scrollWidth <= window.innerWidth"


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    """This module's server: ``audrey`` is an auditor (CANASTA_AUDITORS)."""
    yield from stacked_decks_server(tmp_path_factory, "replay-audit", CANASTA_AUDITORS=AUDITOR)


@dataclass
class Played:
    game: Game  # a deal on a shuffled deck, for the audit
    steps: int
    short: Game  # a short deal on a stacked deck, for the replay
    short_steps: int
    auditor: Headers
    outsider: Headers


def play(
    backend: Backend, http: httpx.Client, prefix: str, seed: int, stacked: bool = False
) -> Game:
    """A 2-player classic deal, played to its end over HTTP by the seeded random player; on
    a deck shuffled by the server, or (``stacked``) on one shuffled by ``seed``: then the
    whole deal is known in advance (ann deals)."""
    body = None
    if stacked:
        deck = stacked_deck(seed)
        body = {"deck": deck, "dealer": 0}
    game = open_table(http, [f"{prefix}-ann", f"{prefix}-bob"], start_body=body)
    game.play_deal(state_reader(backend.shadow()), random.Random(seed))
    return game


@pytest.fixture(scope="module")
def played(web_server: Backend) -> Iterator[Played]:
    """A finished deal (never tampered with), the auditor's and an outsider's headers."""
    with httpx.Client(base_url=web_server.server.url, timeout=30) as http:
        game = play(web_server, http, "r", seed=1)
        short = play(web_server, http, "s", seed=SHORT_SEED, stacked=True)
        yield Played(
            game,
            http.get(f"/deals/{game.deal_id}", headers=game.host).json()["step"],
            short,
            http.get(f"/deals/{short.deal_id}", headers=short.host).json()["step"],
            register_player(http, AUDITOR),
            register_player(http, "olga"),
        )


def card_text(code: str) -> str:
    face = code.split("/")[0]
    return {"BJ": "★", "LJ": "☆"}.get(face) or face[:-1] + SUITS[face[-1]]


SHOWN = """() => ({
    words: document.querySelector("#words").textContent,
    value: document.querySelector("#step").value,
    label: document.querySelector("label[for=step]").textContent,
    url: location.href,
})"""


def expect_step(page: Page, step: int, last: int) -> str:
    """The page shows ``step``: the view drawn for it, its words, the slider and the address
    (one wait and one read: the replay test does this for every step). Returns the words."""
    drawn = f"#view[data-step='{step}'] #deal .deal[data-step='{step}']"
    page.locator(drawn).wait_for(state="attached")
    shown = page.evaluate(SHOWN)
    assert shown["words"].startswith(f"Step {step}: "), shown
    assert shown["value"] == str(step) and shown["label"] == f"Step {step} of {last}", shown
    assert shown["url"].endswith(f"/replay?step={step}"), shown
    words: str = shown["words"]
    return words


# --- replay -------------------------------------------------------------------------------------


def test_every_step_of_a_finished_deal_renders_through_the_controls(
    new_context: NewContext, played: Played
) -> None:
    game, last = played.short, played.short_steps
    context = new_context()
    sign_in(context, game.headers[game.names[0]])
    events = context.request.get(
        f"/deals/{game.deal_id}/events", headers={"Accept": "application/json"}
    ).json()
    by_step = {event["step"]: event for event in events}
    page = open_page(context, f"/deals/{game.deal_id}/replay")
    expect_step(page, 1, last)
    dealer, cutter = (game.names[by_step[1][role]] for role in ("dealer", "cutter"))
    expect(page.locator("#words")).to_have_text(
        f"Step 1: Deal 1 of Classic begins: {dealer} deals, {cutter} cuts."
    )
    expect(page.get_by_role("button", name="Previous")).to_be_disabled()
    expect(page.get_by_role("link", name="Audit this deal")).to_be_hidden()  # not an auditor

    slider = page.get_by_role("slider")
    slider.focus()
    for step in range(2, last + 1):
        if step % 10 == 0 or step == last:
            page.get_by_role("button", name="Next").click()  # the buttons too
            if step < last:
                slider.focus()
        else:
            page.keyboard.press("ArrowRight")
        words = expect_step(page, step, last)
        assert "event_" not in words and "undefined" not in words, words
        event = by_step.get(step)
        if event is None:
            assert "secret" in words  # the shuffle: no public event at this step
        elif event["kind"] == "CardDiscarded":
            assert f"discarded {card_text(event['card'])}." in words, words
        elif event["kind"] == "PileTaken":  # and the hand cards melded with its top, if any
            top, melded = card_text(event["top"]), list(by_step[step + 1]["cards"])
            melded.remove(event["top"])
            mates = " with " + " ".join(map(card_text, melded)) if melded else ""
            size = "1 card" if event["size"] == 1 else f"{event['size']} cards"
            assert f"took the pile ({size}, {top} on top){mates}." in words, words
        elif event["kind"] == "CardsDrawn" and event["seat"] == 0:
            # his own draw, with its card(s): the player sees what he drew
            assert all(card_text(card) in words for card in event["cards"]), words
        if step == last // 2:
            expect(page.locator("#hand [data-card]").first).to_be_visible()
            expect(page.locator("#viewer-note")).to_contain_text("your own hand")
            screenshot(page, "replay-desktop")
    expect(page.locator("#words")).to_contain_text("The deal is over")
    expect(page.get_by_role("button", name="Next")).to_be_disabled()
    expect(slider).to_be_focused()  # the Next pressed last is disabled: the keys stay here
    page.keyboard.press("Home")
    expect_step(page, 1, last)
    page.keyboard.press("End")
    expect_step(page, last, last)
    page.get_by_role("button", name="Previous").click()
    expect_step(page, last - 1, last)

    # Every step is listed in words, and a step of the list opens it.
    page.get_by_text("Every step").click()
    expect(page.locator("#step-list li")).to_have_count(last)
    page.locator("#step-list li[data-step='3'] button").click()
    expect_step(page, 3, last)


def test_a_shared_step_link_opens_at_that_step(new_context: NewContext, played: Played) -> None:
    game, last = played.short, played.short_steps
    context = new_context()
    sign_in(context, game.headers[game.names[1]])
    step = last // 3
    page = open_page(context, f"/deals/{game.deal_id}/replay?step={step}")
    expect_step(page, step, last)
    page.get_by_role("button", name="Next").click()
    expect_step(page, step + 1, last)
    # A step past the end opens at the last one.
    page = open_page(context, f"/deals/{game.deal_id}/replay?step={last + 50}")
    expect_step(page, last, last)
    # "Back to the table": the table's page (it opened the deal's own page, /deals/{id}).
    page.get_by_role("link", name="Back to the table").click()
    expect(page).to_have_url(re.compile(f"/tables/{game.table}$"))
    expect(page.locator("body[data-ready=true]")).to_be_attached()
    expect(page.locator("#totals")).to_be_visible()


def test_a_spectator_replay_shows_no_hand_and_fits_a_phone(
    new_context: NewContext, played: Played
) -> None:
    game, last = played.short, played.short_steps
    context = new_context(viewport=PHONE)  # not signed in: a spectator
    page = context.new_page()
    answers: list[dict[str, Any]] = []
    page.on(
        "response",
        lambda r: answers.append(r.json()) if "/replay?step=" in r.url else None,
    )
    step = last // 2
    page.goto(f"/deals/{game.deal_id}/replay?step={step}")
    expect_step(page, step, last)
    expect(page.locator("#viewer-note")).to_contain_text("spectator")
    expect(page.locator("#hand [data-card]")).to_have_count(0)
    page.get_by_role("button", name="Next").click()
    expect_step(page, step + 1, last)
    assert answers and all(answer["hand"] is None for answer in answers)
    assert all(answer["seat"] is None for answer in answers)
    screenshot(page, "replay-phone")
    assert page.evaluate(FITS), page.evaluate("() => document.scrollingElement.scrollWidth")
    # A deal that does not exist: the server's refusal, not an empty page.
    page.goto("/deals/00000000-0000-4000-8000-000000000000/replay")
    expect(page.get_by_role("alert")).to_contain_text("This replay cannot be shown")
    expect(page.get_by_role("alert")).to_contain_text(re.compile(r"Refused: .+ \(\S+\)"))


# --- audit --------------------------------------------------------------------------------------


def test_the_audit_shows_a_clean_verdict_and_the_whole_history(
    new_context: NewContext, played: Played
) -> None:
    game, last = played.game, played.steps
    context = new_context()
    sign_in(context, played.auditor)
    page = open_page(context, f"/audit/deals/{game.deal_id}")
    expect(page.get_by_role("heading", name="Audit of deal 1")).to_be_visible()
    expect(page.locator("#verdict-summary")).to_have_text(re.compile("^The record checks out"))
    checks = page.locator("#checks li")
    expect(checks).to_have_count(4)  # the chain, the commitment, the rules, the signature
    expect(page.locator("#checks li.ok")).to_have_count(4)
    expect(checks.nth(0)).to_contain_text(f"whole, {last} events linked")
    expect(checks.nth(3)).to_contain_text("signed by the server's key ed25519:")
    expect(page.locator("#audit-events li.event")).to_have_count(last)
    expect(page.locator("#audit-events li.broken")).to_have_count(0)
    screenshot(page, "audit-clean", full_page=False)  # the top: the history is long
    expect(page.get_by_role("button", name="Go to the first broken link")).to_be_hidden()
    text = page.locator("#audit-events").inner_text()
    assert "event_" not in text and "undefined" not in text
    # The auditor's words name the cards a spectator never sees: every draw's card.
    expect(page.locator("#audit-events li[data-kind=CardsDealt] .words")).to_contain_text(
        "The cards were dealt: 15 to each player."
    )
    seed = page.locator("#card-facts code").nth(1).inner_text()
    expect(page.locator("#audit-events li[data-kind=DeckShuffled] .words")).to_have_text(
        f"The deck was shuffled with the seed {seed}."
    )
    draw = page.locator("#audit-events li[data-kind=CardsDrawn]").first
    expect(draw.locator(".words")).to_have_text(re.compile(r" drew [^a]"))
    # Every hand at the end, and on demand the record and every hand at a step.
    expect(page.locator("#card-facts")).to_contain_text(f"Every hand at step {last}")
    row = page.locator("#audit-events li[data-step='5']")
    row.get_by_text("The stored record and every hand at this step").click()
    expect(row.locator("pre.record")).to_contain_text('"step": 5')
    expect(row.locator(".state")).to_contain_text("Every hand at step 5")
    expect(row.locator(".state .hands [data-card]").first).to_be_visible()
    expect(page.get_by_role("link", name="Replay this deal")).to_have_attribute(
        "href", f"/deals/{game.deal_id}/replay"
    )
    page.get_by_role("link", name="Replay this deal").click()  # and back, from the replay
    expect(page.locator("#view[data-step='1']")).to_be_attached()
    expect(page.locator("#viewer-note")).to_contain_text("spectator")  # he sits at no seat
    page.get_by_role("link", name="Audit this deal").click()
    expect(page.locator("#verdict-summary")).to_have_text(re.compile("^The record checks out"))

    phone = open_page(new_context(viewport=PHONE), "/")  # the same page on a phone
    sign_in(phone.context, played.auditor)
    phone.goto(f"/audit/deals/{game.deal_id}")
    expect(phone.locator("#verdict-summary")).to_have_text(re.compile("^The record checks out"))
    assert phone.evaluate(FITS), phone.evaluate("() => document.scrollingElement.scrollWidth")


def test_the_audit_is_refused_to_a_non_auditor_and_to_a_signed_out_visitor(
    new_context: NewContext, played: Played
) -> None:
    path = f"/audit/deals/{played.game.deal_id}"
    signed_out = open_page(new_context(), path)
    refusal = signed_out.get_by_role("alert")
    expect(refusal).to_contain_text("The audit cannot be shown")
    expect(refusal).to_contain_text("(R-CMD-2)")
    expect(refusal).to_contain_text("sign in first")
    # The rule's line, not the API's words for a client without its token.
    expect(refusal).to_contain_text("you must be signed in to do this")
    expect(refusal).not_to_contain_text("bearer")
    expect(refusal.locator(".refusal-detail")).to_have_count(0)
    expect(signed_out.locator("#verdict")).to_be_hidden()

    context = new_context()
    sign_in(context, played.outsider)
    other = open_page(context, path)
    refusal = other.get_by_role("alert")
    expect(refusal).to_contain_text("auditing needs the auditor role")
    expect(refusal).to_contain_text("(R-VIEW-4)")
    expect(other.locator("#audit-events li")).to_have_count(0)
    # A player of the deal is no auditor either.
    context = new_context()
    sign_in(context, played.game.host)
    expect(open_page(context, path).get_by_role("alert")).to_contain_text("(R-VIEW-4)")


def tampered(web_server: Backend, played: Played, prefix: str) -> tuple[Game, int, str]:
    """A deal played on a stacked deck (the same deal every run) whose third discard is then
    rewritten in the SQLite file, as an intruder would, to a card another seat held: the
    game, the step rewritten and the card it now names."""
    with httpx.Client(base_url=web_server.server.url, timeout=30) as http:
        game = play(web_server, http, prefix, seed=3, stacked=True)
        db = Path(web_server.settings.sqlite_path)
        version, state = sqlite_row(db, game.deal_id, "CardDiscarded", 3)
        before = http.get(
            f"/audit/deals/{game.deal_id}/replay",
            params={"step": version - 1},
            headers=played.auditor,
        ).json()
    other = next(
        card
        for seat, hand in before["hands"].items()
        if int(seat) != state["seat"]
        for card in hand
    )
    sqlite_tamper(db, game.deal_id, version, json.dumps({**state, "card": other}).encode())
    return game, version, other


def test_a_tampered_event_fails_the_verdict_and_its_step_is_highlighted(
    new_context: NewContext, web_server: Backend, played: Played
) -> None:
    game, version, other = tampered(web_server, played, "t")
    auditor = played.auditor
    context = new_context()
    sign_in(context, auditor)
    page = open_page(context, f"/audit/deals/{game.deal_id}")
    expect(page.locator("#verdict-summary")).to_have_text(
        re.compile("^The record does not check out")
    )
    expect(page.locator("#checks li.bad")).to_have_count(2)  # the chain and the rules
    expect(page.locator("#checks")).to_contain_text(f"Hash chain: broken at step {version}.")
    expect(page.locator("#checks")).to_contain_text(f"Rules re-decided: step {version} disagrees")
    broken = page.locator("#audit-events li.broken")
    expect(broken).to_have_count(1)
    expect(broken).to_have_attribute("data-step", str(version))
    expect(broken).to_be_in_viewport()  # scrolled to
    expect(broken).to_be_focused()
    expect(broken).to_contain_text("The first broken link")
    expect(broken).to_contain_text("The hash chain breaks here")
    expect(broken).to_contain_text("R-CMD-3")
    expect(broken.locator(".compare")).to_contain_text("What the rules record")
    expect(broken.locator(".compare")).to_contain_text("What the store holds")
    expect(broken.locator(".compare")).to_contain_text("Nothing: the rules refuse this command")
    expect(broken.locator(".words")).to_contain_text(f"discarded {card_text(other)}.")
    expect(page.locator("#fold-error")).to_contain_text("does not fold")
    screenshot(page, "audit-tampered", full_page=False)  # at the broken link
    # Scrolled away and back with the button.
    page.evaluate("() => window.scrollTo(0, 0)")
    page.get_by_role("button", name="Go to the first broken link").click()
    expect(broken).to_be_in_viewport()

    phone = new_context(viewport=PHONE)
    sign_in(phone, auditor)
    page = open_page(phone, f"/audit/deals/{game.deal_id}")
    expect(page.locator("#audit-events li.broken")).to_be_in_viewport()
    screenshot(page, "audit-tampered-phone", full_page=False)
    assert page.evaluate(FITS), page.evaluate("() => document.scrollingElement.scrollWidth")


def test_a_tampered_event_s_audit_is_said_in_chinese(
    new_context: NewContext, web_server: Backend, played: Played
) -> None:
    """What the audit found was the server's English on every page: "按规则重新判定：第9步
    不一致：the rules refuse seat 1: ...: R-CMD-3 you do not hold K♠", "所存事件无法继续折叠：
    step 9 (CardDiscarded) does not fold: ...". Each finding now comes with its key and
    params (``worded``), and the page says it, and the rules' refusal it quotes, in Chinese;
    the state at that step, which the store cannot fold to (409 R-HIST-1), too."""
    game, version, other = tampered(web_server, played, "z")
    context = new_context()
    sign_in(context, played.auditor)
    page = open_page(context, f"/audit/deals/{game.deal_id}")
    checks = page.locator("#checks")
    expect(checks).to_contain_text("the rules refuse")  # English first
    page.locator("#lang").select_option("zh")
    expect(page.locator("html")).to_have_attribute("lang", "zh")
    expect(checks).to_contain_text(f"按规则重新判定：第{version}步不一致：规则拒绝 seat ")
    expect(checks).to_contain_text(f"R-CMD-3 你手里没有 {card_text(other)}")
    broken = page.locator("#audit-events li.broken")
    expect(broken).to_contain_text(f"R-CMD-3 你手里没有 {card_text(other)}")
    fold_error = page.locator("#fold-error")
    expect(fold_error).to_contain_text(
        f"所存事件无法继续折叠：第 {version} 步（CardDiscarded）无法折叠："
    )
    for shown in (checks, broken.locator(".broken-note"), fold_error):
        expect(shown).not_to_contain_text("the rules refuse")
        expect(shown).not_to_contain_text("does not fold")
        expect(shown).not_to_contain_text("you do not hold")
    # The state at the broken step: the store does not fold to it (409 R-HIST-1).
    broken.locator("details summary").click()
    state_box = broken.locator(".state")
    expect(state_box).to_contain_text("（R-HIST-1）")
    expect(state_box).to_contain_text(f"存储的历史记录无法折叠到第 {version} 步：")
    screenshot(page, "audit-tampered-zh", full_page=False)


# --- the words ----------------------------------------------------------------------------------

DESCRIBE = """async ([events, names]) => {
    const { describeEvent } = await import("/web/words.js");
    return events.map(([event, next]) => describeEvent(event, names, next));
}"""


def test_events_in_words_say_what_the_viewer_may_see(
    new_context: NewContext, played: Played
) -> None:
    page = open_page(new_context(), f"/deals/{played.short.deal_id}/replay?step=1")
    nine = {"step": 7, "kind": "MeldLaid", "seat": 1, "side": "B", "rank": "9"}
    cases = [
        ({"step": 5, "kind": "CardsDrawn", "seat": 1, "count": 1, "replacement": False}, None),
        ({"step": 5, "kind": "CardsDrawn", "seat": 0, "count": 2, "replacement": False}, None),
        (
            {"step": 5, "kind": "CardsDrawn", "seat": 0, "count": 1, "replacement": True}
            | {"cards": ["7D/1"]},
            None,
        ),
        (
            {"step": 6, "kind": "PileTaken", "seat": 1, "top": "9H/1", "size": 7},
            nine | {"cards": ["9C/1", "9H/1", "9D/2"]},
        ),
        ({"step": 6, "kind": "PileTaken", "seat": 1, "top": "9H/1", "size": 1}, None),
        ({"step": 6, "kind": "MeldLaid", "seat": 1} | {"cards": ["QH/1", "QC/1", "QS/2"]}, None),
        ({"step": 8, "kind": "CardDiscarded", "seat": 2, "card": "7D/1"}, None),
        ({"step": 3, "kind": "CardTurnedUp", "card": "BJ/1", "crosswise": True}, None),
        ({"step": 9, "kind": "PartnerAsked", "seat": 0, "partner": 2}, None),
        (
            {"step": 9, "kind": "DealScored", "reason": "went_out"}
            | {"scores": {"A": {"total": 1200}, "B": {"total": -35}}},
            None,
        ),
        ({"step": 9, "kind": "MeldLaid", "seat": 1, "cards": 7}, None),  # a forged record
    ]
    names = ["Ann", "Bob", None, "Dan"]
    assert page.evaluate(DESCRIBE, [cases, names]) == [
        "Bob drew a card.",  # a spectator's view: no card
        "Ann drew 2 cards.",
        "Ann drew 7♦ to replace a red three.",  # the drawer's own view: his card
        "Bob took the pile (7 cards, 9♥ on top) with 9♣ 9♦.",
        "Bob took the pile (1 card, 9♥ on top).",
        "Bob melded Q♥ Q♣ Q♠.",
        "Seat 3 discarded 7♦.",
        "The pile was started with ★, laid crosswise: the pile is frozen.",
        "Ann asked seat 3: may I go out?",
        "The deal is over (a player went out): Side A 1200, Side B -35.",
        "A MeldLaid event at step 9 that cannot be read.",
    ]
    page.get_by_label("Language").select_option("zh")
    expect(page.locator("html")).to_have_attribute("lang", "zh")
    assert page.evaluate(DESCRIBE, [cases[6:7], names]) == ["3号座位弃出7♦。"]
    expect(page.locator("#words")).to_contain_text("第1步：")  # the page redrew its words


def test_the_replay_and_the_audit_name_each_seat_as_it_was_played_at_that_step(
    new_context: NewContext, web_server: Backend, played: Played
) -> None:
    """A seat given to another player mid-deal (docs/tables.md, absent players): the replay's
    and the audit's earlier steps name the player who played the seat then, as the table
    page's log does, not the one who sits there now."""
    with httpx.Client(base_url=web_server.server.url, timeout=30) as http:
        game = open_table(
            http, ["n-ann", "n-bob"], start_body={"deck": stacked_deck(SHORT_SEED), "dealer": 0}
        )
        register_player(http, "n-eve")
        view = http.get(f"/deals/{game.deal_id}").json()
        assert view["cutter"] == 1  # n-bob cuts
        expect_now = {"game": game.table, "deal": 1, "step": view["step"], "turn": None}
        cut = http.post(
            f"/deals/{game.deal_id}/commands",
            json={
                "seq": 1,
                "expect": {**expect_now, "phase": view["phase"]},
                "command": {"type": "cut", "n": 20},
            },
            headers=game.headers["n-bob"],
        )
        assert cut.status_code == 200, cut.text
        assert http.post(f"/tables/{game.table}/leave", headers=game.headers["n-bob"]).is_success
        given = http.post(
            f"/tables/{game.table}/seats/1/give", json={"player": "n-eve"}, headers=game.host
        )
        assert given.status_code == 200, given.text
        last = http.get(f"/deals/{game.deal_id}").json()["step"]

    page = open_page(new_context(), f"/deals/{game.deal_id}/replay?step=3")
    expect_step(page, 3, last)
    expect(page.locator("#words")).to_have_text("Step 3: n-bob cut the deck, lifting 20.")
    seat = page.locator("#deal li[data-seat='1'] .seat-name")
    expect(seat).to_contain_text("n-bob")
    page.get_by_role("button", name="Last").click()
    expect_step(page, last, last)
    expect(seat).to_contain_text("n-eve")

    auditor = new_context()
    sign_in(auditor, played.auditor)
    audit = open_page(auditor, f"/audit/deals/{game.deal_id}")
    expect(audit.locator("#audit-events li[data-step='3'] .words")).to_have_text(
        "n-bob cut the deck, lifting 20."
    )
