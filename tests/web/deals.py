"""Short, known deals for the browser tests: a stacked deck and the script of every move.

A browser test starts a table with ``deal.start_body`` (a server set up for tests:
``CANASTA_ALLOW_STACKED_DECKS=true``) and then follows ``deal.steps`` by clicking: each step
names the room seat that acts, the move in words, and the exact command body that the move
sends. Every scripted command is one the move menu (``GET /deals/{id}/moves``) lists for that
seat at that moment, with the menu's own cards (the first cards of each rank in the sorted
hand), so a page that builds its buttons from the menu offers exactly these moves.
``deal.scores`` is the breakdown per side that ``DealScored`` (and the deal view's
``scores``) shows at the end. ``tests/web/test_deals.py`` plays each script over real HTTP
and checks all of that.

The deck is computed by the scenario runner's own code (``app.scenario.deck``, the
documented cut and deal, docs/scenarios.md): the hands, the red-three replacements, the
turned-up card and the draws come out as named here for the given cut.

    deal = classic_four()
    table = create a classic table of 4 (default teams: seats 0 + 2 are side A, 1 + 3 side B)
    POST /tables/{id}/start  json=deal.start_body
    for step in deal.steps:
        the player in room seat step.seat clicks the move step.move describes
        (step.command is what the page must send; step.cards the cards to click, if any)
    the breakdown shown is deal.scores
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.scenario.deck import build_setup
from domain.cards import CARDS
from tests.support.http import Game, open_table, send_with_menu


@dataclass(frozen=True)
class Step:
    """One move of the script."""

    seat: int  # the room seat that acts
    move: str  # the move in words
    #: the body's "command" of POST /deals/{id}/commands, exactly as the move menu lists it
    #: (a meld without a discard has "discard": None there)
    command: dict[str, Any]
    #: the event kinds the move records, in order (what a spectator sees happen)
    events: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """The command's type: cut, draw, meld, discard, ask_partner, answer, ..."""
        return str(self.command["type"])

    @property
    def cards(self) -> list[str]:
        """The hand cards the move names (a meld's cards, then its discard; a discard's card)."""
        named = [c for meld in self.command.get("melds", []) for c in meld["cards"]]
        if self.command.get("discard"):
            named.append(self.command["discard"])
        if "card" in self.command:
            named.append(self.command["card"])
        return named


@dataclass(frozen=True)
class ScriptedDeal:
    """A whole deal: its table, its deck and its moves."""

    name: str
    entry: str
    players: int
    dealer: int
    cut: int
    hands: dict[int, list[str]]  # the cards each room seat is dealt (before red threes)
    stock: list[str]  # the named cards that come off the stock, in order (docs/scenarios.md)
    deck: list[str]  # the stacked deck, top first, as the start body takes it
    steps: list[Step]
    scores: dict[str, dict[str, int]]  # the final breakdown per side, "total" included
    red_threes: dict[str, list[str]] = field(default_factory=dict)  # laid at the deal

    @property
    def start_body(self) -> dict[str, Any]:
        """The body of ``POST /tables/{id}/start`` that deals this deal."""
        return {"dealer": self.dealer, "deck": list(self.deck)}

    @property
    def cutter(self) -> int:
        return self.steps[0].seat

    def final_hands(self) -> dict[int, list[str]]:
        """The cards each seat holds when the deal is over, sorted (from the script)."""
        hands = {seat: list(cards) for seat, cards in self.hands.items()}
        stock = iter(self.stock)
        for side_cards in self.red_threes.values():  # replaced in the dealing order
            for card in side_cards:
                seat = next(s for s, cards in hands.items() if card in cards)
                hands[seat].remove(card)
                hands[seat].append(next(stock))
        next(stock)  # the turned-up card
        for step in self.steps:
            if step.kind == "draw":
                hands[step.seat].append(next(stock))
            for card in step.cards:
                hands[step.seat].remove(card)
        return {seat: sorted(cards) for seat, cards in hands.items()}


def _deck(entry: str, players: int, dealer: int, cut: int, hands: Any, stock: Any) -> list[str]:
    scenario = {
        "entry": entry,
        "players": players,
        "deal": {
            "dealer": dealer,
            "cut": cut,
            "hands": {str(seat): cards for seat, cards in hands.items()},
            "stock": stock,
        },
    }
    return build_setup(scenario, "scripted deal").deck


def deck_for(
    entry: str, players: int, dealer: int, cut: int, hands: dict[int, list[str]], stock: list[str]
) -> list[str]:
    """The stacked deck (top first, the start body's ``deck``) that, cut after ``cut`` cards,
    deals ``hands`` by room seat, then turns up and draws ``stock`` (docs/scenarios.md)."""
    return _deck(entry, players, dealer, cut, hands, stock)


def _cards(text: str) -> list[str]:
    """ "AS/1 AH/1" -> ["AS/1", "AH/1"]."""
    return text.split()


def _meld(*cards: str) -> dict[str, Any]:
    return {"cards": list(cards), "rank": CARDS[cards[0]].rank}


def classic_four(cut: int = 54) -> ScriptedDeal:
    """``classic`` for four players, default teams (seats 0 + 2 are side A, 1 + 3 side B),
    seat 3 deals, so seat 0 cuts (the dealer's left, R-DEAL-4) and plays first.

    Seat 2 is dealt a red three, laid and replaced at once (R-DEAL-6); the pile starts with
    5♥. Seat 0 draws, opens with three aces (60, the minimum at 0 points is 50, R-INIT-1)
    and discards; seats 1 and 2 draw and discard; seat 3 draws, asks his partner (seat 1)
    "may I go out?" (R-OUT-3), who says yes; seat 3 lays seven kings (a natural canasta,
    70: his side's initial meld) and then the four queens, discarding his last card: he
    goes out, concealed (R-OUT-5: he had laid nothing before this turn). ``cut`` is the
    number of cards seat 0 lifts (1 to 107); the deck is stacked for that cut.
    """
    hands = {
        0: _cards("AS/1 AH/1 AD/1 4S/1 5S/1 6S/1 7S/1 8S/1 9S/1 10S/1 JS/1"),
        1: _cards("4D/1 5D/1 6D/1 7D/1 8D/1 9D/1 10D/1 JD/1 4C/1 5C/1 6C/1"),
        2: _cards("3H/1 7C/1 8C/1 9C/1 10C/1 JC/1 4S/2 5S/2 6S/2 7S/2 8S/2"),
        3: _cards("KS/1 KH/1 KD/1 KC/1 KS/2 KH/2 KD/2 QS/1 QH/1 QD/1 QC/1"),
    }
    # The replacement of seat 2's red three, the card turned up, then each player's draw.
    stock = ["9S/2", "5H/1", "4H/1", "6H/1", "7H/1", "9C/2"]
    kings = ("KC/1", "KD/1", "KD/2", "KH/1", "KH/2", "KS/1", "KS/2")
    steps = [
        Step(
            0,
            f"seat 0 cuts the deck, lifting {cut} cards",
            {"type": "cut", "n": cut},
            ("DeckCut", "CardsDealt", "RedThreeLaid", "CardsDrawn", "CardTurnedUp", "PlayStarted"),
        ),
        Step(0, "seat 0 draws a card from the stock (4♥)", {"type": "draw"}, ("CardsDrawn",)),
        Step(
            0,
            "seat 0 melds three aces, his side's initial meld (60)",
            {"type": "meld", "melds": [_meld("AD/1", "AH/1", "AS/1")], "discard": None},
            ("MeldLaid",),
        ),
        Step(0, "seat 0 discards J♠", {"type": "discard", "card": "JS/1"}, ("CardDiscarded",)),
        Step(1, "seat 1 draws a card from the stock (6♥)", {"type": "draw"}, ("CardsDrawn",)),
        Step(1, "seat 1 discards 4♣", {"type": "discard", "card": "4C/1"}, ("CardDiscarded",)),
        Step(2, "seat 2 draws a card from the stock (7♥)", {"type": "draw"}, ("CardsDrawn",)),
        Step(
            2,
            "seat 2 discards 8♠ (deck 2)",
            {"type": "discard", "card": "8S/2"},
            ("CardDiscarded",),
        ),
        Step(
            3, "seat 3 draws a card from the stock (9♣, deck 2)", {"type": "draw"}, ("CardsDrawn",)
        ),
        Step(
            3,
            "seat 3 asks his partner, seat 1: may I go out?",
            {"type": "ask_partner", "partner": 1},
            ("PartnerAsked",),
        ),
        Step(1, "seat 1 answers yes", {"type": "answer", "yes": True}, ("PartnerAnswered",)),
        Step(
            3,
            "seat 3 melds seven kings: a natural canasta, his side's initial meld (70)",
            {"type": "meld", "melds": [_meld(*kings)], "discard": None},
            ("MeldLaid",),
        ),
        Step(
            3,
            "seat 3 melds four queens and discards 9♣: he goes out",
            {"type": "meld", "melds": [_meld("QC/1", "QD/1", "QH/1", "QS/1")], "discard": "9C/2"},
            ("MeldLaid", "CardDiscarded", "WentOut", "DealScored"),
        ),
    ]
    # Side A: aces 60; red three 100; left in hand: seat 0 4♠ 5♠ 6♠ 7♠ 4♥ (25) 8♠ 9♠ 10♠ (30),
    # seat 2 7♣ 4♠ 5♠ 6♠ 7♠ 7♥ (30) 8♣ 9♣ 10♣ J♣ 9♠ (50): -135.
    # Side B: kings 70 + queens 40; natural canasta 500; going out 100, concealed 100; left in
    # seat 1's hand: 4♦ 5♦ 6♦ 7♦ 5♣ 6♣ 6♥ (35) 8♦ 9♦ 10♦ J♦ (40): -75.
    zero = {"penalties": 0, "ponytails": 0, "cut_bonus": 0}
    scores = {
        "A": {"melds": 60, "canasta_bonus": 0, "going_out": 0, "concealed": 0,
              "red_threes": 100, "hands": -135, **zero, "total": 25},
        "B": {"melds": 110, "canasta_bonus": 500, "going_out": 100, "concealed": 100,
              "red_threes": 0, "hands": -75, **zero, "total": 735},
    }  # fmt: skip
    return ScriptedDeal(
        name="classic, four players, out in four turns",
        entry="classic",
        players=4,
        dealer=3,
        cut=cut,
        hands=hands,
        stock=stock,
        deck=_deck("classic", 4, 3, cut, hands, stock),
        steps=steps,
        scores=scores,
        red_threes={"A": ["3H/1"]},
    )


# --- playing a script over HTTP (tests/web/test_deals.py, test_secrecy_checker.py) -------------

NAMES = ("ann", "bob", "cyd", "dee", "eve", "fay")


def start_table(
    http: Any,
    deal: ScriptedDeal,
    names: tuple[str, ...] = NAMES,
    scores_before: dict[str, int] | None = None,
) -> Game:
    """Registers the players, seats ``names[i]`` in room seat i at a new table of the deal's
    entry (``names[0]`` hosts) and starts it with the stacked deck (and the sides' totals
    ``scores_before``, if given); ``http`` must be a client of a server set up for tests."""
    body = deal.start_body
    if scores_before is not None:
        body = {**body, "scores_before": scores_before}
    return open_table(http, list(names[: deal.players]), entry=deal.entry, start_body=body)


def classic_played(http: Any, names: tuple[str, ...], steps: int | None = None) -> Game:
    """A new table of ``names`` with the ``classic_four`` deal (``start_table``), played over
    HTTP to its end, or its first ``steps`` moves (``play_step``)."""
    deal = classic_four()
    game = start_table(http, deal, names)
    for step in deal.steps[:steps]:
        play_step(http, game, step)
    return game


def shape(body: dict[str, Any]) -> Any:
    """A command body with every card replaced by its rank (the menu lists one per shape)."""
    out: dict[str, Any] = {}
    for key, value in body.items():
        if key == "melds":
            out[key] = [
                (m["rank"], sorted(c if c == "TOP" else CARDS[c].rank for c in m["cards"]))
                for m in value
            ]
        elif key in ("discard", "card") and value is not None:
            out[key] = CARDS[value].rank
        else:
            out[key] = value
    return out


def play_step(http: Any, game: Game, step: Step) -> list[dict[str, Any]]:
    """Checks the menu offers the step's command to its seat, then sends it (with the
    menu's ``expect`` and ``next_seq``); returns the events it recorded (spectator's view)."""
    name = game.names[step.seat]
    headers = game.headers[name]
    menu = http.get(f"/deals/{game.deal_id}/moves", headers=headers).json()
    assert menu["moves"], f"{step.move}: the menu offers seat {step.seat} nothing"
    assert step.command in menu["moves"], (
        f"{step.move}: {step.command} is not in the menu {menu['moves']}"
    )
    assert shape(step.command) in [shape(m) for m in menu["moves"]]
    for seat, other in enumerate(game.names):  # nobody else may move now
        if seat != step.seat:
            others = http.get(f"/deals/{game.deal_id}/moves", headers=game.headers[other])
            assert others.json()["moves"] == [], f"{step.move}: seat {seat} may move too"
    before = menu["step"]
    send_with_menu(http, headers, game.deal_id, step.command)
    events: list[dict[str, Any]] = http.get(
        f"/deals/{game.deal_id}/events", params={"after": before}
    ).json()
    assert tuple(e["kind"] for e in events) == step.events, step.move
    return events


# --- classic for four, side A's aces with a wild card (tests/web/test_deal_fit.py,
# test_suggestion_words.py): played over HTTP up to seat 3's going out -----------------------

#: As classic_four, but seat 0 opens with A A 2 (his side's meld of aces holds a wild card),
#: and holds 5♦ 5♠ where the 5♥ starts the pile (he may take it, with his aces, to open).
#: Seat 3 may then go out: six kings and a 2 (a mixed canasta), four queens, 9♣ to discard.
WILD_ACES_HANDS = {
    0: _cards("AS/1 AH/1 2C/1 5D/2 5S/1 6S/1 7S/1 8S/1 9S/1 10S/1 JS/1"),
    1: _cards("4D/1 5D/1 6D/1 7D/1 8D/1 9D/1 10D/1 JD/1 4C/1 5C/1 6C/1"),
    2: _cards("3H/1 7C/1 8C/1 9C/1 10C/1 JC/1 4S/2 5S/2 6S/2 7S/2 8S/2"),
    3: _cards("KS/1 KH/1 KD/1 KC/1 KS/2 KH/2 2H/1 QS/1 QH/1 QD/1 QC/1"),
}
WILD_ACES_STOCK = ["9S/2", "5H/1", "4H/1", "6H/1", "7H/1", "9C/2"]
WILD_ACES_MOVES: list[tuple[int, dict[str, Any]]] = [
    (0, {"type": "cut", "n": 54}),
    (0, {"type": "draw"}),
    (0, {"type": "meld", "melds": [_meld("AS/1", "AH/1", "2C/1")]}),
    (0, {"type": "discard", "card": "JS/1"}),
    (1, {"type": "draw"}),
    (1, {"type": "discard", "card": "4C/1"}),
    (2, {"type": "draw"}),
    (2, {"type": "discard", "card": "8S/2"}),
    (3, {"type": "draw"}),
    (3, {"type": "ask_partner", "partner": 1}),
    (1, {"type": "answer", "yes": True}),
]
WILD_ACES_KINGS = _meld("KC/1", "KD/1", "KH/1", "KH/2", "KS/1", "KS/2", "2H/1")
WILD_ACES_QUEENS = _meld("QC/1", "QD/1", "QH/1", "QS/1")
#: Seat 3 goes out in one command: his every card melded, the last one discarded.
WILD_ACES_GOING_OUT = {
    "type": "meld",
    "melds": [WILD_ACES_KINGS, WILD_ACES_QUEENS],
    "discard": "9C/2",
}


def send(http: Any, game: Game, seat: int, command: dict[str, Any]) -> None:
    """One command of room seat ``seat``, with its menu's ``expect`` and ``next_seq``."""
    send_with_menu(http, game.headers[game.names[seat]], game.deal_id, command)


def wild_aces_until_going_out(
    http: Any,
    names: tuple[str, ...],
    table: dict[str, Any] | None = None,
    moves: list[tuple[int, dict[str, Any]]] = WILD_ACES_MOVES,
) -> Game:
    """A new table of ``names`` (a server set up for tests; ``table``: more fields of
    ``POST /tables``, e.g. ``options``) with the wild aces' deal, played until seat 3, his
    partner having said yes, may go out (or only the first of ``moves``)."""
    game = open_table(http, list(names), start=False, table=table)
    deck = deck_for("classic", 4, 3, 54, WILD_ACES_HANDS, WILD_ACES_STOCK)
    game.start({"dealer": 3, "deck": deck})
    for seat, command in moves:
        send(http, game, seat, command)
    return game
