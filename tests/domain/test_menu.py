"""The move menu's composition aids (``domain.menu``, docs/api.md): the going-out lacks come
from the rules' own check, the initial minimum from the entry's table, and a seat sitting the
deal out gets nothing. (Its moves are checked over random deals in
tests/property/test_move_menu.py.)"""

from __future__ import annotations

import random
from uuid import UUID

from app.application import CanastaApp
from app.autoplay import HOST, SeededRandom, new_table
from domain.commands import Answer, AskPartner, Cut, Discard, Draw
from domain.deal import Deal
from domain.errors import RuleViolation
from domain.legal import seat_to_act
from domain.menu import NOT_YOUR_TURN, menu
from domain.rules import decide
from domain.state import DRAW, PLAY

MEMORY_ENV = {"PERSISTENCE_MODULE": "eventsourcing.popo"}


def started(entry: str, players: int, seed: int = 1) -> tuple[CanastaApp, UUID, Deal]:
    """A deal of ``entry`` just cut: the first player is to draw."""
    app = CanastaApp(env=MEMORY_ENV, random=SeededRandom(random.Random(seed)))
    deal_id = app.start_game(new_table(app, entry, players), HOST)
    deal = app.get_deal(deal_id)
    cutter = seat_to_act(deal.state)
    assert cutter is not None
    deal = app.act(deal_id, deal.state.player_ids[cutter], Cut(20))
    assert deal.state.phase == DRAW
    return app, deal_id, deal


def test_partner_said_no_is_the_askers_lack_for_this_turn_only_r_out_3() -> None:
    app, deal_id, deal = started("classic", 4)
    asker = deal.state.turn
    assert asker is not None
    partner = deal.state.partners(asker)[0]
    assert menu(deal.state, asker).go_out.lacks == ("needs_canasta",)
    deal = app.act(deal_id, deal.state.player_ids[asker], AskPartner(partner))
    assert menu(deal.state, partner).moves == (Answer(yes=True), Answer(yes=False))
    assert menu(deal.state, asker).moves == ()  # waiting for the answer
    assert menu(deal.state, asker).go_out.lacks == (NOT_YOUR_TURN, "needs_canasta")
    deal = app.act(deal_id, deal.state.player_ids[partner], Answer(yes=False))
    mine = menu(deal.state, asker)
    assert mine.go_out.lacks == ("partner_said_no", "needs_canasta")
    assert not mine.go_out.allowed
    # the partner's "no" is not the partner's own lack
    assert menu(deal.state, partner).go_out.lacks == (NOT_YOUR_TURN, "needs_canasta")
    # after the asker's turn it is gone
    deal = app.act(deal_id, deal.state.player_ids[asker], Draw())
    assert deal.state.phase == PLAY
    discard = next(m for m in menu(deal.state, asker).moves if isinstance(m, Discard))
    deal = app.act(deal_id, deal.state.player_ids[asker], discard)
    assert "partner_said_no" not in menu(deal.state, asker).go_out.lacks


def test_the_first_lack_is_the_refusal_a_going_out_command_gets() -> None:
    """One check: ``go_out.lacks`` and the rules' refusal come from the same function."""
    _app, _deal_id, deal = started("classic", 2)
    seat = deal.state.turn
    assert seat is not None
    assert menu(deal.state, seat).go_out.lacks == ("needs_canasta",)  # two needed in a game of two
    state = deal.state.clone()
    state.phase = PLAY
    state.hands[seat] = state.hands[seat][:1]  # one card left: discarding it goes out
    try:
        decide(state, seat, Discard(state.hands[seat][0]))
    except RuleViolation as refusal:
        assert refusal.code == "R-OUT-1"
    else:
        raise AssertionError("going out without canastas was accepted")


def test_ponytail_lacks_the_ponytail_and_each_kind_of_canasta_r_pt_out_1() -> None:
    _app, _deal_id, deal = started("ponytail", 4)
    seat = deal.state.turn
    assert seat is not None
    m = menu(deal.state, seat)
    assert m.go_out.lacks == (
        "ponytail_face_down",
        "needs_natural_canasta",
        "needs_mixed_canasta",
        "needs_natural_sevens_canasta",
        "needs_wild_canasta",
    )
    assert m.initial_minimum_left == 50  # R-PT-INIT-1, below 15000
    assert sum(len(cards) for cards in m.hand_by_rank.values()) == len(deal.state.hands[seat])


def test_modern_american_minimum_and_two_canastas_r_ma_init_1() -> None:
    _app, _deal_id, deal = started("modern_american", 4)
    seat = deal.state.turn
    assert seat is not None
    m = menu(deal.state, seat)
    assert m.initial_minimum_left == 125 and m.melds == ()
    assert m.go_out.lacks == ("needs_canasta",)


def test_a_seat_sitting_out_gets_an_empty_menu_and_no_cards_r_seat_4() -> None:
    _app, _deal_id, deal = started("classic", 5)
    (out,) = [s for s in range(5) if s not in deal.state.order]
    m = menu(deal.state, out)
    assert m.moves == () and m.hand_by_rank == {}
    assert m.go_out.lacks[0] == NOT_YOUR_TURN
