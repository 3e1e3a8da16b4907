"""``make demo``: one complete random legal game, with its public logs and scores."""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

from app.application import CanastaApp
from app.autoplay import SeededRandom, new_table, play_game
from app.settings import Settings, eventsourcing_env
from app.signing import Keyring, load_keyring
from domain.deal import Deal
from domain.table import Table
from projections.discard_log import describe, public_discard_log

BREAKDOWN = (
    ("melds", "melds"),
    ("canasta_bonus", "canastas"),
    ("going_out", "out"),
    ("concealed", "concealed"),
    ("red_threes", "red 3s"),
    ("hands", "in hand"),
    ("penalties", "penalties"),
    ("ponytails", "ponytails"),
    ("cut_bonus", "cut"),
    ("total", "deal"),
)
ALWAYS_SHOWN = {"melds", "canasta_bonus", "going_out", "red_threes", "hands", "total"}


def score_table(table: Table, deal: Deal) -> list[str]:
    """The deal's breakdown per side (R-SCORE-1) and the running totals; a column an entry
    does not use (and that is zero) is left out."""
    scores = deal.state.scores or {}
    columns = [
        (key, title)
        for key, title in BREAKDOWN
        if key in ALWAYS_SHOWN or any(b.get(key) for b in scores.values())
    ]
    header = "    side " + "".join(f"{title:>10}" for _, title in columns) + f"{'total':>10}"
    lines = [header]
    for side, b in sorted(scores.items()):
        cells = "".join(f"{b.get(key, 0):>10}" for key, _ in columns)
        lines.append(f"    {side:<4} {cells}{table.totals[side]:>10}")
    return lines


def play_demo(
    *,
    entry: str = "classic",
    players: int = 4,
    always_frozen: bool = False,
    seed: int | None = None,
    data_dir: Path | None = None,
    max_deals: int = 100,
) -> int:
    seed = seed if seed is not None else random.SystemRandom().randrange(1 << 32)
    rng = random.Random(seed)  # the players' choices; the table's chance follows the seed too
    with tempfile.TemporaryDirectory(prefix="canasta-demo-") as tmp:
        store = data_dir or Path(tmp)
        settings = Settings(data_dir=store)
        # The store's key signs the records, as a server's would (a throwaway store's, its own).
        keys = load_keyring(settings) if data_dir else Keyring.ephemeral()
        app = CanastaApp(env=eventsourcing_env(settings), random=SeededRandom(seed), keys=keys)
        option = ", always_frozen" if always_frozen else ""
        print(
            f"canasta demo: {entry}, {players} players{option}, seed {seed} (the same seed "
            "replays the same game: shuffles follow it, which only a demo may do)"
        )
        print(f"event store: {store / 'canasta.sqlite'}")
        table_id = new_table(app, entry, players, always_frozen=always_frozen)
        started = time.perf_counter()

        def report(table: Table, deal: Deal) -> None:
            st = deal.state
            sit_out = sorted(set(range(st.players)) - set(st.order))
            how = st.end_reason or "?"
            if st.went_out is not None:
                how += f" by seat {st.went_out}" + (" (concealed)" if st.concealed else "")
            print(
                f"\n== deal {st.number}: dealer seat {st.dealer}, cutter seat {st.cutter}, "
                f"sitting out {sit_out or 'nobody'}, {deal.version} events, ended: {how} "
                f"[{time.perf_counter() - started:.1f}s]",
                flush=True,
            )
            print("  public discard log:")
            for entry_ in public_discard_log(app.events.get(deal.id)):
                print(f"    {entry_['step']:>4}  {describe(entry_)}")
            print("  scores:")
            for line in score_table(table, deal):
                print(line)

        try:
            table = play_game(app, table_id, rng, max_deals=max_deals, on_deal=report)
        finally:
            app.close()
        if table.winners:
            print(f"\ngame over after {len(table.deal_scores)} deals: winners {table.winners}")
        else:
            print(
                f"\ngame stopped after {len(table.deal_scores)} deals (no winner): random "
                "players rarely reach this entry's target; raise --max-deals to play on"
            )
        print("final totals: " + ", ".join(f"{s} {t}" for s, t in sorted(table.totals.items())))
    sys.stdout.flush()
    return 0
