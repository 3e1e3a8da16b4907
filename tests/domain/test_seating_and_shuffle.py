"""Seating (R-SEAT-1/2, R-DEAL-2, extra_six) and the shuffle (R-DEAL-3), tested as plain functions.

Table-driven: each row is one situation from docs/rules/ with the answer the rules give.
The statistical checks use fixed seeds, so they are deterministic and fast.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter

import pytest

from domain.cards import full_deck
from domain.errors import SetupError
from domain.seating import (
    active_members,
    choose_sides,
    fixed_sides,
    next_dealer,
    side_of_seats,
    virtual_table,
)
from domain.shuffle import SEED_BYTES, commitment, shuffled, stacked_commitment
from domain.variants.base import Variant
from domain.variants.classic import CLASSIC
from domain.variants.extra_six import EXTRA_SIX


def seed(label: object) -> bytes:
    """A fixed 256-bit seed per label (tests only: the server's seeds are cryptographic)."""
    return hashlib.sha256(f"test-seed/{label}".encode()).digest()


# --- sides ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "players", "teams", "sides"),
    [
        # R-SEAT-1: 2p and 3p play for themselves; 4p partners opposite, whatever is sent.
        (CLASSIC, 2, None, {"A": [0], "B": [1]}),
        (CLASSIC, 3, None, {"A": [0], "B": [1], "C": [2]}),
        (CLASSIC, 4, None, {"A": [0, 2], "B": [1, 3]}),
        (CLASSIC, 4, [[0, 1]], {"A": [0, 2], "B": [1, 3]}),
        # R-SEAT-2/3: the host picks team A (in any order); the rest form team B.
        (CLASSIC, 5, [[4, 0, 2]], {"A": [0, 2, 4], "B": [1, 3]}),
        (CLASSIC, 6, [[1, 3, 5]], {"A": [1, 3, 5], "B": [0, 2, 4]}),
        # extra_six: two teams of three, or three teams of two (A and B picked, the rest C).
        (EXTRA_SIX, 6, [[0, 1, 2]], {"A": [0, 1, 2], "B": [3, 4, 5]}),
        (EXTRA_SIX, 6, [[0, 3], [1, 4]], {"A": [0, 3], "B": [1, 4], "C": [2, 5]}),
        (EXTRA_SIX, 6, [[5, 4], [3, 2], [1, 0]], {"A": [4, 5], "B": [2, 3], "C": [0, 1]}),
    ],
)
def test_r_seat_1_2_sides_are_fixed_or_the_hosts_choice(
    variant: Variant, players: int, teams: list[list[int]] | None, sides: dict[str, list[int]]
) -> None:
    assert choose_sides(variant, players, teams) == sides


@pytest.mark.parametrize(
    ("variant", "players", "teams", "code"),
    [
        # R-SEAT-3: the host must choose the teams, with real, distinct seats.
        (CLASSIC, 5, None, "R-SEAT-3"),
        (CLASSIC, 6, [], "R-SEAT-3"),
        (EXTRA_SIX, 6, None, "R-SEAT-3"),
        (CLASSIC, 6, [[0, 0, 1]], "R-SEAT-3"),
        (CLASSIC, 6, [[0, 1, 6]], "R-SEAT-3"),
        (CLASSIC, 5, [[-1, 0, 2]], "R-SEAT-3"),
        (EXTRA_SIX, 6, [[0, 1], [1, 2]], "R-SEAT-3"),
        # R-SEAT-2, extra_six: only the shapes the entry allows.
        (CLASSIC, 5, [[0, 1]], "R-SEAT-2"),
        (CLASSIC, 5, [[0, 1, 2, 3]], "R-SEAT-2"),
        (CLASSIC, 6, [[0, 1]], "R-SEAT-2"),
        (CLASSIC, 6, [[0, 1], [2, 3]], "R-SEAT-2"),
        (EXTRA_SIX, 6, [[0, 1, 2, 3]], "R-SEAT-2"),
        (EXTRA_SIX, 6, [[0], [1, 2]], "R-SEAT-2"),
        (EXTRA_SIX, 6, [[0, 1, 2, 3, 4, 5]], "R-SEAT-2"),
    ],
)
def test_r_seat_2_3_team_choices_the_entry_does_not_allow_are_refused(
    variant: Variant, players: int, teams: list[list[int]] | None, code: str
) -> None:
    with pytest.raises(SetupError) as refused:
        choose_sides(variant, players, teams)
    assert refused.value.code == code


@pytest.mark.parametrize("players", [5, 6])
def test_r_seat_2_five_and_six_players_have_no_fixed_sides(players: int) -> None:
    with pytest.raises(SetupError) as refused:
        fixed_sides(players)
    assert refused.value.code == "R-SEAT-2"


def test_r_seat_1_side_of_each_room_seat() -> None:
    assert side_of_seats({"A": [0, 2], "B": [1, 3]}, 4) == ["A", "B", "A", "B"]
    assert side_of_seats({"A": [0, 1], "B": [2, 3], "C": [4, 5]}, 6) == list("AABBCC")


# --- sit-outs and the virtual table -----------------------------------------------------------


@pytest.mark.parametrize(
    ("team", "deal_index", "sit_outs", "active"),
    [
        ([0, 1, 2], 0, True, [1, 2]),  # first deal: the lowest room seat sits out
        ([0, 1, 2], 1, True, [0, 2]),
        ([0, 1, 2], 2, True, [0, 1]),
        ([0, 1, 2], 3, True, [1, 2]),  # and round again
        ([0, 2, 4], 1, True, [0, 4]),
        ([1, 3, 5], 5, True, [1, 3]),
        ([3, 4], 0, True, [3, 4]),  # a team of two never sits out
        ([3, 4], 1, True, [3, 4]),
        ([0, 1, 2], 0, False, [0, 1, 2]),  # extra_six: nobody sits out
    ],
)
def test_r_seat_2_sit_outs_rotate_in_room_seat_order(
    team: list[int], deal_index: int, sit_outs: bool, active: list[int]
) -> None:
    assert active_members(team, deal_index, sit_outs) == active


@pytest.mark.parametrize(
    ("sides", "deal_index", "sit_outs", "order"),
    [
        ({"A": [0], "B": [1]}, 0, True, [0, 1]),
        ({"A": [0], "B": [1], "C": [2]}, 0, True, [0, 1, 2]),
        ({"A": [0, 2], "B": [1, 3]}, 4, True, [0, 1, 2, 3]),
        # 5p: A1 B1 A2 B2 with team A's active players in room-seat order
        ({"A": [0, 1, 2], "B": [3, 4]}, 0, True, [1, 3, 2, 4]),
        ({"A": [0, 1, 2], "B": [3, 4]}, 1, True, [0, 3, 2, 4]),
        ({"A": [0, 1, 2], "B": [3, 4]}, 2, True, [0, 3, 1, 4]),
        ({"A": [0, 2, 4], "B": [1, 3]}, 1, True, [0, 1, 4, 3]),
        # 6p classic: one sit-out per team
        ({"A": [0, 2, 4], "B": [1, 3, 5]}, 0, True, [2, 3, 4, 5]),
        ({"A": [0, 2, 4], "B": [1, 3, 5]}, 1, True, [0, 1, 4, 5]),
        ({"A": [0, 2, 4], "B": [1, 3, 5]}, 2, True, [0, 1, 2, 3]),
        ({"A": [0, 1, 2], "B": [3, 4, 5]}, 0, True, [1, 4, 2, 5]),
        # extra_six: A B A B A B and A B C A B C, everybody plays
        ({"A": [0, 1, 2], "B": [3, 4, 5]}, 0, False, [0, 3, 1, 4, 2, 5]),
        ({"A": [0, 1, 2], "B": [3, 4, 5]}, 7, False, [0, 3, 1, 4, 2, 5]),
        ({"A": [0, 1], "B": [2, 3], "C": [4, 5]}, 0, False, [0, 2, 4, 1, 3, 5]),
        ({"A": [0, 3], "B": [1, 4], "C": [2, 5]}, 2, False, [0, 1, 2, 3, 4, 5]),
    ],
)
def test_r_seat_2_virtual_table_interleaves_the_teams(
    sides: dict[str, list[int]], deal_index: int, sit_outs: bool, order: list[int]
) -> None:
    assert virtual_table(sides, deal_index, sit_outs) == order


def _every_team_choice(variant: Variant, players: int) -> list[dict[str, list[int]]]:
    choices = []
    for shape in variant.team_shapes[players]:
        picked = shape[:-1]  # the host names every team but the last
        seats = range(players)
        for first in itertools.combinations(seats, picked[0]):
            rest = [s for s in seats if s not in first]
            seconds = itertools.combinations(rest, picked[1]) if len(picked) > 1 else [None]
            for second in seconds:
                teams = [list(first)] + ([list(second)] if second is not None else [])
                choices.append(choose_sides(variant, players, teams))
    return choices


@pytest.mark.parametrize(
    ("variant", "players", "playing", "hand"),
    [(CLASSIC, 5, 4, 11), (CLASSIC, 6, 4, 11), (EXTRA_SIX, 6, 6, 13)],
)
def test_r_seat_2_every_team_choice_seats_only_opponents_side_by_side(
    variant: Variant, players: int, playing: int, hand: int
) -> None:
    assert variant.hand_size_for(players) == hand
    for sides in _every_team_choice(variant, players):
        side_of = side_of_seats(sides, players)
        sat_out: Counter[int] = Counter()
        for deal_index in range(3):
            order = virtual_table(sides, deal_index, variant.sit_outs)
            assert len(order) == playing == len(set(order))
            for i, seat in enumerate(order):
                assert side_of[seat] != side_of[order[(i + 1) % len(order)]], (sides, order)
            sat_out.update(set(range(players)) - set(order))
        if variant.sit_outs:
            # over three deals every member of a team of three sits out exactly once
            threes = [s for team in sides.values() if len(team) == 3 for s in team]
            assert sat_out == Counter(threes)
        else:
            assert not sat_out


# --- the next dealer --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("previous_order", "previous_dealer", "active", "dealer"),
    [
        ([0, 1, 2, 3], 3, [0, 1, 2, 3], 0),
        ([0, 1, 2, 3], 1, [0, 1, 2, 3], 2),
        ([0, 1], 1, [0, 1], 0),
        ([0, 1, 2], 0, [0, 1, 2], 1),
        # 5p, deal 1 -> 2: seat 1 (left of the dealer) sits out the new deal, so seat 3 deals
        ([1, 3, 2, 4], 4, [0, 3, 2, 4], 3),
        ([1, 3, 2, 4], 2, [0, 3, 2, 4], 4),
        # the previous dealer himself sits out the new deal
        ([1, 3, 2, 4], 1, [0, 3, 2, 4], 3),
        # 6p: both seats to the dealer's left sit out; seat 0, coming back, was not on
        # the previous table and is never chosen
        ([2, 3, 4, 5], 5, [0, 1, 4, 5], 4),
        ([0, 1, 4, 5], 1, [0, 1, 2, 3], 0),
        # extra_six: the next seat on the interleaved table
        ([0, 3, 1, 4, 2, 5], 5, [0, 3, 1, 4, 2, 5], 0),
        ([0, 3, 1, 4, 2, 5], 0, [0, 3, 1, 4, 2, 5], 3),
        ([0, 2, 4, 1, 3, 5], 4, [0, 2, 4, 1, 3, 5], 1),
    ],
)
def test_r_deal_2_next_dealer_is_the_next_playing_seat_left_on_the_previous_table(
    previous_order: list[int], previous_dealer: int, active: list[int], dealer: int
) -> None:
    assert next_dealer(previous_order, previous_dealer, active) == dealer


# --- the shuffle ------------------------------------------------------------------------------


def test_r_deal_3_the_same_seed_gives_the_same_order() -> None:
    deck = full_deck(2)
    assert shuffled(deck, seed(1)) == shuffled(deck, seed(1))
    assert shuffled(deck, seed(1)) != deck


def test_r_deal_3_different_seeds_give_different_orders() -> None:
    deck = full_deck(2)
    orders = {tuple(shuffled(deck, seed(i))) for i in range(50)}
    assert len(orders) == 50


@pytest.mark.parametrize("decks", [1, 2, 3, 6])
def test_r_deal_3_a_shuffle_is_a_permutation_of_all_the_entrys_cards(decks: int) -> None:
    deck = full_deck(decks)
    order = shuffled(deck, seed(decks))
    assert len(order) == 54 * decks
    assert sorted(order) == sorted(deck)


def test_r_deal_3_shuffling_leaves_the_given_deck_untouched() -> None:
    deck = full_deck(2)
    before = list(deck)
    shuffled(deck, seed("untouched"))
    assert deck == before


@pytest.mark.parametrize("cards", [[], ["QH/1"]])
def test_r_deal_3_a_deck_of_zero_or_one_card_shuffles_to_itself(cards: list[str]) -> None:
    assert shuffled(cards, seed("tiny")) == cards


@pytest.mark.parametrize("length", [0, 16, 31, 33, 64])
def test_r_deal_3_the_seed_must_be_256_bits(length: int) -> None:
    assert SEED_BYTES == 32
    with pytest.raises(ValueError):
        shuffled(full_deck(1), b"\x01" * length)


# Chi-square critical values at p = 0.001 (fixed seeds make the outcome deterministic; the
# bound only guards against a biased algorithm, e.g. modulo bias or a naive swap shuffle).
CHI2_999 = {5: 20.515, 7: 24.322}


def _chi_square(observed: list[int], total: int) -> float:
    """Pearson's statistic against a uniform spread of ``total`` over ``observed``'s cells."""
    expected = total / len(observed)
    return sum((n - expected) ** 2 / expected for n in observed)


def test_r_deal_3_each_card_lands_in_each_position_about_equally_often() -> None:
    deck = [f"{rank}S/1" for rank in ("A", "K", "Q", "J", "10", "9", "8", "7")]
    rounds = 4000
    positions: dict[str, Counter[int]] = {card: Counter() for card in deck}
    for i in range(rounds):
        for position, card in enumerate(shuffled(deck, seed(("positions", i)))):
            positions[card][position] += 1
    for card in deck:
        observed = [positions[card][p] for p in range(len(deck))]
        assert _chi_square(observed, rounds) < CHI2_999[7], (card, observed)


def test_r_deal_3_all_orders_of_three_cards_are_about_equally_likely() -> None:
    deck = ["AS/1", "KS/1", "QS/1"]
    rounds = 6000
    seen = Counter(tuple(shuffled(deck, seed(("orders", i)))) for i in range(rounds))
    observed = [seen[order] for order in itertools.permutations(deck)]
    assert sum(observed) == rounds  # every order is a permutation of the three
    assert _chi_square(observed, rounds) < CHI2_999[5], observed


# --- the commitment ---------------------------------------------------------------------------


def test_r_deal_3_the_commitment_changes_with_the_deal_id_and_the_seed() -> None:
    base = commitment("deal-1", seed("a"))
    assert commitment("deal-1", seed("a")) == base
    assert commitment("deal-2", seed("a")) != base
    assert commitment("deal-1", seed("b")) != base
    assert len({commitment(f"deal-{d}", seed(s)) for d in range(5) for s in range(5)}) == 25


def test_r_deal_3_the_commitment_is_a_sha256_hex_digest_that_does_not_show_the_seed() -> None:
    secret = seed("secret")
    proof = commitment("deal-1", secret)
    assert len(proof) == 64
    int(proof, 16)
    assert secret.hex() not in proof
    assert proof != hashlib.sha256(secret).hexdigest()


def test_r_deal_3_a_stacked_deck_commitment_changes_with_the_order_and_the_deal_id() -> None:
    deck = full_deck(2)
    other = shuffled(deck, seed("stacked"))
    base = stacked_commitment("deal-1", deck)
    assert stacked_commitment("deal-1", list(deck)) == base
    assert stacked_commitment("deal-1", other) != base
    assert stacked_commitment("deal-2", deck) != base
