"""Every bot level plays complete deals of every entry and player count, every command
accepted by the rules (a refusal would raise from the application service), and ``basic``
beats ``random`` (docs/bots.md; the real figures are the arena's, ``make bench``)."""

from __future__ import annotations

import random

import pytest

from app.application import CanastaApp
from app.arena import MEMORY_ENV, Setup, play_bot_deal, run
from app.autoplay import HOST, SeededRandom, new_table
from bots import LEVELS
from bots.strong import Strong
from domain.legal import seat_to_act
from tests.property.test_move_menu import CONFIGS, Config

PAIRS = [("random", "basic"), ("basic", "basic"), ("random", "random"), ("strong", "basic")]
#: ``strong`` with a tiny fixed budget: one sampled world per searched move.
TINY = {"strong": Strong(rollouts=1, ms=None)}


@pytest.mark.parametrize("cfg", CONFIGS, ids=[c.id for c in CONFIGS])
@pytest.mark.parametrize("levels", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_every_level_plays_whole_deals(cfg: Config, levels: tuple[str, str]) -> None:
    """Two deals of each entry, levels alternating around the table: each ends and is
    scored, and no command was refused."""
    for seed in range(1 if "strong" in levels else 2):  # strong's search costs more
        app = CanastaApp(env=MEMORY_ENV, random=SeededRandom(random.Random(f"lv:{seed}")))
        table_id = new_table(app, cfg.entry, cfg.players, always_frozen=cfg.always_frozen)
        deal_id = app.start_game(table_id, HOST)
        rngs = [random.Random(f"bot:{seed}:{s}") for s in range(cfg.players)]
        target = app.get_table(table_id).target
        deal = play_bot_deal(app, deal_id, lambda s: levels[s % 2], rngs, target, bots=TINY)
        where = f"[{cfg.id} {levels} seed={seed}]"
        assert seat_to_act(deal.state) is None, f"the deal did not end {where}"
        assert deal.state.scores is not None, f"the deal ended unscored {where}"


def test_levels_are_named() -> None:
    assert set(LEVELS) == {"random", "basic", "strong"}


def test_basic_beats_random() -> None:
    """A small seeded arena: classic, four players, 20 games, sides swapped every other game."""
    setup = Setup("classic", 4, ("basic", "random"), games=20, seed=7)
    results = run(setup, jobs=1)
    assert all(r.finished for r in results)
    wins = sum(1 for r in results if r.winners == ["basic"])
    assert wins >= 16, f"basic won {wins} of 20"
