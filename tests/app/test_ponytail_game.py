"""`ponytail` (docs/rules/ponytail.md) around the deals: four players only, the option, the cutter on
the dealer's right with the exact-cut bonus, and the end of the game after a deal in which a
side reaches 50000 or after the fourth deal (R-SEAT-1, R-PT-DEAL-1, R-PT-GAME-1).

A one-deal scenario (tests/scenarios/ponytail/) cannot express these. Everything goes through
``CanastaApp`` on an in-memory store; deals are played to their end by the random legal player
(``domain.legal.legal_command``) driven by a seeded ``random.Random``, and shuffles come from a
seeded random source, so every run is the same.
"""

from __future__ import annotations

import random
from uuid import UUID

import pytest

from app.application import CanastaApp
from app.autoplay import SeededRandom
from domain.commands import Cut
from domain.errors import RuleViolation, SetupError
from domain.legal import seat_to_act
from domain.state import CUT, OVER
from tests.support.games import play_to_end, seated_table

POPO = {"PERSISTENCE_MODULE": "eventsourcing.popo"}
HOST = "host"
PLAYERS = [HOST, "p1", "p2", "p3"]
TARGET = 50000
MAX_DEALS = 4


def new_app(seed: int, *, stacked: bool = False) -> CanastaApp:
    return CanastaApp(
        env=POPO, random=SeededRandom(random.Random(seed)), allow_stacked_decks=stacked
    )


def right_of(order: list[int], seat: int) -> int:
    return order[(order.index(seat) - 1) % len(order)]


def left_of(order: list[int], seat: int) -> int:
    return order[(order.index(seat) + 1) % len(order)]


# --- R-SEAT-1, R-SEAT-3 ------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 5, 6])
def test_ponytail_is_played_by_four_players_only_r_seat_1(players: int) -> None:
    app = new_app(1)
    with pytest.raises(SetupError) as err:
        app.create_table(HOST, "ponytail", players)
    assert err.value.code == "R-SEAT-1"


def test_four_players_sit_in_two_fixed_partnerships_r_seat_1() -> None:
    app = new_app(2)
    table_id = seated_table(app, PLAYERS, "ponytail")
    deal_id = app.start_game(table_id, HOST)
    st = app.get_deal(deal_id).state
    assert st.side_of == ["A", "B", "A", "B"]
    assert sorted(st.order) == [0, 1, 2, 3]
    assert st.decks == 6


def test_always_frozen_is_accepted_and_freezes_the_pile_for_the_whole_deal_s9() -> None:
    app = new_app(3)
    table_id = seated_table(app, PLAYERS, "ponytail", options={"always_frozen": True})
    table = app.get_table(table_id)
    assert table.options == {"always_frozen": True}
    deal_id = app.start_game(table_id, HOST)
    rng = random.Random(3)
    st = app.get_deal(deal_id).state
    assert st.always_frozen
    app.act(deal_id, PLAYERS[st.cutter], Cut(100))
    st = app.get_deal(deal_id).state
    assert st.pile_frozen and len(st.hands[0]) == 15 and all(len(p) == 13 for p in st.ponytails)
    play_to_end(app, deal_id, rng, limit=20000)
    st = app.get_deal(deal_id).state
    assert st.phase == OVER and st.scores is not None
    assert app.get_table(table_id).deal_scores == [{s: b["total"] for s, b in st.scores.items()}]


def test_the_target_is_50000_and_no_other_can_be_chosen_r_pt_game_1() -> None:
    app = new_app(4)
    table_id = seated_table(app, PLAYERS, "ponytail")
    assert app.get_table(table_id).target == TARGET
    with pytest.raises(SetupError) as err:
        app.create_table(HOST, "ponytail", 4, target=5000)
    assert err.value.code == "R-SEAT-3"


# --- R-PT-DEAL-1: the cutter and the exact cut ------------------------------------------------


def test_the_dealers_right_cuts_and_an_exact_61_scores_100_for_his_side_r_pt_deal_1() -> None:
    app = new_app(5)
    table_id = seated_table(app, PLAYERS, "ponytail")
    deal_id = app.start_game(table_id, HOST)
    rng = random.Random(5)
    for number, n in ((1, 61), (2, 60)):
        st = app.get_deal(deal_id).state
        assert st.phase == CUT
        assert st.cutter == right_of(st.order, st.dealer), "R-PT-DEAL-1: the dealer's right cuts"
        assert seat_to_act(st) == st.cutter
        for seat in (st.dealer, left_of(st.order, st.dealer)):  # not the dealer, not his left
            with pytest.raises(RuleViolation) as err:
                app.act(deal_id, PLAYERS[seat], Cut(n))
            assert err.value.code == "R-TURN-1"
        app.act(deal_id, PLAYERS[st.cutter], Cut(n))
        st = app.get_deal(deal_id).state
        assert st.cut == n
        assert all(len(h) + len(st.red_threes[st.side_of[s]]) >= 15 for s, h in enumerate(st.hands))
        play_to_end(app, deal_id, rng, limit=20000)
        st = app.get_deal(deal_id).state
        assert st.scores is not None
        cutter_side = st.side_of[st.cutter]
        for side, breakdown in st.scores.items():
            expected = 100 if (n == 61 and side == cutter_side) else 0
            assert breakdown["cut_bonus"] == expected, (number, side, breakdown)
        if number == 1:
            assert app.get_table(table_id).status == "playing"
            deal_id = app.start_next_deal(table_id, HOST)


# --- R-PT-GAME-1: 50000 or four deals ----------------------------------------------------------


def play_game(app: CanastaApp, table_id: UUID, first_deal: UUID, seed: int) -> list[str]:
    """Play deals until the table says the game is over; after every deal, check that it
    ended exactly when R-PT-GAME-1 says. Returns the table's status after each deal."""
    rng = random.Random(seed)
    deal_id = first_deal
    statuses = []
    for number in range(1, MAX_DEALS + 2):
        play_to_end(app, deal_id, rng, limit=20000)
        table = app.get_table(table_id)
        assert len(table.deal_scores) == number
        best = max(table.totals.values())
        statuses.append(table.status)
        if best >= TARGET or number == MAX_DEALS:
            assert table.status == "finished", f"deal {number}: the game should end"
            assert table.winners == sorted(s for s, t in table.totals.items() if t == best)
            with pytest.raises(SetupError):
                app.start_next_deal(table_id, HOST)
            return statuses
        assert table.status == "playing", f"deal {number}: nobody reached {TARGET}"
        assert table.winners is None
        deal_id = app.start_next_deal(table_id, HOST)
    raise AssertionError("the game went past four deals")


@pytest.mark.parametrize("seed", [26, 27])
def test_the_game_ends_after_the_fourth_deal_and_the_highest_total_wins_r_pt_game_1(
    seed: int,
) -> None:
    """Started far below zero (a test set-up), no side can reach 50000 in four deals of random
    play (they score 5000-25000 each): the fourth deal ends the game."""
    app = new_app(seed, stacked=True)
    table_id = seated_table(app, PLAYERS, "ponytail")
    start = {"A": -40000, "B": -40000}
    deal_id = app.start_game(table_id, HOST, scores_before=start)
    statuses = play_game(app, table_id, deal_id, seed)
    table = app.get_table(table_id)
    assert max(table.totals.values()) < TARGET
    assert statuses == ["playing", "playing", "playing", "finished"]
    assert len(table.deals) == MAX_DEALS
    sums = {side: start[side] + sum(s[side] for s in table.deal_scores) for side in ("A", "B")}
    assert table.totals == sums
    best = max(sums.values())
    assert table.winners == sorted(side for side, total in sums.items() if total == best)


@pytest.mark.parametrize("seed", [22, 23])
def test_reaching_50000_ends_the_game_before_the_fourth_deal_r_pt_game_1(seed: int) -> None:
    """Started at 30000 for side A (a test set-up), a side passes 50000 within three deals of
    random play: the game ends after that deal, not after the fourth."""
    app = new_app(seed, stacked=True)
    table_id = seated_table(app, PLAYERS, "ponytail")
    start = {"A": 30000, "B": 0}
    deal_id = app.start_game(table_id, HOST, scores_before=start)
    statuses = play_game(app, table_id, deal_id, seed)
    table = app.get_table(table_id)
    assert len(statuses) < MAX_DEALS and statuses[-1] == "finished", statuses
    assert all(status == "playing" for status in statuses[:-1]), statuses
    assert max(table.totals.values()) >= TARGET
    running = dict(start)
    for scores in table.deal_scores[:-1]:
        for side in running:
            running[side] += scores[side]
        assert max(running.values()) < TARGET


def test_totals_given_near_50000_end_the_game_after_the_first_deal_r_pt_game_1() -> None:
    app = new_app(21, stacked=True)  # set up for tests: the totals before deal 1 are given
    table_id = seated_table(app, PLAYERS, "ponytail")
    deal_id = app.start_game(table_id, HOST, scores_before={"A": 45000, "B": 45000})
    statuses = play_game(app, table_id, deal_id, 21)
    assert statuses == ["finished"], statuses
