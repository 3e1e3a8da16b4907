"""Complete games through HTTP against a real uvicorn server (R-GAME-1, R-CMD-1, R-VIEW-*).

Four tables are played at once, each in its own thread, from registration to the end of the
game (a side reaching the target): ``classic`` 4p, ``classic`` 5p with its sit-outs,
``extra_six`` with two teams of three, and ``classic`` 4p with ``always_frozen``. The server is
a real ``uvicorn app.main:app`` process: on the embedded SQLite file as ``make run`` starts it,
and on a migrated PostgreSQL with two workers, so that the requests of one game are served by
different processes sharing the database.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tests.e2e.checks import check_finished_deal, check_game_over
from tests.e2e.client import JSON, Game
from tests.e2e.conftest import Backend

#: CPU seconds each worker must have spent serving the games (they take many more).
MIN_WORKER_CPU_SECONDS = 0.5

GAMES = [
    ("classic", 4, False),
    ("classic", 5, False),
    ("extra_six", 6, False),
    ("classic", 4, True),
]


def check_seating(game: Game, view: JSON) -> None:
    """R-SEAT-2: 5p sits one member of team A out per deal, in room-seat order; 4p and
    extra_six sit nobody out. always_frozen is shown as the table's option."""
    number = view["number"]
    if (game.entry, game.players) == ("classic", 5):
        assert view["sitting_out"] == [[0, 2, 4][(number - 1) % 3]], view["sitting_out"]
        assert len(view["order"]) == 4
    else:
        assert view["sitting_out"] == []
    assert view["options"].get("always_frozen", False) is game.always_frozen
    assert view["pile"]["always_frozen"] is game.always_frozen


def check_open_table(game: Game) -> None:
    """R-SEAT-3: the entry, its options and the teams the host chose are public table data."""
    table = game.api.table(game.table_id)
    assert table["entry"] == game.entry and table["players"] == game.players
    assert table["options"]["always_frozen"] is game.always_frozen
    assert table["status"] == "open" and table["seats"] == [p.name for p in game.seats]
    assert table["target"] == game.target and table["host"] == game.host.name


def check_sit_out_is_refused(game: Game, deal_id: str) -> None:
    """R-SEAT-4: a player sitting the deal out cannot act in it; nothing changes."""
    view = game.api.deal(deal_id)
    out = game.seats[view["sitting_out"][0]]
    expect = {
        "game": game.table_id,
        "deal": view["number"],
        "step": view["step"],
        "turn": view["turn"],
        "phase": view["phase"],
    }
    request = {"seq": out.next_seq(), "expect": expect, "command": {"type": "draw"}}
    answer = game.api.send(deal_id, out, request)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "R-TURN-1"
    assert game.api.deal(deal_id)["step"] == view["step"]


def play_one(backend: Backend, entry: str, players: int, always_frozen: bool, index: int) -> Game:
    game = Game(
        backend.api(),
        backend.shadow(),
        entry=entry,
        players=players,
        always_frozen=always_frozen,
        seed=index,
        prefix=f"g{index}p",
    )
    game.set_up()
    check_open_table(game)

    def after_deal(game: Game, deal_id: str) -> None:
        view = check_finished_deal(game.api, game, deal_id)
        check_seating(game, view)

    first = game.start()
    if players == 5:
        check_sit_out_is_refused(game, first)
    table = game.play(after_deal=after_deal)
    check_game_over(game.api, game, table)
    return game


def test_complete_games_of_every_entry_reach_the_target_through_http_r_game_1(
    backend: Backend,
) -> None:
    """classic 4p, 5p (sit-outs), extra_six and always_frozen: each game is played to its end
    by legal players over HTTP; after every deal the table's totals are the sum of the
    deals' scores and a spectator sees no hand."""
    cpu_before = backend.server.worker_cpu_seconds()
    with ThreadPoolExecutor(max_workers=len(GAMES)) as pool:
        futures = [
            pool.submit(play_one, backend, entry, players, frozen, index)
            for index, (entry, players, frozen) in enumerate(GAMES)
        ]
        games = [future.result() for future in futures]
    for game in games:
        assert game.deals, game.label
        assert all(sent.status == 200 for sent in game.journal), game.label
    # Every worker process served a share of the games (all of them on one database).
    cpu_after = backend.server.worker_cpu_seconds()
    assert len(cpu_after) == backend.server.workers, cpu_after
    busy = {pid: cpu_after[pid] - cpu_before.get(pid, 0.0) for pid in cpu_after}
    assert all(seconds >= MIN_WORKER_CPU_SECONDS for seconds in busy.values()), busy
