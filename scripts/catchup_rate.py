"""How fast the background read models catch up with a log written beforehand.

    python scripts/catchup_rate.py postgresql://... [--games 20]

DESTROYS the ``public`` schema of the given database: it migrates it afresh, plays
``--games`` random games (4 players, two deals each) with the read models stopped, then
starts ``ReadModels`` and times how long its background processing takes to reach the log's
head. Prints the log's length, how many events the projections read (each reads only its
topics) and both per second. Uses only ``ReadModels(settings).start()`` and the workers'
``has_processed``, so it measures any version of the projection runner (``app/infra/projection_runner/``).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.application import CanastaApp
from app.autoplay import new_table, play_game
from app.infra.projection_runner import ReadModels
from app.migrations import upgrade
from app.settings import Settings, eventsourcing_env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url", help="a PostgreSQL URL (its public schema is dropped!)")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    with psycopg.connect(args.url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS public CASCADE")
        conn.execute("CREATE SCHEMA public")
    upgrade(args.url)
    settings = Settings(database_url=args.url, postgres_pool_size=2)
    app = CanastaApp(eventsourcing_env(settings))
    try:
        rng = random.Random(args.seed)
        for _ in range(args.games):
            table_id = new_table(app, "classic", 4)
            play_game(app, table_id, rng, max_deals=2)
        head = app.recorder.max_notification_id() or 0
    finally:
        app.close()

    with ReadModels(settings) as read_models:
        read = sum(
            len(
                read_models.log.recorder.select_notifications(
                    start=None, limit=10_000_000, topics=worker.topics
                )
            )
            for worker in read_models.workers.values()
        )
        began = time.monotonic()
        read_models.start()
        while not all(w.has_processed(head) for w in read_models.workers.values()):
            time.sleep(0.01)
        seconds = time.monotonic() - began
    print(
        f"log: {head} events; projections read {read} events in {seconds:.2f} s: "
        f"{head / seconds:.0f} log events/s, {read / seconds:.0f} projected events/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
