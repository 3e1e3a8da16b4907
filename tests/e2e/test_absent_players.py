"""Absent players through real uvicorn (docs/tables.md): in a four-seat game a player leaves
mid-deal, the server's basic bot plays his turns within a second, he takes his seat back and
plays again; another leaves and the host gives the seat to a third person, who plays it.
While away a player sees no hand and his commands are refused with a stable code, and
refusals record nothing; the audit of the deal passes."""

from __future__ import annotations

import random
import time
from typing import Any
from uuid import UUID

from app.routes.audit import deal_report, table_report
from tests.e2e.client import Api, Player
from tests.e2e.conftest import Backend

#: A bot must have moved within this many seconds of its turn (the issue's "within a second").
BOT_SECONDS = 1.0


class Game:
    """A running deal, played by whoever plays each seat now: people from their move menu,
    bots by the server's bot runner."""

    def __init__(self, api: Api, table: str, deal: str, people: dict[str, Player]) -> None:
        self.api, self.table, self.deal, self.people = api, table, deal, people
        self.rng = random.Random(5)
        self.moved: dict[str, int] = {}  # who moved (a person's or a bot's name) -> moves

    def step(self) -> int:
        view = self.api.deal(self.deal, spectator=True)
        assert view["phase"] != "over", "the deal ended before the test was through"
        return int(view["step"])

    def expect(self) -> dict[str, Any]:
        """What is current in the deal (a command's ``expect``)."""
        view = self.api.deal(self.deal, spectator=True)
        keys = {"game": self.table, "deal": view["number"], "step": view["step"]}
        return {**keys, "turn": view["turn"], "phase": view["phase"]}

    def playing(self) -> list[str]:
        return [seat["player"] for seat in self.api.table(self.table)["playing"]]

    def move(self) -> str:
        """One move of whoever is to act; returns his name."""
        step = self.step()
        for name in self.playing():
            if name not in self.people:
                continue
            player = self.people[name]
            menu = self.api.call("GET", f"/deals/{self.deal}/moves", player=player, expect=200)
            body = menu.json()
            if body["moves"] and body["step"] == step:
                moves = body["moves"]  # draws and discards first: the deal lasts
                plain = [m for m in moves if m["type"] in ("draw", "discard", "cut")]
                request = {
                    "seq": body["next_seq"],
                    "expect": body["expect"],
                    "command": self.rng.choice(plain or moves),
                }
                self.api.call(
                    "POST", f"/deals/{self.deal}/commands", player=player, json=request, expect=200
                )
                self.moved[name] = self.moved.get(name, 0) + 1
                return name
        began = time.monotonic()  # a bot is to act: the step moves within a second
        while self.step() == step:
            assert time.monotonic() - began < BOT_SECONDS, f"no bot moved at step {step}"
            time.sleep(0.02)
        seats = {e["seat"] for e in self.api.events(self.deal, after=step) if "seat" in e}
        names = {self.playing()[seat] for seat in seats}
        for name in names:
            self.moved[name] = self.moved.get(name, 0) + 1
        return ",".join(sorted(names))

    def until_moved(self, name: str, limit: int = 200) -> None:
        before = self.moved.get(name, 0)
        for _ in range(limit):
            if self.moved.get(name, 0) > before:
                return
            self.move()
        raise AssertionError(f"{name} did not move in {limit} moves")


def _refused(api: Api, method: str, path: str, player: Player, body: Any, status: int) -> str:
    answer = api.call(method, path, player=player, json=body, expect=status)
    return str(answer.json()["error"]["code"])


def test_leave_takeover_return_and_a_seat_given(backend: Backend) -> None:
    api = backend.api()
    ann, bob, cy, di, eve = (api.register(n) for n in ("ann", "bob", "cy", "di", "eve"))
    table = api.seated_table([ann, bob, cy, di])
    deal = api.start(ann, table)
    game = Game(api, table, deal, {p.name: p for p in (ann, bob, cy, di, eve)})
    for _ in range(6):
        game.move()

    # bob leaves mid-deal: the basic bot plays seat 1 for him.
    left = api.call("POST", f"/tables/{table}/leave", player=bob, expect=200).json()
    stand_in = "bot:basic:1:for:bob"
    assert left == {"seat": 1, "played_by": stand_in}
    view = api.table(table)
    assert view["seats"] == ["ann", "bob", "cy", "di"]
    assert view["playing"][1]["player"] == stand_in and view["playing"][1]["bot"] == "basic"
    assert view["playing"][1]["away"] and view["playing"][1]["reason"] == "left"
    assert view["playing"][1]["since"]
    mine = api.deal(deal, bob)
    assert mine["seat"] is None and mine.get("hand") is None  # away: a spectator's view

    # His commands are refused (and his move menu), with nothing recorded in his log (the
    # bot may move meanwhile: the deal's step is not his to keep).
    last = api.call("GET", f"/tables/{table}", player=bob).json()
    command = {"type": "draw"}
    request = {"seq": last["your_last_seq"] + 1, "expect": game.expect(), "command": command}
    path = f"/deals/{deal}/commands"
    assert _refused(api, "POST", path, bob, request, 403) == "seat_not_yours"
    assert _refused(api, "GET", f"/deals/{deal}/moves", bob, None, 403) == "seat_not_yours"
    after = api.call("GET", f"/tables/{table}", player=bob).json()
    assert after["your_last_seq"] == last["your_last_seq"]
    assert _refused(api, "POST", f"/tables/{table}/leave", bob, None, 409) == "seat_away"

    game.until_moved(stand_in)  # the bot played his turn
    game.until_moved(stand_in)

    # bob takes his seat back with the call that seats him, sees his hand, plays again.
    back = api.call("POST", f"/tables/{table}/seats", player=bob, json={}, expect=200)
    assert back.json() == {"seat": 1}
    view = api.table(table)
    assert view["playing"][1]["player"] == "bob" and not view["playing"][1]["away"]
    assert view["playing"][1]["reason"] == "taken_back"
    assert api.deal(deal, bob)["seat"] == 1 and api.deal(deal, bob)["hand"]
    game.until_moved("bob")

    # Refusals of a give change nothing.
    version = api.table(table)["version"]
    give = f"/tables/{table}/seats/2/give"
    assert _refused(api, "POST", give, ann, {"player": "eve"}, 409) == "seat_not_vacant"
    api.call("POST", f"/tables/{table}/leave", player=cy, expect=200)
    version = api.table(table)["version"]
    assert _refused(api, "POST", give, di, {"player": "eve"}, 403) == "R-SEAT-3"
    assert _refused(api, "POST", give, ann, {"player": "nobody"}, 404) == "not_found"
    assert _refused(api, "POST", give, ann, {"player": "di"}, 400) == "R-SEAT-5"
    assert _refused(api, "POST", f"/tables/{table}/leave", eve, None, 403) == "not_seated"
    assert api.table(table)["version"] == version

    # The host gives cy's vacant seat to eve: she sees its hand and plays it; cy does not.
    given = api.call("POST", give, player=ann, json={"player": "eve"}, expect=200).json()
    assert given["seats"] == ["ann", "bob", "eve", "di"]
    assert given["playing"][2]["player"] == "eve" and given["playing"][2]["reason"] == "given"
    assert api.deal(deal, eve)["seat"] == 2 and api.deal(deal, eve)["hand"]
    assert api.deal(deal, cy)["seat"] is None
    request = {"seq": 1, "expect": game.expect(), "command": command}
    assert _refused(api, "POST", path, cy, request, 403) == "R-CMD-2"  # no seat any more
    game.until_moved("eve")

    # The deal's history says who played each seat, and its audit passes.
    changes = [
        (e["seat"], e["player"], e["reason"])
        for e in api.events(deal)
        if e["kind"] == "SeatPlayerChanged"
    ]
    assert changes == [
        (1, stand_in, "left"),
        (1, "bob", "taken_back"),
        (2, "bot:basic:2:for:cy", "left"),
        (2, "eve", "given"),
    ]
    reader = backend.shadow()
    report = deal_report(reader, UUID(deal))
    assert report.ok, report.to_dict()
    assert table_report(reader, UUID(table)).ok, table_report(reader, UUID(table)).to_dict()
    check_secrecy(api, deal, bob, eve)


def check_secrecy(api: Api, deal: str, bob: Player, eve: Player) -> None:
    """Each event and replayed step as its requester could see it then: bob's seat's own
    cards up to his leave and from his return, none while away; eve's given seat's from the
    give on, none before (her replay of an earlier step is a spectator's)."""
    changes = {
        (e["seat"], e["reason"]): e["step"]
        for e in api.events(deal)
        if e["kind"] == "SeatPlayerChanged"
    }
    left, back, given = changes[(1, "left")], changes[(1, "taken_back")], changes[(2, "given")]

    def own_cards(player: Player, seat: int) -> list[tuple[int, bool]]:
        return [
            (e["step"], "cards" in e)
            for e in api.events(deal, player)
            if e["kind"] in ("CardsDealt", "CardsDrawn") and e.get("seat", seat) == seat
        ]

    for step, shown in own_cards(bob, 1):
        assert shown == (not left < step < back), (step, shown, left, back)
    for step, shown in own_cards(eve, 2):
        assert shown == (step > given), (step, shown, given)
    replay = f"/deals/{deal}/replay"
    then = api.call("GET", replay, player=bob, params={"step": left - 1}, expect=200).json()
    assert then["seat"] == 1 and then["hand"]
    away = api.call("GET", replay, player=bob, params={"step": left + 1}, expect=200).json()
    assert away["seat"] is None and away.get("hand") is None
    before = api.call("GET", replay, player=eve, params={"step": given - 1}, expect=200).json()
    assert before["seat"] is None and before.get("hand") is None
    after = api.call("GET", replay, player=eve, params={"step": given}, expect=200).json()
    assert after["seat"] == 2 and after["hand"]
