"""Property tests of the move menu (``domain.menu``, docs/api.md "The move menu").

Random deals of every entry and player count (``always_frozen`` too) are played through the
application service on the in-memory store, each command chosen either from the menu (the
menu player, ``app.autoplay.menu_choice``) or by the random legal player of the property tests
(``domain.legal.legal_command``, whose composite melds and melds with a discard reach states the
menu player would not). At every step:

- the seat to act has a menu that is not empty, and the rules accept every listed move as it
  is (``decide``; the cut's every ``n``, sampled); every other seat's menu is empty;
- the menu names no card but the player's own (and the pile's top as ``TOP``);

and at sampled steps:

- completeness: every command of the menu's forms that the rules accept, enumerated over
  every card code of the hand (not one card per rank as the menu does), has its shape
  (``domain.menu.shape``) in the menu;
- secrecy: the menu of every seat is the same when the cards it may not see (the other hands,
  the stock, the face-down ponytails, the deck) are shuffled among themselves.

Deterministic: Hypothesis is derandomized and draws one seed, which drives the players and the
application's random source; a failure names the seed, entry, step and seat.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import combinations
from uuid import UUID

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.application import CanastaApp
from app.autoplay import HOST, SeededRandom, menu_choice, new_table
from domain.cards import CARDS
from domain.commands import (
    COMMAND_NAMES,
    TOP,
    Answer,
    AskPartner,
    Command,
    Cut,
    DeclinePile,
    Discard,
    Draw,
    Meld,
    MeldSpec,
    PickUpPonytail,
    TakePile,
)
from domain.constants import WILD_RANK
from domain.errors import RuleViolation
from domain.legal import legal_command, seat_to_act
from domain.menu import Menu, menu, shape
from domain.rules import decide
from domain.state import ANSWER, CUT, DRAW, OVER, PLAY, DealState

MEMORY_ENV = {"PERSISTENCE_MODULE": "eventsourcing.popo", "AGGREGATE_CACHE_MAXSIZE": "100"}
MAX_COMMANDS_PER_DEAL = 5000


@dataclass(frozen=True)
class Config:
    entry: str
    players: int
    always_frozen: bool = False

    @property
    def id(self) -> str:
        return f"{self.entry}-{self.players}p" + ("-always_frozen" if self.always_frozen else "")


CONFIGS = [
    *(Config("classic", n) for n in (2, 3, 4, 5, 6)),
    Config("classic", 4, always_frozen=True),
    Config("extra_six", 6),
    Config("modern_american", 4),
    Config("ponytail", 4),
    Config("ponytail", 4, always_frozen=True),
]


# --- the checks ---------------------------------------------------------------------------


def accepted(state: DealState, seat: int, command: Command) -> bool:
    try:
        decide(state, seat, command)
    except RuleViolation:
        return False
    return True


def check_listed_moves(
    state: DealState, seat: int, m: Menu, rng: random.Random, where: str
) -> None:
    """Not empty, and every listed move accepted (the cut: exactly 1..N-1, a sample decided)."""
    assert m.moves, f"the seat to act has an empty menu {where}"
    if state.phase == CUT:
        assert [c for c in m.moves if isinstance(c, Cut)] == list(m.moves), where
        assert [c.n for c in m.moves if isinstance(c, Cut)] == list(range(1, len(state.deck)))
        sample = [m.moves[0], m.moves[-1], *rng.sample(m.moves, 3)]
    else:
        sample = list(m.moves)
    for command in sample:
        try:
            decide(state, seat, command)
        except RuleViolation as refusal:
            raise AssertionError(f"listed but refused: {command!r}: {refusal} {where}") from None
    assert len(set(m.moves)) == len(m.moves), f"a move is listed twice {where}"


def named_cards(m: Menu) -> set[str]:
    """Every card the menu names."""
    names = {c for cards in m.hand_by_rank.values() for c in cards}
    for command in m.moves:
        if isinstance(command, TakePile | Meld):
            names.update(c for spec in command.melds for c in spec.cards)
        if isinstance(command, Meld | Discard):
            card = command.discard if isinstance(command, Meld) else command.card
            if card is not None:
                names.add(card)
    return names


def check_names_own_cards(state: DealState, seat: int, m: Menu, where: str) -> None:
    """R-VIEW-1: the menu names the player's own cards only, and the top card as TOP."""
    own = set(state.hands[seat]) if seat in state.order else set()
    foreign = named_cards(m) - own - {TOP}
    assert not foreign, f"the menu of seat {seat} names {sorted(foreign)} {where}"
    assert sorted(c for cards in m.hand_by_rank.values() for c in cards) == sorted(own), where


def form_commands(state: DealState, seat: int) -> list[Command]:
    """Every command of the menu's forms (the best-effort ones apart), over every card code."""
    hand = state.hands[seat]
    players = range(state.players)
    if state.phase == ANSWER:
        return [Answer(yes=True), Answer(yes=False)]
    out: list[Command] = [AskPartner(p) for p in players]
    out.append(PickUpPonytail())
    if state.phase == DRAW:
        out += [Draw(), DeclinePile()]
        top = state.pile_top
        if top is not None and CARDS[top].is_natural:
            rank = CARDS[top].rank
            out.append(TakePile((MeldSpec((TOP,), rank),)))
            for a, b in combinations(hand, 2):
                kinds = sorted((CARDS[a].is_wild, CARDS[b].is_wild))
                same = [c for c in (a, b) if CARDS[c].is_natural and CARDS[c].rank == rank]
                if len(same) == 2 or (len(same) == 1 and kinds == [False, True]):
                    out.append(TakePile((MeldSpec((TOP, a, b), rank),)))
    if state.phase == PLAY:
        out += [Discard(c) for c in hand]
        for triple in combinations(hand, 3):
            infos = [CARDS[c] for c in triple]
            ranks = {i.rank for i in infos if i.is_natural}
            wilds = sum(1 for i in infos if i.is_wild)
            if (
                len(ranks) == 1
                and wilds + sum(1 for i in infos if i.is_natural) == 3
                and wilds <= 1
            ):
                out.append(Meld((MeldSpec(triple, ranks.pop()),)))
            elif wilds == 3:
                out.append(Meld((MeldSpec(triple, WILD_RANK),)))
        side = state.side_of[seat]
        for rank in {m.rank for m in state.melds[side]}:
            for card in hand:
                c = CARDS[card]
                if c.is_wild or (c.is_natural and c.rank == rank):
                    out.append(Meld((MeldSpec((card,), rank),)))
    return out


def check_complete(state: DealState, seat: int, m: Menu, where: str) -> int:
    """Every accepted command of the forms has its shape listed; returns how many there were."""
    listed = {shape(c) for c in m.moves}
    count = 0
    for command in form_commands(state, seat):
        if accepted(state, seat, command):
            count += 1
            assert shape(command) in listed, f"accepted but not listed: {command!r} {where}"
    return count


def with_hidden_shuffled(state: DealState, seat: int, rng: random.Random) -> DealState:
    """A copy in which every card ``seat`` may not see (the other hands, the stock, the
    face-down ponytails, his own included, and the deck) is shuffled among those places,
    each keeping its count."""
    new = state.clone()
    places = [new.hands[s] for s in range(new.players) if s != seat]
    places += [new.stock, new.deck]
    places += [new.ponytails[s] for s in range(new.players) if not new.ponytail_up[s]]
    pool = [c for place in places for c in place]
    rng.shuffle(pool)
    for place in places:
        size = len(place)
        place[:] = pool[:size]
        del pool[:size]
    return new


def check_secrecy(state: DealState, rng: random.Random, where: str) -> None:
    """Every seat's menu is the same whatever the cards it may not see."""
    for seat in range(state.players):
        shuffled = with_hidden_shuffled(state, seat, rng)
        assert menu(shuffled, seat) == menu(state, seat), (
            f"seat {seat}'s menu depends on hidden cards {where}"
        )


# --- the driver ---------------------------------------------------------------------------


@dataclass
class Sampled:
    complete_checks: int = 0
    accepted_forms: int = 0
    secrecy_checks: int = 0


def play_deal_checking_menus(
    cfg: Config, seed: int, sample_every: int, legal_share: float = 0.5
) -> tuple[DealState, Sampled]:
    """One deal, every check at every step (the sampled ones every ``sample_every`` steps on
    average), each command from the menu or, with probability ``legal_share``, from the
    random legal player; returns the final state and what was sampled."""
    rng = random.Random(f"menu-player:{seed}")
    app = CanastaApp(env=MEMORY_ENV, random=SeededRandom(random.Random(f"app:{seed}")))
    table_id = new_table(app, cfg.entry, cfg.players, always_frozen=cfg.always_frozen)
    deal_id: UUID = app.start_game(table_id, HOST)
    deal = app.get_deal(deal_id)
    sampled = Sampled()
    for _ in range(MAX_COMMANDS_PER_DEAL):
        state = deal.state
        where = f"[seed={seed} {cfg.id} step={deal.version} phase={state.phase}]"
        seat = seat_to_act(state)
        if seat is None:
            assert state.phase == OVER
            for s in range(state.players):
                assert not menu(state, s).moves, where
            return state, sampled
        m = menu(state, seat)
        check_listed_moves(state, seat, m, rng, where)
        for other in range(state.players):
            mine = m if other == seat else menu(state, other)
            check_names_own_cards(state, other, mine, where)
            if other != seat:
                assert not mine.moves, f"seat {other} is not to act but has moves {where}"
                assert not mine.go_out.allowed, where
        if rng.randrange(sample_every) == 0 and state.phase != CUT:
            sampled.accepted_forms += check_complete(state, seat, m, where)
            sampled.complete_checks += 1
        if rng.randrange(sample_every) == 0:
            check_secrecy(state, rng, where)
            sampled.secrecy_checks += 1
        if rng.random() < legal_share:
            command = legal_command(state, seat, rng)
        else:
            command = m.moves[menu_choice([COMMAND_NAMES[type(c)] for c in m.moves], rng)]
        deal = app.act(deal_id, state.player_ids[seat], command)
        assert deal.version > 0, where
    raise AssertionError(f"the deal did not end in {MAX_COMMANDS_PER_DEAL} commands")


PROPERTY_SETTINGS = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=False,
)
SEEDS = st.integers(min_value=0, max_value=2**64 - 1)
ALL_CONFIGS = pytest.mark.parametrize("cfg", CONFIGS, ids=[c.id for c in CONFIGS])


@ALL_CONFIGS
@settings(PROPERTY_SETTINGS, max_examples=1)
@given(seed=SEEDS)
def test_every_listed_move_is_accepted_in_random_deals(cfg: Config, seed: int) -> None:
    """A deal of every entry: every check at every step, the sampled ones every 8 steps on
    average."""
    state, sampled = play_deal_checking_menus(cfg, seed, sample_every=8)
    assert state.scores is not None, "the deal ended unscored"
    assert sampled.complete_checks and sampled.secrecy_checks


@pytest.mark.slow  # more deals, every sampled check at every step: a few minutes
@ALL_CONFIGS
@settings(PROPERTY_SETTINGS, max_examples=4)
@given(seed=SEEDS)
def test_menu_is_complete_and_secret_at_every_step(cfg: Config, seed: int) -> None:
    """The same over more deals, with completeness and secrecy checked at every step."""
    play_deal_checking_menus(cfg, seed, sample_every=1)


def test_menu_player_opens_and_goes_out() -> None:
    """The best-effort forms are found in practice: in a few classic deals played from the
    menu alone, both sides make their initial meld and a player goes out."""
    reasons = set()
    for seed in range(4):
        state, _ = play_deal_checking_menus(Config("classic", 4), seed, 50, legal_share=0)
        assert all(state.opened.values()), f"[seed={seed}] a side never opened"
        reasons.add(state.end_reason)
    assert "went_out" in reasons, reasons
