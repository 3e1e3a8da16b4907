"""The move menu through a real uvicorn server (``GET /deals/{id}/moves``, docs/api.md).

Players that know no rule play complete deals of every entry and player count: each command is
one of the moves the acting player's menu lists, chosen at random (seeded, preferring melds,
``app.autoplay.menu_choice``), sent with the menu's ``expect`` and ``next_seq`` exactly as
given. Not one command may be refused, and every answer (menus, commands, views, events,
every stream message) is checked against the server's own OpenAPI document. Who acts is learnt from the menus too: the player whose
menu is not empty. On SQLite (one worker) and on PostgreSQL (two workers, so that a menu and the command
sent from it are often served by different processes).
"""

from __future__ import annotations

import random

import pytest

from app.autoplay import menu_choice
from tests.e2e.client import JSON, Api, Game, Player
from tests.e2e.conftest import Backend

#: Every entry and player count (docs/rules/README.md), and classic with always_frozen.
TABLES = [
    ("classic", 2, False),
    ("classic", 3, False),
    ("classic", 4, False),
    ("classic", 5, False),
    ("classic", 6, False),
    ("classic", 4, True),
    ("extra_six", 6, False),
    ("modern_american", 4, False),
    ("ponytail", 4, False),
]
MAX_COMMANDS_PER_DEAL = 3000
#: Every this many commands, every seat's menu is read: only one may list moves, and each
#: names none but its player's cards.
ALL_MENUS_EVERY = 10


def moves_of(api: Api, deal_id: str, player: Player) -> JSON:
    body: JSON = api.call("GET", f"/deals/{deal_id}/moves", player=player, expect=200).json()
    return body


def named_cards(body: JSON) -> set[str]:
    """Every card a menu names: in its moves and its hand."""
    names = {c for cards in body["hand_by_rank"].values() for c in cards}
    for move in body["moves"]:
        names.update(c for meld in move.get("melds", []) for c in meld["cards"])
        names.update(c for c in (move.get("card"), move.get("discard")) if c is not None)
    return names


def check_own_cards(api: Api, deal_id: str, player: Player, body: JSON) -> None:
    """R-VIEW-1: a menu names the player's own cards only (the pile's top only as TOP)."""
    hand = api.deal(deal_id, player)["hand"] or []
    assert named_cards(body) - {"TOP"} <= set(hand), f"{player.name}'s menu names others' cards"
    assert sorted(c for cards in body["hand_by_rank"].values() for c in cards) == sorted(hand)


def play_deal_from_menus(game: Game, deal_id: str, rng: random.Random) -> int:
    """Play the deal to its end from the menus alone; returns the commands sent (all accepted)."""
    api, seats = game.api, game.seats
    last = 0  # the seat that acted last: most often it acts again (after drawing)
    sent = 0
    next_seq = {p.name: 1 for p in seats}
    while True:
        order = [last, *(s for s in range(len(seats)) if s != last)]
        menus = {}
        for seat in order:
            menus[seat] = moves_of(api, deal_id, seats[seat])
            if menus[seat]["moves"] and sent % ALL_MENUS_EVERY:
                break
        acting = [s for s, body in menus.items() if body["moves"]]
        if not acting:
            assert len(menus) == len(seats), "a seat was not asked"
            phase = next(iter(menus.values()))["phase"]
            assert phase == "over", f"{game.label}: nobody may act in phase {phase}"
            return sent
        assert len(acting) == 1, f"{game.label}: seats {acting} all have moves"
        if len(menus) == len(seats):  # every ALL_MENUS_EVERY commands: secrecy too
            for s, body in menus.items():
                check_own_cards(api, deal_id, seats[s], body)
        seat = last = acting[0]
        body = menus[seat]
        player = seats[seat]
        assert body["seat"] == seat and body["step"] == body["expect"]["step"]
        assert body["next_seq"] == next_seq[player.name], "the menu's next_seq is the log's"
        moves = body["moves"]
        move = moves[menu_choice([m["type"] for m in moves], rng)]
        request = {"seq": body["next_seq"], "expect": body["expect"], "command": move}
        answer = api.send(deal_id, player, request)
        assert answer.status_code == 200, f"{game.label}: refused {request}: {answer.text}"
        assert answer.json()["replayed"] is False
        next_seq[player.name] += 1
        sent += 1
        assert sent < MAX_COMMANDS_PER_DEAL, f"{game.label}: the deal does not end"


@pytest.mark.slow  # every entry's deal over HTTP: about a minute per store
@pytest.mark.parametrize(
    ("entry", "players", "always_frozen"),
    TABLES,
    ids=[f"{e}-{n}p" + ("-always_frozen" if f else "") for e, n, f in TABLES],
)
def test_a_player_choosing_only_from_the_menu_is_never_refused(
    backend: Backend, entry: str, players: int, always_frozen: bool
) -> None:
    """A complete deal of each entry and player count, every command from the acting
    player's menu as it is: zero refused commands, and the deal ends scored."""
    game = Game(
        backend.api(),
        backend.shadow(),
        entry=entry,
        players=players,
        always_frozen=always_frozen,
        prefix=f"menu-{entry[:2]}{players}{'f' if always_frozen else ''}-",
    )
    game.set_up()
    deal_id = game.start()
    contract = game.api.check_against_the_document()  # every answer from here on
    sent = play_deal_from_menus(game, deal_id, random.Random(f"menu:{entry}:{players}"))
    view = game.api.deal(deal_id)
    assert view["phase"] == "over" and view["scores"], view
    assert view["step"] > sent  # the automatic events (deal, turn-up, scores) come on top
    # what each player and a spectator read of the finished deal, streams included, fits
    # the served document too (docs/api.md)
    for player in [*game.seats, None]:
        game.api.call("GET", f"/deals/{deal_id}/events", player=player, expect=200)
        game.api.call("GET", f"/deals/{deal_id}/replay", player=player, params={"step": 5})
        stream = game.api.call("GET", f"/deals/{deal_id}/stream", player=player, expect=200)
        shown = contract.check_stream(stream.request.url.path, stream.text)
        assert len(shown) > sent // 2, "the stream of a finished deal holds its history"
    assert contract.checked[("GET", "/deals/{deal_id}/moves")] > sent
    assert contract.checked[("POST", "/deals/{deal_id}/commands")] == sent
    for player in game.seats:
        body = moves_of(game.api, deal_id, player)
        assert body["moves"] == [] and body["go_out"]["lacks"][0] == "not_your_turn"


def test_menu_needs_a_seated_player(backend: Backend) -> None:
    """R-CMD-2: no token is 401, a registered player without a seat 403; a seated player gets
    his menu (the cutter his cuts, every other seat an empty one)."""
    game = Game(backend.api(), backend.shadow(), prefix="menu-auth-")
    game.set_up()
    deal_id = game.start()
    api = game.api
    anonymous = api.call("GET", f"/deals/{deal_id}/moves", expect=401).json()
    assert anonymous["error"]["code"] == "R-CMD-2"
    stranger = api.register("menu-auth-stranger")
    refused = api.call("GET", f"/deals/{deal_id}/moves", player=stranger, expect=403).json()
    assert refused["error"]["code"] == "R-CMD-2"
    bodies = [moves_of(api, deal_id, p) for p in game.seats]
    cutters = [b for b in bodies if b["moves"]]
    assert len(cutters) == 1 and cutters[0]["phase"] == "cut"
    deck = 2 * 54  # classic: two decks (R-DEAL-4: n from 1 to N - 1)
    assert cutters[0]["moves"] == [{"type": "cut", "n": n} for n in range(1, deck)]
    assert all(b["hand_by_rank"] == {} for b in bodies)  # nothing dealt yet
