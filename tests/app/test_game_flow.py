"""The game around the deals: seats, teams, the host's powers, dealers, sit-outs, the
shuffle's commitment and the early stop (R-SEAT-*, R-DEAL-1/2/3, R-GAME-2).

These are the rules a one-deal scenario (tests/scenarios/) cannot express. Everything
goes through ``CanastaApp`` on an in-memory store. Deals are played to their end by the
random legal player (``domain.legal.legal_command``) driven by a seeded
``random.Random``; shuffles come from a seeded random source, so every run is the same.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from app.application import CanastaApp
from app.autoplay import SeededRandom
from app.scenario import build_setup
from domain.cards import CARDS, full_deck
from domain.commands import Cut, Discard, Draw, Meld, MeldSpec
from domain.errors import Forbidden, RuleViolation, SetupError
from domain.legal import seat_to_act
from domain.shuffle import commitment, shuffled
from domain.state import OVER
from tests.support.games import play_commands, play_to_end, seated_table

TARGET_REACHED = (
    Path(__file__).parents[1] / "scenarios" / "scoring" / "r-game-1_target_reached_ends_game.json"
)
POPO = {"PERSISTENCE_MODULE": "eventsourcing.popo"}
HOST = "host"


class RecordingRandom(SeededRandom):
    """The demo's reproducible random source (``app.autoplay``), seeded with ``n``.

    ``dealer`` fixes the first dealer (it must be one of the seats offered); every call to
    ``choice`` records the seats it was offered.
    """

    def __init__(self, n: int, dealer: int | None = None) -> None:
        super().__init__(random.Random(n))
        self.dealer = dealer
        self.offered: list[list[int]] = []

    def choice(self, seats: Sequence[int]) -> int:
        self.offered.append(list(seats))
        if self.dealer is None:
            return super().choice(seats)
        assert self.dealer in seats, "the test fixed a dealer the app may not choose"
        return self.dealer


def names(n: int) -> list[str]:
    """Player ids by room seat; the host sits in seat 0."""
    return [HOST] + [f"p{i}" for i in range(1, n)]


def new_app(*, stacked: bool = False, random_source: Any = None) -> CanastaApp:
    return CanastaApp(env=POPO, allow_stacked_decks=stacked, random=random_source)


def event_names(app: CanastaApp, aggregate_id: UUID) -> list[str]:
    return [type(e).__name__ for e in app.events.get(aggregate_id)]


def play_deals(app: CanastaApp, table_id: UUID, first_deal: UUID, deals: int, seed: int) -> None:
    """Play ``deals`` deals to the end, starting the next one after each (host's power)."""
    rng = random.Random(seed)
    deal_id = first_deal
    for number in range(1, deals + 1):
        play_to_end(app, deal_id, rng)
        if number < deals:
            table = app.get_table(table_id)
            assert table.status == "playing", f"the game ended after deal {number}; pick a seed"
            deal_id = app.start_next_deal(table_id, HOST)


def deal_states(app: CanastaApp, table_id: UUID) -> list[Any]:
    return [app.get_deal(UUID(d)).state for d in app.get_table(table_id).deals]


# --- R-SEAT-5: seats ----------------------------------------------------------------------


def test_a_table_cannot_start_until_every_seat_is_taken_r_seat_5() -> None:
    app = new_app()
    table_id = app.create_table(HOST, "classic", 4)
    app.join_table(table_id, HOST, 0)
    app.join_table(table_id, "p1", 1)
    app.join_table(table_id, "p2", 2)
    with pytest.raises(SetupError) as err:
        app.start_game(table_id, HOST)
    assert err.value.code == "R-SEAT-5"
    table = app.get_table(table_id)
    assert table.status == "open" and table.deals == []
    app.join_table(table_id, "p3", 3)
    app.start_game(table_id, HOST)
    assert app.get_table(table_id).status == "playing"


def test_one_player_cannot_take_two_seats_so_the_players_are_distinct_r_seat_5() -> None:
    app = new_app()
    table_id = app.create_table(HOST, "classic", 2)
    app.join_table(table_id, HOST, 0)
    with pytest.raises(SetupError) as err:
        app.join_table(table_id, HOST, 1)
    assert err.value.code == "R-SEAT-5"
    with pytest.raises(SetupError) as err:
        app.join_table(table_id, HOST)
    assert err.value.code == "R-SEAT-5"
    assert app.get_table(table_id).seats == [HOST, None]
    with pytest.raises(SetupError) as err:
        app.start_game(table_id, HOST)
    assert err.value.code == "R-SEAT-5"


def test_joining_a_full_table_or_a_taken_seat_is_refused_r_seat_5() -> None:
    app = new_app()
    table_id = app.create_table(HOST, "classic", 2)
    app.join_table(table_id, HOST, 0)
    with pytest.raises(SetupError) as err:
        app.join_table(table_id, "p1", 0)
    assert err.value.code == "R-SEAT-5"
    app.join_table(table_id, "p1")
    with pytest.raises(SetupError) as err:
        app.join_table(table_id, "late")
    assert err.value.code == "R-SEAT-5"
    with pytest.raises(SetupError) as err:
        app.join_table(table_id, "late", 5)
    assert err.value.code == "R-SEAT-5"
    assert app.get_table(table_id).seats == [HOST, "p1"]


def test_joining_a_started_table_is_refused_r_seat_5() -> None:
    app = new_app()
    table_id = seated_table(app, names(4))
    app.start_game(table_id, HOST)
    with pytest.raises(SetupError) as err:
        app.join_table(table_id, "late")
    assert err.value.code == "R-SEAT-5"
    assert "late" not in app.get_table(table_id).seats


# --- R-SEAT-3: the host's powers ------------------------------------------------------------


def test_only_the_host_can_start_the_game_r_seat_3() -> None:
    app = new_app()
    table_id = seated_table(app, names(4))
    for player in ("p1", "stranger"):
        with pytest.raises(Forbidden) as err:
            app.start_game(table_id, player)
        assert err.value.code == "R-SEAT-3"
    assert app.get_table(table_id).status == "open"
    app.start_game(table_id, HOST)
    with pytest.raises(SetupError) as again:
        app.start_game(table_id, HOST)  # once started, it cannot start again
    assert again.value.code == "R-SEAT-3"


def test_only_the_host_can_start_the_next_deal_r_seat_3() -> None:
    app = new_app(random_source=RecordingRandom(1))
    table_id = seated_table(app, names(4))
    deal_id = app.start_game(table_id, HOST)
    play_to_end(app, deal_id, random.Random(1))
    with pytest.raises(Forbidden) as err:
        app.start_next_deal(table_id, "p2")
    assert err.value.code == "R-SEAT-3"
    assert len(app.get_table(table_id).deals) == 1
    app.start_next_deal(table_id, HOST)
    assert len(app.get_table(table_id).deals) == 2


def test_only_the_host_can_stop_the_game_r_seat_3_r_game_2() -> None:
    app = new_app()
    table_id = seated_table(app, names(4))
    app.start_game(table_id, HOST)
    for player in ("p1", "p3", "stranger"):
        with pytest.raises(Forbidden) as err:
            app.stop_game(table_id, player)
        assert err.value.code == "R-SEAT-3"
    assert app.get_table(table_id).status == "playing"


def test_the_next_deal_cannot_start_before_the_current_deal_is_over_r_game_1() -> None:
    app = new_app()
    table_id = seated_table(app, names(4))
    app.start_game(table_id, HOST)
    with pytest.raises(SetupError) as err:
        app.start_next_deal(table_id, HOST)
    assert err.value.code == "R-GAME-1"
    assert len(app.get_table(table_id).deals) == 1


# --- R-SEAT-2/3: teams ----------------------------------------------------------------------


@pytest.mark.parametrize(("entry", "players"), [("classic", 5), ("classic", 6), ("extra_six", 6)])
def test_five_and_six_player_tables_need_the_hosts_teams_before_the_start_r_seat_3(
    entry: str, players: int
) -> None:
    app = new_app()
    table_id = seated_table(app, names(players), entry)
    with pytest.raises(SetupError) as err:
        app.start_game(table_id, HOST)
    assert err.value.code == "R-SEAT-3"
    assert app.get_table(table_id).status == "open"


@pytest.mark.parametrize(
    ("entry", "players", "teams"),
    [
        ("classic", 5, [[0, 1]]),  # team A must be the three
        ("classic", 5, [[0, 1, 2, 3]]),
        ("classic", 6, [[0, 1]]),  # two teams of three only
        ("classic", 6, [[0, 1], [2, 3]]),
        ("classic", 6, [[0, 1, 2, 3, 4, 5]]),
        ("extra_six", 6, [[0, 1]]),  # 3+3 or 2+2+2
        ("extra_six", 6, [[0, 1, 2, 3]]),
        ("extra_six", 6, [[0, 1], [2, 3, 4]]),
    ],
)
def test_teams_of_the_wrong_sizes_are_refused_r_seat_2(
    entry: str, players: int, teams: list[list[int]]
) -> None:
    app = new_app()
    table_id = seated_table(app, names(players), entry)
    with pytest.raises(SetupError) as err:
        app.choose_teams(table_id, HOST, teams)
    assert err.value.code == "R-SEAT-2"
    assert app.get_table(table_id).sides is None


@pytest.mark.parametrize(
    "teams",
    [[[0, 1, 9]], [[0, 0, 1]], [[0, -1, 2]]],
)
def test_teams_naming_unknown_or_repeated_seats_are_refused_r_seat_3(
    teams: list[list[int]],
) -> None:
    app = new_app()
    table_id = seated_table(app, names(5))
    with pytest.raises(SetupError) as err:
        app.choose_teams(table_id, HOST, teams)
    assert err.value.code == "R-SEAT-3"


def test_a_seat_in_two_teams_is_refused_r_seat_3() -> None:
    app = new_app()
    table_id = seated_table(app, names(6), "extra_six")
    with pytest.raises(SetupError) as err:
        app.choose_teams(table_id, HOST, [[0, 1], [1, 2]])
    assert err.value.code == "R-SEAT-3"


def test_only_the_host_chooses_teams_and_only_before_the_start_r_seat_3() -> None:
    app = new_app()
    table_id = seated_table(app, names(5))
    with pytest.raises(Forbidden) as err:
        app.choose_teams(table_id, "p1", [[0, 2, 4]])
    assert err.value.code == "R-SEAT-3"
    app.choose_teams(table_id, HOST, [[0, 2, 4]])
    app.start_game(table_id, HOST)
    with pytest.raises(SetupError) as started:
        app.choose_teams(table_id, HOST, [[1, 2, 3]])
    assert started.value.code == "R-SEAT-3"
    assert app.get_table(table_id).sides == {"A": [0, 2, 4], "B": [1, 3]}


def test_four_player_partnerships_are_fixed_and_cannot_be_chosen_r_seat_1_r_seat_3() -> None:
    app = new_app()
    table_id = seated_table(app, names(4))
    with pytest.raises(SetupError) as err:
        app.choose_teams(table_id, HOST, [[0, 1]])
    assert err.value.code == "R-SEAT-3"
    app.start_game(table_id, HOST)
    assert app.get_table(table_id).sides == {"A": [0, 2], "B": [1, 3]}


@pytest.mark.parametrize(
    ("teams", "sides", "order"),
    [
        ([[0, 2, 4]], {"A": [0, 2, 4], "B": [1, 3, 5]}, [0, 1, 2, 3, 4, 5]),
        ([[0, 1, 2]], {"A": [0, 1, 2], "B": [3, 4, 5]}, [0, 3, 1, 4, 2, 5]),
        ([[0, 1], [2, 3]], {"A": [0, 1], "B": [2, 3], "C": [4, 5]}, [0, 2, 4, 1, 3, 5]),
    ],
)
def test_extra_six_teams_interleave_so_both_neighbours_are_opponents_r_seat_3_8b(
    teams: list[list[int]], sides: dict[str, list[int]], order: list[int]
) -> None:
    app = new_app()
    table_id = seated_table(app, names(6), "extra_six", teams=teams)
    deal_id = app.start_game(table_id, HOST)
    assert app.get_table(table_id).sides == sides
    st = app.get_deal(deal_id).state
    assert st.order == order  # all six play: no sit-out in extra_six
    for i, seat in enumerate(order):
        for neighbour in (order[i - 1], order[(i + 1) % 6]):
            assert st.side_of[neighbour] != st.side_of[seat]


# --- R-DEAL-1/2, R-SEAT-2: dealers and sit-outs -----------------------------------------------


@pytest.mark.parametrize(
    ("players", "teams", "active"),
    [
        (4, None, [0, 1, 2, 3]),
        (5, [[0, 2, 4]], [1, 2, 3, 4]),  # seat 0 (team A's lowest) sits out deal 1
        (6, [[0, 2, 4]], [2, 3, 4, 5]),  # seats 0 and 1 sit out deal 1
    ],
)
def test_the_first_dealer_is_drawn_among_the_seats_that_play_deal_1_r_deal_1(
    players: int, teams: list[list[int]] | None, active: list[int]
) -> None:
    source = RecordingRandom(3)
    app = new_app(random_source=source)
    table_id = seated_table(app, names(players), teams=teams)
    deal_id = app.start_game(table_id, HOST)
    st = app.get_deal(deal_id).state
    assert sorted(source.offered[0]) == active  # the draw is over the active seats only
    assert sorted(st.order) == active
    assert st.dealer in active
    assert app.get_table(table_id).dealer == st.dealer
    started: Any = next(iter(app.events.get(deal_id)))
    assert started.dealer == st.dealer  # the choice is recorded in an event


def test_the_system_random_first_dealer_is_always_an_active_seat_and_reaches_each_r_deal_1() -> (
    None
):
    app = new_app()  # the operating system's cryptographic source
    seen: set[int] = set()
    for _ in range(100):
        table_id = seated_table(app, names(5), teams=[[0, 2, 4]])
        deal_id = app.start_game(table_id, HOST)
        dealer = app.get_deal(deal_id).state.dealer
        assert dealer in (1, 2, 3, 4), "seat 0 sits out deal 1 and cannot deal it"
        seen.add(dealer)
    assert seen == {1, 2, 3, 4}  # missing one by chance: probability about 1e-12


def test_a_test_set_up_cannot_make_a_sitting_out_seat_the_first_dealer_r_deal_1() -> None:
    app = new_app(stacked=True)
    table_id = seated_table(app, names(5), teams=[[0, 2, 4]])
    with pytest.raises(SetupError) as err:
        app.start_game(table_id, HOST, dealer=0)
    assert err.value.code == "R-DEAL-1"
    assert app.get_table(table_id).status == "open"


def test_the_dealer_passes_to_the_left_each_deal_at_four_players_r_deal_2() -> None:
    app = new_app(random_source=RecordingRandom(11, dealer=1))
    table_id = seated_table(app, names(4))
    deal_id = app.start_game(table_id, HOST)
    play_deals(app, table_id, deal_id, 5, seed=11)
    states = deal_states(app, table_id)
    assert [st.dealer for st in states] == [1, 2, 3, 0, 1]
    assert [st.cutter for st in states] == [2, 3, 0, 1, 2]  # R-DEAL-4: the dealer's left
    assert [st.order for st in states] == [[0, 1, 2, 3]] * 5


def next_dealer_by_hand(previous_order: list[int], previous_dealer: int, active: list[int]) -> int:
    """R-DEAL-2 as written: from the previous dealer, walk left on the previous deal's
    virtual table to the first seat whose player plays the new deal."""
    i = previous_order.index(previous_dealer)
    walk = previous_order[i + 1 :] + previous_order[: i + 1]
    return next(seat for seat in walk if seat in active)


def test_the_dealer_skips_seats_that_sit_out_the_new_deal_at_five_players_r_deal_2() -> None:
    # Team A = 0, 2, 4 (sit-outs 0, 2, 4, 0, ...), team B = 1, 3. Virtual tables:
    # deal 1 [2,1,4,3], deal 2 [0,1,4,3], deal 3 [0,1,2,3], then again.
    # First dealer 2. Deal 2: left of 2 on [2,1,4,3] is 1, who plays: 1.
    # Deal 3: left of 1 on [0,1,4,3] is 4, sitting out; then 3: 3.
    # Deal 4: left of 3 on [0,1,2,3] is 0, sitting out; then 1: 1.
    # Deal 5: left of 1 on [2,1,4,3] is 4, who plays deal 5 [0,1,4,3]: 4.
    app = new_app(random_source=RecordingRandom(5, dealer=2))
    table_id = seated_table(app, names(5), teams=[[0, 2, 4]])
    deal_id = app.start_game(table_id, HOST)
    play_deals(app, table_id, deal_id, 5, seed=5)
    states = deal_states(app, table_id)
    assert [st.dealer for st in states] == [2, 1, 3, 1, 4]
    for previous, st in pairwise(states):
        assert st.dealer == next_dealer_by_hand(previous.order, previous.dealer, st.order)
        assert st.cutter == st.order[(st.order.index(st.dealer) + 1) % 4]


@pytest.mark.parametrize(
    ("players", "teams", "orders"),
    [
        # 5p: team A 0,2,4 sits out 0, then 2, then 4, then 0 again; team B 1,3 always plays.
        (5, [[0, 2, 4]], [[2, 1, 4, 3], [0, 1, 4, 3], [0, 1, 2, 3], [2, 1, 4, 3]]),
        # 5p with team A 1,2,3: sit-outs 1, 2, 3, 1; team B is 0 and 4.
        (5, [[1, 2, 3]], [[2, 0, 3, 4], [1, 0, 3, 4], [1, 0, 2, 4], [2, 0, 3, 4]]),
        # 6p: team A 0,2,4 and team B 1,3,5 each sit one out, in room-seat order.
        (6, [[0, 2, 4]], [[2, 3, 4, 5], [0, 1, 4, 5], [0, 1, 2, 3], [2, 3, 4, 5]]),
    ],
)
def test_sit_outs_rotate_per_deal_in_room_seat_order_r_seat_2(
    players: int, teams: list[list[int]], orders: list[list[int]]
) -> None:
    app = new_app(random_source=RecordingRandom(21))
    table_id = seated_table(app, names(players), teams=teams)
    deal_id = app.start_game(table_id, HOST)
    play_deals(app, table_id, deal_id, len(orders), seed=21)
    states = deal_states(app, table_id)
    assert [st.order for st in states] == orders
    table = app.get_table(table_id)
    for st in states:
        sitting_out = [s for s in range(players) if s not in st.order]
        assert len(st.order) == 4 and len(sitting_out) == players - 4
        assert all(st.hands[s] == [] for s in sitting_out)  # R-SEAT-2: no cards
    # R-SCORE-2: each completed deal scored once per team, whoever sat out
    assert len(table.deal_scores) == len(orders)
    assert all(set(scores) == {"A", "B"} for scores in table.deal_scores)


def test_a_seat_sitting_out_the_deal_cannot_act_r_turn_1_r_seat_4() -> None:
    app = new_app(random_source=RecordingRandom(8, dealer=3))
    table_id = seated_table(app, names(5), teams=[[0, 2, 4]])
    deal_id = app.start_game(table_id, HOST)  # seat 0 sits out deal 1
    st = app.get_deal(deal_id).state
    assert 0 not in st.order
    with pytest.raises(RuleViolation) as err:
        app.act(deal_id, HOST, Cut(10))
    assert err.value.code == "R-TURN-1"
    app.act(deal_id, names(5)[st.cutter], Cut(10))
    for command in (Draw(), Discard(app.get_deal(deal_id).state.hands[2][0])):
        with pytest.raises(RuleViolation) as err:
            app.act(deal_id, HOST, command)
        assert err.value.code == "R-TURN-1"


# --- R-DEAL-3: the shuffle's commitment and test-only set-ups ----------------------------------


def test_the_published_commitment_is_the_hash_of_the_deal_id_and_the_recorded_seed_r_deal_3() -> (
    None
):
    app = new_app()  # a real server: cryptographic seeds
    table_id = seated_table(app, names(4))
    first = app.start_game(table_id, HOST)
    play_to_end(app, first, random.Random(4))
    second = app.start_next_deal(table_id, HOST)
    seen = set()
    for deal_id in (first, second):
        events: list[Any] = list(app.events.get(deal_id))
        started, shuffled_event = events[0], events[1]
        assert type(shuffled_event).__name__ == "DeckShuffled"
        seed = bytes.fromhex(shuffled_event.seed)
        assert len(seed) == 32  # 256 bits
        expected = commitment(str(deal_id), seed)
        assert started.commitment == expected  # published when the deal starts
        assert app.get_deal(deal_id, version=1).state.commitment == expected
        # the seed alone reproduces the deck that was dealt
        assert app.get_deal(deal_id, version=2).state.deck == shuffled(full_deck(2), seed)
        seen.add(expected)
    assert len(seen) == 2  # every deal has its own fresh shuffle


@pytest.mark.parametrize(
    "setup",
    [
        {"dealer": 1},
        {"scores_before": {"A": 1500}},
        {"deck": full_deck(2)},
        {"sit_out": [0]},
    ],
    ids=["dealer", "scores_before", "deck", "sit_out"],
)
def test_a_server_not_set_up_for_tests_refuses_test_only_set_ups_r_deal_3(
    setup: dict[str, Any],
) -> None:
    app = new_app(stacked=False)
    players, teams = (5, [[0, 2, 4]]) if "sit_out" in setup else (4, None)
    table_id = seated_table(app, names(players), teams=teams)
    with pytest.raises(SetupError) as err:
        app.start_game(table_id, HOST, **setup)
    assert err.value.code == "R-DEAL-3"
    table = app.get_table(table_id)
    assert table.status == "open" and table.deals == [] and table.totals == {}
    app.start_game(table_id, HOST)  # the ordinary start still works
    assert app.get_table(table_id).status == "playing"


def test_a_server_not_set_up_for_tests_refuses_a_stacked_deck_for_the_next_deal_r_deal_3() -> None:
    app = new_app(stacked=False, random_source=RecordingRandom(9))
    table_id = seated_table(app, names(4))
    deal_id = app.start_game(table_id, HOST)
    play_to_end(app, deal_id, random.Random(9))
    with pytest.raises(SetupError) as err:
        app.start_next_deal(table_id, HOST, deck=full_deck(2))
    assert err.value.code == "R-DEAL-3"
    assert len(app.get_table(table_id).deals) == 1


def test_a_stacked_deck_must_hold_every_card_once_r_deal_3() -> None:
    app = new_app(stacked=True)
    table_id = seated_table(app, names(4))
    deck = full_deck(2)
    deck[0] = deck[1]  # one card twice, another missing
    with pytest.raises(SetupError) as err:
        app.start_game(table_id, HOST, deck=deck)
    assert err.value.code == "R-DEAL-3"


# --- R-GAME-2: the early stop ----------------------------------------------------------------


def test_the_host_stops_mid_deal_completed_deals_stay_and_the_open_deal_is_not_scored_r_game_2() -> (
    None
):
    app = new_app(random_source=RecordingRandom(2))
    players = names(4)
    table_id = seated_table(app, names(4))
    first = app.start_game(table_id, HOST)
    play_to_end(app, first, random.Random(2))
    after_first = app.get_table(table_id)
    scores_1 = dict(after_first.deal_scores[0])
    assert after_first.totals == scores_1

    second = app.start_next_deal(table_id, HOST)
    deal = play_commands(app, second, random.Random(2), 6)  # the cut, then some turns
    assert deal.state.phase != OVER, "pick another seed: the deal ended"
    before = app.get_deal(second)
    waiting = seat_to_act(before.state)
    assert waiting is not None

    app.stop_game(table_id, HOST)

    table = app.get_table(table_id)
    assert table.status == "stopped"
    assert table.deal_scores == [scores_1]  # the completed deal's score stays
    assert table.totals == scores_1  # nothing added for the unfinished deal
    assert table.winners is None  # no winner is declared
    assert table.deals == [str(first), str(second)]
    deal = app.get_deal(second)
    assert deal.state.phase == OVER and deal.state.end_reason == "stopped"
    assert deal.state.scores is None
    kinds = event_names(app, second)
    assert kinds[-1] == "DealAbandoned" and "DealScored" not in kinds
    assert event_names(app, table_id)[-1] == "GameStopped"
    assert app.get_deal(first).state.scores is not None  # deal 1 is untouched

    # Nobody can act on the stopped deal any more (R-TURN-1), whatever he sends.
    version = deal.version
    hand = deal.state.hands[waiting]
    for command in (Draw(), Cut(5), Discard(hand[0]), Meld((MeldSpec(tuple(hand[:3])),))):
        with pytest.raises(RuleViolation) as refused:
            app.act(second, players[waiting], command)
        assert refused.value.code == "R-TURN-1"
    assert app.get_deal(second).version == version

    # No next deal after a stop, and the game cannot be stopped twice.
    with pytest.raises(SetupError):
        app.start_next_deal(table_id, HOST)
    with pytest.raises(SetupError) as err:
        app.stop_game(table_id, HOST)
    assert err.value.code == "R-GAME-2"
    table = app.get_table(table_id)
    assert table.status == "stopped" and len(table.deals) == 2


def test_stopping_between_deals_keeps_every_completed_deal_r_game_2() -> None:
    app = new_app(random_source=RecordingRandom(6))
    table_id = seated_table(app, names(4))
    deal_id = app.start_game(table_id, HOST)
    play_deals(app, table_id, deal_id, 2, seed=6)
    played = app.get_table(table_id)
    assert len(played.deal_scores) == 2
    last = UUID(played.deals[-1])
    last_events = event_names(app, last)
    app.stop_game(table_id, HOST)
    table = app.get_table(table_id)
    assert table.status == "stopped"
    assert table.deal_scores == played.deal_scores
    assert table.totals == played.totals
    assert table.winners is None
    assert event_names(app, last) == last_events  # a finished deal is not abandoned
    with pytest.raises(SetupError):
        app.start_next_deal(table_id, HOST)


def test_the_host_may_stop_right_after_the_start_before_the_cut_r_game_2() -> None:
    app = new_app()
    table_id = seated_table(app, names(4))
    deal_id = app.start_game(table_id, HOST)
    cutter = app.get_deal(deal_id).state.cutter
    app.stop_game(table_id, HOST)
    table = app.get_table(table_id)
    assert table.status == "stopped" and table.deal_scores == [] and table.winners is None
    assert table.totals == {"A": 0, "B": 0}
    with pytest.raises(RuleViolation) as err:
        app.act(deal_id, names(4)[cutter], Cut(20))
    assert err.value.code == "R-TURN-1"


def test_a_game_not_started_cannot_be_stopped_r_game_2() -> None:
    app = new_app()
    table_id = seated_table(app, names(4))
    with pytest.raises(SetupError) as err:
        app.stop_game(table_id, HOST)
    assert err.value.code == "R-GAME-2"
    assert app.get_table(table_id).status == "open"


def _finish_by_going_out(app: CanastaApp) -> UUID:
    """The stacked deal of r-game-1_target_reached_ends_game.json: seat 0 (side A, 4900
    before) goes out with seven aces and four jacks, and the game ends."""
    setup = build_setup(json.loads(TARGET_REACHED.read_text(encoding="utf-8")), "finished game")
    table_id = seated_table(app, names(4))
    deal_id = app.start_game(
        table_id, HOST, dealer=setup.dealer, scores_before=setup.scores_before, deck=setup.deck
    )
    cutter = app.get_deal(deal_id).state.cutter
    app.act(deal_id, names(4)[cutter], Cut(setup.cut))
    app.act(deal_id, HOST, Draw())
    hand = app.get_deal(deal_id).state.hands[0]
    aces = tuple(c for c in hand if CARDS[c].rank == "A")
    jacks = tuple(c for c in hand if CARDS[c].rank == "J")
    five = next(c for c in hand if CARDS[c].rank == "5")
    app.act(deal_id, HOST, Meld((MeldSpec(aces), MeldSpec(jacks)), discard=five))
    return table_id


def test_a_finished_game_has_no_next_deal_and_cannot_be_stopped_r_game_1_r_game_2() -> None:
    app = new_app(stacked=True)
    table_id = _finish_by_going_out(app)
    table = app.get_table(table_id)
    assert table.status == "finished" and table.winners == ["A"]
    assert table.totals == {"A": 5690, "B": 3835}  # as in the scenario file
    with pytest.raises(SetupError):
        app.start_next_deal(table_id, HOST)
    with pytest.raises(SetupError) as err:
        app.stop_game(table_id, HOST)
    assert err.value.code == "R-GAME-2"
    table = app.get_table(table_id)
    assert table.status == "finished" and table.winners == ["A"] and len(table.deals) == 1


def test_each_next_deal_starts_from_the_cumulative_totals_r_score_1_r_init_1() -> None:
    app = new_app(random_source=RecordingRandom(12))
    table_id = seated_table(app, names(4))
    deal_id = app.start_game(table_id, HOST)
    play_deals(app, table_id, deal_id, 3, seed=12)
    table = app.get_table(table_id)
    states = deal_states(app, table_id)
    running = {"A": 0, "B": 0}
    for st, scores in zip(states, table.deal_scores, strict=True):
        assert st.scores_before == running  # decides the side's initial minimum
        assert scores == {side: st.scores[side]["total"] for side in ("A", "B")}
        running = {side: running[side] + scores[side] for side in running}
    assert table.totals == running
