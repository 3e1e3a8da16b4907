"""An HTTP client of the game server, and players that play legal moves through it.

Every command goes through HTTP, sequenced and with what the sender believes is current
(R-CMD-1). To choose a legal move, a player reads the deal's full state from a *shadow*: a
second ``CanastaApp`` of the test process on the same database, used read-only (the server
never shows a full state to anyone but an auditor, R-VIEW-4). The shadow is only a move
generator; what the tests assert comes from HTTP answers and from the store.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import httpx

from app.application import CanastaApp
from app.schemas import command_body
from app.settings import Settings, eventsourcing_env
from domain.cards import CARDS
from domain.commands import (
    TOP,
    Command,
    Meld,
    MeldSpec,
    TakePile,
)
from domain.errors import RuleViolation
from domain.legal import legal_command, seat_to_act
from domain.rules import decide
from domain.state import DealState
from domain.variants import get_variant
from tests.support.http import expectation, move_from_menu
from tests.support.openapi import Contract

JSON = dict[str, Any]
TIMEOUT_SECONDS = 30.0


class ServerGone(Exception):
    """The request got no answer: the connection failed or was cut (the server died)."""


@dataclass
class Player:
    name: str
    token: str
    seq: int = 0  # the last sequence number this player used (R-CMD-1)

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq


class Api:
    """The HTTP API as a client sees it.

    Every request opens its own connection (``Connection: close``), so that with several
    uvicorn workers the requests are spread over the processes. (It also avoids a fixed
    ~40 ms per request on kept-alive connections to ``uvicorn --workers N``: its listening
    socket leaves Nagle's algorithm on, uvicorn issue #3149.)"""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        #: When set, every answer is checked against the served OpenAPI document.
        self.contract: Contract | None = None
        self.http = httpx.Client(
            base_url=base_url,
            timeout=TIMEOUT_SECONDS,
            headers={"Connection": "close"},
            limits=httpx.Limits(max_keepalive_connections=0),
        )

    def close(self) -> None:
        self.http.close()

    def call(
        self,
        method: str,
        path: str,
        *,
        player: Player | None = None,
        json: Any = None,
        params: dict[str, Any] | None = None,
        expect: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        headers = {**(player.auth if player is not None else {}), **(headers or {})}
        try:
            response = self.http.request(method, path, json=json, params=params, headers=headers)
        except httpx.TransportError as exc:
            raise ServerGone(f"{method} {path}: {exc!r}") from exc
        where = f"{method} {path} {json!r} -> {response.status_code} {response.text}"
        assert response.status_code < 500, "server error: " + where
        if expect is not None:
            assert response.status_code == expect, where
        if self.contract is not None:
            self.contract.check(response)
        return response

    def get(
        self, path: str, *, headers: dict[str, str] | None = None, params: Any = None
    ) -> httpx.Response:
        """``call`` with httpx's ``Client.get`` arguments, for the helpers written for any
        client (``tests.support.http``)."""
        return self.call("GET", path, headers=headers, params=params)

    def post(
        self, path: str, *, json: Any = None, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        """``call`` with httpx's ``Client.post`` arguments (as ``get``)."""
        return self.call("POST", path, json=json, headers=headers)

    def check_against_the_document(self) -> Contract:
        """From now on, every answer is checked against the server's ``/openapi.json``."""
        self.contract = Contract(self.call("GET", "/openapi.json", expect=200).json())
        return self.contract

    # --- accounts and tables -------------------------------------------------------------
    def register(self, name: str) -> Player:
        body = self.call("POST", "/players", json={"name": name}, expect=201).json()
        assert body["name"] == name
        return Player(name, body["token"])

    def create_table(
        self, host: Player, entry: str, players: int, *, always_frozen: bool = False
    ) -> str:
        body = {"entry": entry, "players": players, "options": {"always_frozen": always_frozen}}
        table_id: str = self.call("POST", "/tables", player=host, json=body, expect=201).json()[
            "id"
        ]
        return table_id

    def seated_table(
        self, players: list[Player], entry: str = "classic", *, always_frozen: bool = False
    ) -> str:
        """A new table of ``entry`` for ``len(players)``, hosted by the first, each player
        seated in his room seat (not started)."""
        table = self.create_table(players[0], entry, len(players), always_frozen=always_frozen)
        for seat, player in enumerate(players):
            self.join(player, table, seat)
        return table

    def join(self, player: Player, table_id: str, seat: int) -> None:
        answer = self.call(
            "POST", f"/tables/{table_id}/seats", player=player, json={"seat": seat}, expect=200
        )
        assert answer.json() == {"seat": seat}

    def choose_teams(self, host: Player, table_id: str, teams: list[list[int]]) -> JSON:
        body: JSON = self.call(
            "PUT", f"/tables/{table_id}/teams", player=host, json={"teams": teams}, expect=200
        ).json()
        return body

    def start(self, host: Player, table_id: str, body: JSON | None = None) -> str:
        """Start the game; ``body`` fixes chance or earlier scores, which only a server set up
        for tests accepts (``CANASTA_ALLOW_STACKED_DECKS``)."""
        answer = self.call("POST", f"/tables/{table_id}/start", player=host, json=body, expect=201)
        deal: str = answer.json()["deal"]
        return deal

    def next_deal(self, host: Player, table_id: str) -> str:
        deal: str = self.call("POST", f"/tables/{table_id}/deals", player=host, expect=201).json()[
            "deal"
        ]
        return deal

    def table(self, table_id: str) -> JSON:
        body: JSON = self.call("GET", f"/tables/{table_id}", expect=200).json()
        return body

    # --- deals ---------------------------------------------------------------------------
    def deal(self, deal_id: str, player: Player | None = None, *, spectator: bool = False) -> JSON:
        params = {"as": "spectator"} if spectator else None
        body: JSON = self.call(
            "GET", f"/deals/{deal_id}", player=player, params=params, expect=200
        ).json()
        return body

    def events(self, deal_id: str, player: Player | None = None, after: int = 0) -> list[JSON]:
        body: list[JSON] = self.call(
            "GET", f"/deals/{deal_id}/events", player=player, params={"after": after}, expect=200
        ).json()
        return body

    def send(self, deal_id: str, player: Player, request: JSON) -> httpx.Response:
        return self.call("POST", f"/deals/{deal_id}/commands", player=player, json=request)


def play_from_menu(
    api: Api, player: Player, deal: str, rng: random.Random, prefer: tuple[str, ...] = ()
) -> bool:
    """One move of ``player`` chosen at random from his move menu (``GET /deals/{id}/moves``)
    if he is to act (``tests.support.http.move_from_menu`` through ``api``)."""
    return move_from_menu(api, player.auth, deal, rng, prefer)


# --- commands ----------------------------------------------------------------------------


def scoring_candidates(st: DealState, seat: int) -> list[Command]:
    """Moves that score, most first: take the pile with a natural pair of its top card (and
    lay other sets at once); meld every set, pair with a wild and card of the side's melds,
    then discard. Without them a random player rarely reaches the higher initial minimums
    (R-INIT-1) and a game can last a hundred deals."""
    if st.phase not in ("draw", "play"):
        return []
    hand = st.hands[seat]
    melded = {m.rank for m in st.melds[st.side_of[seat]]}
    naturals: dict[str, list[str]] = {}
    wilds = []
    for card in hand:
        if CARDS[card].is_natural:
            naturals.setdefault(CARDS[card].rank, []).append(card)
        elif CARDS[card].is_wild:
            wilds.append(card)
    sets = [cards for rank, cards in naturals.items() if len(cards) >= 3 or rank in melded]
    pairs = [cards for rank, cards in naturals.items() if len(cards) == 2 and rank not in melded]
    melds = sets + [[*pair, wild] for pair, wild in zip(pairs, wilds, strict=False)]
    if st.phase == "draw":
        top = st.pile_top
        pair = naturals.get(CARDS[top].rank, [])[:2] if top and CARDS[top].is_natural else []
        if len(pair) < 2:
            return []
        assert top is not None
        others = [MeldSpec(tuple(s)) for s in sets if CARDS[s[0]].rank != CARDS[top].rank]
        first = MeldSpec((TOP, *pair))
        return [TakePile((first, *others)), TakePile((first,))]
    if not melds:
        return []
    used = {card for meld in melds for card in meld}
    rest = sorted((c for c in hand if c not in used), key=lambda c: CARDS[c].is_wild)
    specs = tuple(MeldSpec(tuple(meld)) for meld in melds)
    return [Meld(specs, discard=rest[0]) if rest else Meld(specs)]


def choose_command(st: DealState, seat: int, rng: random.Random) -> Command:
    """A legal command for ``seat``: a scoring move if the rules accept one, else one of the
    random legal player (domain.legal)."""
    for command in scoring_candidates(st, seat):
        try:
            decide(st, seat, command)
        except RuleViolation:
            continue
        return command
    return legal_command(st, seat, rng)


def open_shadow(settings: Settings) -> CanastaApp:
    """A read-only ``CanastaApp`` of the test process on the server's database."""
    return CanastaApp(env=eventsourcing_env(settings))


# --- games -------------------------------------------------------------------------------

#: Team A of three on the even seats (R-SEAT-2, extra_six): 5p 3+2, 6p and extra_six 3+3.
TEAMS: dict[tuple[str, int], list[list[int]]] = {
    ("classic", 5): [[0, 2, 4]],
    ("classic", 6): [[0, 2, 4]],
    ("extra_six", 6): [[0, 2, 4]],
}


@dataclass
class Sent:
    """One command request and its answer (``status`` None: no answer came)."""

    deal: str
    player: Player
    request: JSON
    status: int | None = None
    answer: JSON | None = None

    @property
    def seq(self) -> int:
        seq: int = self.request["seq"]
        return seq


@dataclass
class Game:
    """One table played to its end through HTTP by players choosing legal moves."""

    api: Api
    shadow: CanastaApp
    entry: str = "classic"
    players: int = 4
    always_frozen: bool = False
    seed: int = 0
    prefix: str = "p"
    seats: list[Player] = field(default_factory=list)
    table_id: str = ""
    deals: list[str] = field(default_factory=list)
    journal: list[Sent] = field(default_factory=list)
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"{self.prefix}:{self.seed}")

    @property
    def label(self) -> str:
        frozen = " always_frozen" if self.always_frozen else ""
        return f"{self.entry} {self.players}p{frozen} (table {self.table_id})"

    @property
    def host(self) -> Player:
        return self.seats[0]

    @property
    def target(self) -> int:
        return get_variant(self.entry).target

    def set_up(self) -> None:
        """Register the players, create the table, take every seat, choose the teams."""
        self.seats = [self.api.register(f"{self.prefix}{i}") for i in range(self.players)]
        self.table_id = self.api.seated_table(
            self.seats, self.entry, always_frozen=self.always_frozen
        )
        teams = TEAMS.get((self.entry, self.players))
        if teams is not None:
            table = self.api.choose_teams(self.host, self.table_id, teams)
            assert table["sides"]["A"] == teams[0]

    def start(
        self,
        scores_before: dict[str, int] | None = None,
        *,
        deck: list[str] | None = None,
        dealer: int | None = None,
    ) -> str:
        """Start the game; the fixed earlier scores, deck and first dealer need a server set
        up for tests (R-DEAL-3)."""
        fixed = {"scores_before": scores_before, "deck": deck, "dealer": dealer}
        body = {key: value for key, value in fixed.items() if value is not None} or None
        self.deals.append(self.api.start(self.host, self.table_id, body))
        return self.deals[-1]

    def resume(self) -> None:
        """Learn the table's deals from the server (after a restart, a deal opened by a
        request that got no answer may exist or not)."""
        self.deals = list(self.api.table(self.table_id)["deals"])

    def next_deal(self) -> str:
        self.deals.append(self.api.next_deal(self.host, self.table_id))
        return self.deals[-1]

    def player_named(self, name: str) -> Player:
        return next(p for p in self.seats if p.name == name)

    def next_request(self, deal_id: str) -> tuple[Player, JSON] | None:
        """The acting player and his next command request, or None when the deal is over."""
        deal = self.shadow.get_deal(UUID(deal_id))
        seat = seat_to_act(deal.state)
        if seat is None:
            return None
        command = choose_command(deal.state, seat, self.rng)
        player = self.seats[seat]
        request = {
            "seq": player.next_seq(),
            "expect": expectation(deal),
            "command": command_body(command),
        }
        return player, request

    def send(self, deal_id: str, player: Player, request: JSON) -> Sent:
        """Send a request, journaled before it leaves (an unanswered one stays in doubt)."""
        sent = Sent(deal_id, player, request)
        self.journal.append(sent)
        response = self.api.send(deal_id, player, request)
        sent.status = response.status_code
        sent.answer = response.json()
        return sent

    def play_command(self, deal_id: str) -> Sent | None:
        """One legal command of the seat to act; it must be accepted (None: deal over)."""
        chosen = self.next_request(deal_id)
        if chosen is None:
            return None
        player, request = chosen
        sent = self.send(deal_id, player, request)
        assert sent.status == 200, f"{self.label}: {request} -> {sent.status} {sent.answer}"
        assert sent.answer is not None and sent.answer["replayed"] is False
        assert sent.answer["step"] > request["expect"]["step"]
        return sent

    def play_deal(self, deal_id: str) -> None:
        while self.play_command(deal_id) is not None:
            pass

    def play(
        self,
        *,
        max_deals: int = 40,
        after_deal: Callable[[Game, str], None] | None = None,
    ) -> JSON:
        """Start the game and play deals until it ends; returns the table's final view."""
        deal_id = self.start() if not self.deals else self.deals[-1]
        for _ in range(max_deals):
            self.play_deal(deal_id)
            if after_deal is not None:
                after_deal(self, deal_id)
            table = self.api.table(self.table_id)
            if table["status"] != "playing":
                return table
            deal_id = self.next_deal()
        raise AssertionError(f"{self.label}: no side reached {self.target} in {max_deals} deals")
