"""The dry run, ``POST /deals/{id}/commands/check`` (docs/dry_run.md; R-CMD-1, R-VIEW-1..4,
R-INIT-1): accepted and refused commands answered as documented, with nothing recorded; the
same answer whatever the cards hidden from the requester are (two deals stacked to differ
only in those cards); the points and minimum of an initial meld; the command lane leaves the
route alone. The same on real servers, SQLite and PostgreSQL: tests/e2e/test_dry_run.py."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient

from app.application import CanastaApp
from app.settings import Settings, eventsourcing_env
from domain import commands as c
from domain import deal_events as ev
from domain.cards import CARDS
from domain.errors import RuleViolation
from domain.legal import candidates, legal_command, seat_to_act
from domain.rules import decide
from domain.state import DealState
from tests.api.test_command_lane import lane_of
from tests.e2e.server import CARD_PATTERN
from tests.support.games import seated_table, stacked_deck
from tests.support.http import PLAYERS, Game, open_table, state_reader

Client = Callable[..., TestClient]
#: What differs between two deals whatever their cards: their ids and seed commitments.
IDS = ("id", "table", "commitment")


def stacked(make_client: Client, deck: list[str], **start: Any) -> tuple[Game, TestClient]:
    """A four-player classic game on a fresh in-memory server set up for tests, its first
    deal dealt from ``deck`` with seat 0 dealing (so seat 1 cuts)."""
    http = make_client(allow_stacked_decks=True)
    return open_table(http, start_body={"deck": deck, "dealer": 0, **start}), http


def state(http: TestClient, game: Game) -> DealState:
    """The deal's real state: the test's knowledge, never shown to a player."""
    canasta: CanastaApp = http.app.state.canasta  # type: ignore[attr-defined]
    return state_reader(canasta)(game.deal_id)


def turn(http: TestClient, game: Game) -> int:
    seat = state(http, game).turn
    assert seat is not None
    return seat


def own_view(game: Game, name: str) -> dict[str, Any]:
    view = game.http.get(f"/deals/{game.deal_id}", headers=game.headers[name]).json()
    return {k: v for k, v in view.items() if k not in IDS}


def hidden_from(game: Game, st: DealState, seat: int) -> list[str]:
    """The cards ``seat`` may not see now (R-VIEW-1, R-VIEW-4): the stock, the other
    players' hands, every ponytail, less every card the deal's public history ever showed
    (a discard taken with the pile is in the taker's hand, but everybody saw it). Red threes
    are left out, so that a permutation of the rest lays them exactly where it did."""
    events = game.http.get(f"/deals/{game.deal_id}/events", params={"as": "spectator"})
    public = set(CARD_PATTERN.findall(events.text))
    cards = [*st.stock, *(c for s in st.order if s != seat for c in st.hands[s])]
    cards += [c for pony in st.ponytails for c in pony]
    return [c for c in cards if not CARDS[c].is_red_three and c not in public]


def permuted(deck: list[str], hidden: list[str]) -> list[str]:
    """``deck`` with the ``hidden`` cards moved one place along among themselves: every one
    of them is somewhere else, every other card where it was."""
    order = sorted(hidden)
    moved = dict(zip(order, order[1:] + order[:1], strict=True))
    return [moved.get(card, card) for card in deck]


def replay(game: Game, commands: list[tuple[int, c.Command]]) -> None:
    for seat, command in commands:
        response = game.send(game.names[seat], command)
        assert response.status_code == 200, response.text


def twin_deals(
    make_client: Client, deck: list[str], commands: list[tuple[int, c.Command]], seat: int
) -> list[Game]:
    """Two games whose first deals are the same for ``seat`` after ``commands``, and differ
    in every card hidden from him then; checked through his own view."""
    first, http = stacked(make_client, deck)
    replay(first, commands)
    other = permuted(deck, hidden_from(first, state(http, first), seat))
    assert other != deck
    second, _ = stacked(make_client, other)
    replay(second, commands)
    name = first.names[seat]
    assert own_view(first, name) == own_view(second, name)
    return [first, second]


# --- accepted and refused ---------------------------------------------------------------------


def test_an_accepted_dry_run_tells_the_events_as_the_sender_would_see_them(
    make_client: Client,
) -> None:
    game, http = stacked(make_client, stacked_deck(1))
    assert game.send("bob", c.Cut(40)).status_code == 200  # seat 1 cuts
    seat = turn(http, game)
    name = game.names[seat]
    assert game.send(name, c.Draw()).status_code == 200
    card = next(card for card in state(http, game).hands[seat] if not CARDS[card].is_red_three)
    step = own_view(game, name)["step"]
    answer = game.check(name, c.Discard(card))
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "accepted": True,
        "step": step + 1,
        "events": [
            {"step": step + 1, "kind": "CardDiscarded", "seat": seat, "card": card},
        ],
        "undisclosed": None,
        "points": None,
        "minimum": None,
    }
    # the command itself then records exactly that
    sent = game.send(name, c.Discard(card)).json()
    assert sent["step"] == step + 1 and sent["events"] == answer.json()["events"]


def test_a_refused_dry_run_answers_200_with_the_code_the_command_would_get(
    make_client: Client,
) -> None:
    game, _http = stacked(make_client, stacked_deck(2))
    url = f"/deals/{game.deal_id}/commands/check"
    not_yours = game.check("ann", c.Cut(10))  # seat 1 cuts (R-TURN-1)
    assert not_yours.status_code == 200
    assert not_yours.json()["accepted"] is False
    assert not_yours.json()["error"]["code"] == "R-TURN-1"
    too_deep = game.check("bob", c.Cut(108))  # 108 cards: 1 to 107 (R-DEAL-4)
    assert too_deep.json()["error"]["code"] == "R-DEAL-4"
    stale = game.request("bob", c.Cut(10), None)
    stale["expect"]["step"] += 1  # R-CMD-1: a stale expect, reported the same way
    answer = game.http.post(url, json=stale, headers=game.headers["bob"])
    assert answer.status_code == 200
    assert answer.json()["accepted"] is False
    assert answer.json()["error"]["code"] == "R-CMD-1"
    assert "step" in answer.json()["error"]["message"]
    # what is not a command of a seated player is refused as the command route refuses it
    body = game.request("bob", c.Cut(10), None)
    assert game.http.post(url, json=body).status_code == 401
    stranger = game.http.post("/players", json={"name": "zed"}).json()["token"]
    refused = game.http.post(url, json=body, headers={"Authorization": f"Bearer {stranger}"})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "R-CMD-2"
    bad = game.http.post(url, json={**body, "command": {"type": "fly"}}, headers=game.host)
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "malformed"
    nowhere = f"/deals/{'0' * 32}/commands/check"
    assert game.http.post(nowhere, json=body, headers=game.host).status_code == 404
    # and none of it changed the deal
    assert own_view(game, "bob")["step"] == 2 and own_view(game, "bob")["phase"] == "cut"


def test_a_refused_dry_run_s_error_is_the_command_s_field_for_field(make_client: Client) -> None:
    """docs/dry_run.md: refused "with the code, message, key and params the command itself
    would get"; a refusal without a key (R-CMD-1, seq_too_far) has neither field in the
    command's answer (docs/api.md), and so none in the dry run's either (it answered
    ``"key": null, "params": null``, so a client testing for the key met two shapes). Only
    ``points`` and ``minimum`` are the dry run's own, null but for a short initial meld."""
    game, _http = stacked(make_client, stacked_deck(2))
    check, commands = (f"/deals/{game.deal_id}/commands{tail}" for tail in ("/check", ""))
    stale = game.request("bob", c.Cut(10), None)
    stale["expect"]["step"] += 1
    cases = {
        "R-TURN-1": ("ann", game.request("ann", c.Cut(10), None), 400),  # seat 1 cuts
        "R-DEAL-4": ("bob", game.request("bob", c.Cut(108), None), 400),  # 1 to 107
        "R-CMD-1": ("bob", stale, 409),
        "seq_too_far": ("bob", {**game.request("bob", c.Cut(10), None), "seq": 5000}, 409),
    }
    seqs = {"ann": 0, "bob": 0}
    for code, (name, body, status) in cases.items():
        dry_run = game.http.post(check, json=body, headers=game.headers[name]).json()
        assert dry_run["accepted"] is False
        error = dry_run["error"]
        assert error.pop("points") is None and error.pop("minimum") is None, code
        if code != "seq_too_far":
            seqs[name] += 1
        sent = {"seq": seqs[name], **body} if code != "seq_too_far" else body
        refused = game.http.post(commands, json=sent, headers=game.headers[name])
        assert refused.status_code == status, refused.text
        assert refused.json()["error"]["code"] == code
        assert error == refused.json()["error"], code
        assert error.get("key", "absent") is not None, code  # absent or a key: never null


def test_a_dry_run_checks_a_given_seq_as_the_command_would_and_uses_none(
    make_client: Client,
) -> None:
    game, http = stacked(make_client, stacked_deck(3))
    table = f"/tables/{game.table}"
    assert game.check("bob", c.Cut(10), seq=1).json()["accepted"] is True
    assert game.check("bob", c.Cut(10), seq=1000).json()["accepted"] is True
    far = game.check("bob", c.Cut(10), seq=1001).json()  # more than 1000 above 0
    assert far["accepted"] is False and far["error"]["code"] == "seq_too_far"
    assert game.http.get(table, headers=game.headers["bob"]).json()["your_last_seq"] == 0
    assert game.send("bob", c.Cut(10)).status_code == 200  # seq 1: still unused
    bob_draws = game.check("bob", c.Draw(), seq=2)  # the dealer's left (bob) plays first
    assert bob_draws.json()["accepted"] is True, bob_draws.text
    assert state(http, game).turn == 1
    again = game.check("bob", c.Draw(), seq=1).json()  # bob's seq 1 is used now
    assert again["accepted"] is False and again["error"]["code"] == "R-CMD-1"


# --- secrecy: the same answer whatever the cards hidden from the requester are --------------


def test_a_dry_run_cut_tells_the_same_whatever_the_deck_holds(make_client: Client) -> None:
    answers, reals = [], []
    for seed in (4, 5):  # before the cut every card is hidden from the cutter
        game, _http = stacked(make_client, stacked_deck(seed))
        answer = game.check("bob", c.Cut(30))
        assert answer.status_code == 200, answer.text
        answers.append(answer.json())
        reals.append(game.send("bob", c.Cut(30)).json())
    assert answers[0] == answers[1]
    assert answers[0]["accepted"] is True
    assert answers[0]["step"] is None  # red threes and turned-up cards decide it
    assert answers[0]["events"] == [{"step": 3, "kind": "DeckCut", "seat": 1, "n": 30}]
    assert answers[0]["undisclosed"] == {
        "step": 4,
        "kind": "CardsDealt",
        "seat": None,
        "count": None,
        "counts": {"0": 11, "1": 11, "2": 11, "3": 11},
        "replacement": None,
        "reason": None,
    }
    assert reals[0] != reals[1]  # the cut itself shows bob the cards dealt to him


def test_a_dry_run_draw_tells_the_same_whatever_the_hidden_cards_are(
    make_client: Client,
) -> None:
    deck = stacked_deck(6)
    first, http = stacked(make_client, deck)
    assert first.send("bob", c.Cut(25)).status_code == 200
    seat = turn(http, first)
    games = twin_deals(make_client, deck, [(1, c.Cut(25))], seat)
    name = games[0].names[seat]
    answers = [game.check(name, c.Draw()).json() for game in games]
    assert answers[0] == answers[1]
    assert answers[0]["accepted"] is True and answers[0]["events"] == []
    assert answers[0]["step"] is None
    undisclosed = answers[0]["undisclosed"]
    assert (undisclosed["kind"], undisclosed["seat"], undisclosed["count"]) == (
        "CardsDrawn",
        seat,
        1,
    )
    reals = [game.send(name, c.Draw()).json() for game in games]
    assert reals[0] != reals[1]  # the draw itself shows him the card he drew


def test_a_dry_run_draw_does_not_tell_whether_a_red_three_would_be_laid(
    make_client: Client,
) -> None:
    """R-DRAW-2: a red three drawn is laid and replaced at once, so the real draw's answer
    tells it; the dry run's is the same whether the stock's top card is a red three or not."""
    for seed in range(20):
        deck = stacked_deck(300 + seed)
        first, http = stacked(make_client, deck)
        assert first.send("bob", c.Cut(33)).status_code == 200
        st = state(http, first)
        top = st.stock[-1]
        wanted = not CARDS[top].is_red_three  # swap the top for a card of the other kind
        other = [x for x in st.stock[:-1] if CARDS[x].is_red_three == wanted]
        if other:
            break
    else:
        raise AssertionError("no deck with a red three left in the stock")
    swap = {top: other[0], other[0]: top}
    second, _ = stacked(make_client, [swap.get(card, card) for card in deck])
    assert second.send("bob", c.Cut(33)).status_code == 200
    name = first.names[turn(http, first)]
    assert own_view(first, name) == own_view(second, name)
    games = [first, second]
    answers = [game.check(name, c.Draw()).json() for game in games]
    assert answers[0] == answers[1]
    reals = [game.send(name, c.Draw()).json()["events"] for game in games]
    laid = [any(e["kind"] == "RedThreeLaid" for e in events) for events in reals]
    assert sorted(laid) == [False, True]  # one real draw laid a red three, the other did not


def going_out_deal(
    limit: int = 60,
) -> tuple[list[str], list[tuple[int, c.Command]], int, c.Command]:
    """A deck and the random legal commands after which a player may go out by melding and
    discarding: (deck, commands, his seat, the going out). Searched on a scratch
    application; the engine is deterministic, so the result is always the same."""
    canasta = CanastaApp(
        env=eventsourcing_env(Settings(database_url="memory")), allow_stacked_decks=True
    )
    names = list(PLAYERS[:4])
    try:
        for seed in range(limit):
            table = seated_table(canasta, names)
            deck = stacked_deck(100 + seed)
            deal_id = canasta.start_game(table, names[0], dealer=0, deck=deck)
            rng = random.Random(seed)
            sent: list[tuple[int, c.Command]] = []
            while (actor := seat_to_act(st := canasta.get_deal(deal_id).state)) is not None:
                for command in candidates(st, actor, rng):
                    if not isinstance(command, c.Meld) or command.discard is None:
                        continue
                    try:
                        events = decide(st, actor, command)
                    except RuleViolation:
                        continue
                    if any(isinstance(e, ev.WentOut) for e in events):
                        return deck, sent, actor, command
                command = legal_command(st, actor, rng)
                sent.append((actor, command))
                canasta.act(deal_id, names[actor], command)
    finally:
        canasta.close()
    raise AssertionError(f"no going out in {limit} deals")


def test_a_dry_run_going_out_reveals_no_hand_through_the_scores(make_client: Client) -> None:
    deck, commands, seat, going_out = going_out_deal()
    games = twin_deals(make_client, deck, commands, seat)
    name = games[0].names[seat]
    answers = [game.check(name, going_out).json() for game in games]
    assert answers[0] == answers[1]
    answer = answers[0]
    assert answer["accepted"] is True and answer["step"] is None
    assert answer["events"][-2]["kind"] == "CardDiscarded"
    assert answer["events"][-1]["kind"] == "WentOut"
    assert answer["undisclosed"]["kind"] == "DealScored"
    assert answer["undisclosed"]["reason"] == "went_out"
    assert "scores" not in answer["undisclosed"]
    reals = [game.send(name, going_out).json() for game in games]
    assert reals[0]["events"][:-1] == answer["events"]  # all but the score, as told
    assert reals[0]["events"][-1]["kind"] == "DealScored"
    assert reals[0]["events"][-1] != reals[1]["events"][-1]  # the hands differed


# --- the initial meld's points and minimum ----------------------------------------------------


def opening_meld(game: Game, http: TestClient) -> tuple[str, c.Command, int]:
    """After the cut and a draw: the player to act and a meld of three naturals of one rank
    from his hand (his own cards: he may see them), with its points (R-CARD-3)."""
    assert game.send("bob", c.Cut(20)).status_code == 200
    name = game.names[turn(http, game)]
    assert game.send(name, c.Draw()).status_code == 200
    hand = game.http.get(f"/deals/{game.deal_id}", headers=game.headers[name]).json()["hand"]
    by_rank: dict[str, list[str]] = {}
    for card in hand:
        if CARDS[card].is_natural:
            by_rank.setdefault(CARDS[card].rank, []).append(card)
    triple = next(cards[:3] for cards in by_rank.values() if len(cards) >= 3)
    return name, c.Meld((c.MeldSpec(tuple(triple)),)), sum(CARDS[x].value for x in triple)


def deck_with_a_triple(make_client: Client) -> list[str]:
    """A deck whose first player holds three naturals of a rank after his first draw."""
    for seed in range(50):
        deck = stacked_deck(200 + seed)
        game, http = stacked(make_client, deck)
        try:
            opening_meld(game, http)
        except StopIteration:
            continue
        return deck
    raise AssertionError("no deck found")


def test_an_initial_meld_short_of_the_minimum_tells_its_points_and_the_minimum(
    make_client: Client,
) -> None:
    deck = deck_with_a_triple(make_client)
    high = {"scores_before": {"A": 3000, "B": 3000}}  # R-INIT-1: 120 from 3000
    game, http = stacked(make_client, deck, **high)
    name, meld, points = opening_meld(game, http)
    assert points < 120
    answer = game.check(name, meld)
    assert answer.status_code == 200
    error = answer.json()["error"]
    assert (error["code"], error["points"], error["minimum"]) == ("R-INIT-1", points, 120)
    said = {"points": points, "minimum": 120}
    assert (error["key"], error["params"]) == ("init.short", said)  # docs/api.md, "Errors"
    assert error["message"] == f"the initial meld counts {points}; this side needs at least 120"
    refused = game.send(name, meld)  # the command is refused the same way
    assert refused.status_code == 400
    assert refused.json()["error"] == {k: error[k] for k in ("code", "message", "key", "params")}

    low = {"scores_before": {"A": -10, "B": -10}}  # R-INIT-1: 15 below 0
    game, http = stacked(make_client, deck, **low)
    name, meld, points = opening_meld(game, http)
    answer = game.check(name, meld).json()
    assert answer["accepted"] is True
    assert (answer["points"], answer["minimum"]) == (points, 15)
    assert answer["events"][0]["kind"] == "MeldLaid"
    assert answer["step"] == own_view(game, name)["step"] + 1
    assert game.send(name, meld).json()["events"] == answer["events"]


# --- the command lane ---------------------------------------------------------------------


def test_the_command_lane_leaves_dry_runs_to_their_route(make_client: Client) -> None:
    game, http = stacked(make_client, stacked_deck(7))
    lane = lane_of(http)
    assert lane is not None
    assert game.send("bob", c.Cut(12)).status_code == 200  # the lane's kind of request
    answered = lane.answered
    name = game.names[turn(http, game)]
    step = own_view(game, name)["step"]
    body = game.request(name, c.Draw(), game.seqs.get(name, 0) + 1)
    answer = http.post(
        f"/deals/{game.deal_id}/commands/check", json=body, headers=game.headers[name]
    )
    assert answer.status_code == 200
    assert answer.json()["accepted"] is True and "replayed" not in answer.json()
    assert lane.answered == answered
    assert own_view(game, name)["step"] == step
    assert state(http, game).phase == "draw"  # nothing drawn
    assert game.send(name, c.Draw()).status_code == 200  # under the seq the dry run named
