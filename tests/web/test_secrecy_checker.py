"""The spectator-secrecy checker of ``tests/web/secrecy.py`` itself: it finds nothing in what
the real server gives a spectator at each step of the scripted deal, and it catches a
planted leak (a seated player's own view, a hand card written into a text by its code or
its spoken name in either language, a card shown before its time). Not a browser test."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import make_client  # noqa: F401 (the fixture, shared, not copied)
from tests.support.http import Game, register_player
from tests.web.deals import classic_four, play_step, start_table
from tests.web.secrecy import Secrets, Seen, cards_in, read_history, step_of

AUDITOR = "audrey"
#: The client, the game, what the spectator and each seat got, and the auditor's history.
Played = tuple[TestClient, Game, list[Seen], dict[int, list[Seen]], Secrets]


@pytest.fixture
def played(
    make_client: Callable[..., TestClient],  # noqa: F811
) -> Played:
    """The scripted deal played to its end; what a spectator (no token) and each seated
    player got from ``GET /deals/{id}`` and ``/events`` before the cut and after each move;
    and the auditor's history."""
    http = make_client(allow_stacked_decks=True, auditors=[AUDITOR])
    auditor = register_player(http, AUDITOR)
    deal = classic_four()
    game = start_table(http, deal)
    spectator: list[Seen] = []
    players: dict[int, list[Seen]] = {seat: [] for seat in range(deal.players)}

    def look() -> None:
        for path in (f"/deals/{game.deal_id}", f"/deals/{game.deal_id}/events"):
            body = http.get(path).text
            spectator.append(Seen(step_of(body) or 0, body, f"GET {path}"))
            for seat, name in enumerate(game.names):
                mine = http.get(path, headers=game.headers[name]).text
                players[seat].append(Seen(step_of(mine) or 0, mine, f"seat {seat}: GET {path}"))

    look()
    for step in deal.steps:
        play_step(http, game, step)
        look()
    return http, game, spectator, players, read_history(http, game.deal_id, auditor)


def test_the_spectators_answers_hold_no_hidden_card(played: Played) -> None:
    http, game, spectator, players, secrets = played
    assert secrets.last_step == step_of(http.get(f"/deals/{game.deal_id}").text)
    assert spectator and all(seen.step >= 1 for seen in spectator)
    assert secrets.violations(spectator) == []
    # Public cards are there to be seen: the checker does see cards in the answers.
    view, events = spectator[-2], spectator[-1]  # the deal and its events at the end
    assert {"AS/1", "3H/1", "KS/2", "9C/2"} <= set(cards_in(view.text, secrets.cards))
    assert {"5H/1", "JS/1", "AS/1", "3H/1"} <= set(cards_in(events.text, secrets.cards))
    # Each player may see his own cards, and sees them.
    for seat, seen in players.items():
        assert secrets.violations(seen, seat=seat) == [], f"seat {seat}"


def test_a_players_own_view_is_a_leak_to_a_spectator(played: Played) -> None:
    _http, _game, _spectator, players, secrets = played
    leaks = secrets.violations(players[3])
    assert leaks, "seat 3's hand, shown to a spectator, must be caught"
    before_out = [v for v in leaks if v.step < secrets.last_step]
    assert {v.card for v in before_out} >= {"QS/1", "KS/1"}
    assert all(v.location == "in the hand of seat 3" for v in before_out if v.card == "QS/1")
    # and the partner's view is no better: seat 1 may not see seat 3's cards
    assert {v.card for v in secrets.violations(players[3], seat=1)} >= {"QS/1"}


def test_a_planted_hand_card_is_caught_by_code_and_by_name(played: Played) -> None:
    _http, _game, spectator, _players, secrets = played
    step = spectator[2].step  # after the cut: every hand dealt
    in_hand = "KS/2"  # seat 3's, melded only at the end
    assert in_hand in secrets.hidden_at(step)
    planted = [
        Seen(step, spectator[2].text.replace('"hand":null', f'"hand":["{in_hand}"]'), "json"),
        Seen(step, f'<span class="card" data-card="{in_hand}"></span>', "html code"),
        Seen(step, '<span aria-label="King of spades, deck 2"></span>', "html name"),
        Seen(step, '<span aria-label="黑桃K（第 2 副）"></span>', "zh name"),
        Seen(step, "window.state = {stock: ['9C/2']}", "script state"),  # seat 3's later draw
    ]
    leaks = secrets.violations(planted)
    assert [(v.where, v.card) for v in leaks] == [
        ("json", in_hand),
        ("html code", in_hand),
        ("html name", in_hand),
        ("zh name", in_hand),
        ("script state", "9C/2"),
    ]
    assert leaks[0].location == "in the hand of seat 3"
    assert leaks[-1].location == "in the stock"
    assert "KS/2" in str(leaks[0]) and f"step {step}" in str(leaks[0])


def test_a_card_is_public_only_from_the_step_it_is_shown(played: Played) -> None:
    _http, _game, _spectator, _players, secrets = played
    discarded = next(s for s in range(1, secrets.last_step + 1) if "JS/1" in secrets.public_at(s))
    text = '{"pile": {"top": "JS/1"}}'
    assert secrets.violations([Seen(discarded, text)]) == []
    assert [v.card for v in secrets.violations([Seen(discarded - 1, text)])] == ["JS/1"]
    # before the cut, every card is hidden; "deck 1" is not found inside "deck 12"
    assert secrets.hidden_at(0) == secrets.cards
    assert cards_in("jack of spades, deck 12", ["JS/1"]) == {}


def test_a_seat_s_cards_are_hidden_from_whoever_did_not_play_it_then() -> None:
    """Seats change players (docs/tables.md, absent players): ``hidden_for`` follows
    ``SeatPlayerChanged``. Bob sees seat 1's cards until he leaves, none while the bot plays
    it; eve, given the seat, sees its hand from then on, none of it before."""
    history = {
        "deal": "d",
        "deck": ["AS/1", "KH/1", "QC/1", "5D/1", "7S/1"],
        "events": [
            {"step": 1, "kind": "Started", "player_ids": ["ann", "bob"], "order": [0, 1]},
            {"step": 2, "kind": "CardsDealt", "cards": [[0, "AS/1"], [1, "KH/1"]]},
            {"step": 3, "kind": "SeatPlayerChanged", "seat": 1, "player": "bot:basic:1:for:bob"},
            {"step": 4, "kind": "CardsDrawn", "seat": 1, "cards": ["QC/1"]},
            {"step": 5, "kind": "SeatPlayerChanged", "seat": 1, "player": "eve"},
            {"step": 6, "kind": "CardsDrawn", "seat": 1, "cards": ["5D/1"]},
        ],
    }
    secrets = Secrets(history)
    bob = [secrets.seat_of("bob", step) for step in range(7)]
    assert bob == [None, 1, 1, None, None, None, None]  # step 0: nothing yet
    assert "KH/1" not in secrets.hidden_for("bob", 2)
    assert {"KH/1", "QC/1"} <= secrets.hidden_for("bob", 4)  # away: a spectator's view
    assert "QC/1" in secrets.hidden_for("eve", 4)  # drawn before the seat was hers
    assert {"KH/1", "QC/1", "5D/1"}.isdisjoint(secrets.hidden_for("eve", 6))  # the seat's hand
    assert secrets.hidden_for("ann", 6) == secrets.cards - {"AS/1"}
    assert secrets.hidden_for(None, 6) == secrets.hidden_at(6) == secrets.cards
    # what bob could see at some step: his dealt card, not the bot's draw nor eve's
    assert secrets.hidden_ever("bob", 6) == secrets.cards - {"KH/1"}
