"""A bot decides only from what its seat may see (docs/bots.md): in random deals of every
entry, at every step, each level's decision for the seat to act, with the same random seed,
is the same when the cards that seat may not see (the other hands, the stock, the face-down
ponytails, the deck) are shuffled among themselves (``with_hidden_shuffled``, the move
menu's secrecy test's own helper). ``strong`` samples the hidden cards from its seat's
knowledge with its seed, so it too must decide the same."""

from __future__ import annotations

import functools
import random

from hypothesis import given, settings

from app.application import CanastaApp
from app.arena import MEMORY_ENV, play_bot_deal
from app.autoplay import HOST, SeededRandom, new_table
from bots import LEVELS, Bot, PublicMemory, basic, choose
from bots.policy import TUNED, tuned
from bots.strong import Strong
from domain.legal import seat_to_act
from domain.state import DealState
from tests.property.test_move_menu import (
    ALL_CONFIGS,
    PROPERTY_SETTINGS,
    SEEDS,
    Config,
    with_hidden_shuffled,
)

#: Every level; ``strong`` with a fixed count of sampled worlds (no time budget), so that
#: its decision depends on the seed and the view only; and ``strong``'s tuned policies alone
#: (classic's, and each entry's own).
BOTS: dict[str, Bot] = {
    **LEVELS,
    "strong": Strong(rollouts=1, ms=None),
    "tuned": functools.partial(basic.decide, policy=TUNED),
    "tuned-entry": lambda view, menu, rng: basic.decide(view, menu, rng, tuned(view.variant)),
}
#: ``strong`` is asked at every third step only (its search costs the most).
STRONG_EVERY = 3


@ALL_CONFIGS
@settings(PROPERTY_SETTINGS, max_examples=1)
@given(seed=SEEDS)
def test_decisions_ignore_hidden_cards(cfg: Config, seed: int) -> None:
    shuffler = random.Random(f"shuffle:{seed}")
    checked = [0]

    def check(state: DealState, seat: int, memory: PublicMemory) -> None:
        where = f"[seed={seed} {cfg.id} phase={state.phase} seat={seat}]"
        other = with_hidden_shuffled(state, seat, shuffler)
        assert other.hands[seat] == state.hands[seat]
        for level, bot in BOTS.items():
            if level == "strong" and checked[0] % STRONG_EVERY:
                continue
            mine = choose(bot, state, seat, memory, 5000, random.Random(seed))
            theirs = choose(bot, other, seat, memory, 5000, random.Random(seed))
            assert mine == theirs, f"{level} decided {mine} but {theirs} {where}"
        checked[0] += 1

    app = CanastaApp(env=MEMORY_ENV, random=SeededRandom(random.Random(f"app:{seed}")))
    table_id = new_table(app, cfg.entry, cfg.players, always_frozen=cfg.always_frozen)
    deal_id = app.start_game(table_id, HOST)
    rngs = [random.Random(f"bot:{seed}:{s}") for s in range(cfg.players)]
    levels = sorted(LEVELS.keys() - {"strong"})  # the deal is played by the cheap levels
    deal = play_bot_deal(app, deal_id, lambda s: levels[s % len(levels)], rngs, 5000, before=check)
    assert seat_to_act(deal.state) is None
    assert checked[0] > 20
