"""A scenario's table and the deck order of each of its deals.

A deal's cards (hands, ponytails, stock, with unnamed cards filled in the documented order)
are turned into the deck order that the real cut and deal produce (docs/scenarios.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.scenario.model import ScenarioError, require
from domain.cards import CARDS, FACE_RANK, JOKERS, full_deck
from domain.errors import DomainError
from domain.seating import choose_sides, fixed_sides, virtual_table
from domain.variants import VARIANTS
from domain.variants.base import Variant

# Unnamed cards are ordered by rank 4 5 6 7 8 9 10 J Q K A 2, then LJ BJ, then black threes,
# then red threes; within a rank by suit S H D C, then deck number.
_FILL_RANKS = ("4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2")
_SUIT_ORDER = {"S": 0, "H": 1, "D": 2, "C": 3, None: 0}


def _fill_key(card: str) -> tuple[int, int, int]:
    c = CARDS[card]
    if c.rank in _FILL_RANKS:
        group = _FILL_RANKS.index(c.rank)
    elif c.rank in JOKERS:
        group = len(_FILL_RANKS) + ("LJ", "BJ").index(c.rank)
    else:
        group = len(_FILL_RANKS) + 2 + (0 if c.is_black_three else 1)
    return group, _SUIT_ORDER[c.suit], c.deck


class _Namer:
    """Resolves card names: ``QH/2`` is one card; ``KH`` the next unused K♥ (set-up)."""

    def __init__(self, decks: int) -> None:
        self.unused = full_deck(decks)
        self.unused_set = set(self.unused)

    def take(self, name: Any, where: str) -> str:
        require(isinstance(name, str), f"{where}: a card is a string like 'QH/2', not {name!r}")
        if "/" in name:
            require(name in CARDS, f"{where}: unknown card {name!r}")
            require(name in self.unused_set, f"{where}: {name} is named twice or not in play")
            card = name
        else:
            require(name in FACE_RANK, f"{where}: unknown card {name!r}")
            card = next((c for c in self.unused if CARDS[c].face == name), "")
            require(bool(card), f"{where}: no {name} left to name")
        self.unused.remove(card)
        self.unused_set.discard(card)
        return str(card)


@dataclass
class TableSetup:
    """What the host sets up before the start, and the totals before the first deal."""

    entry: str
    players: int
    options: dict[str, bool]
    teams: list[list[int]] | None
    sides: dict[str, list[int]]
    scores_before: dict[str, int]
    target: int | None

    @property
    def variant(self) -> Variant:
        return VARIANTS[self.entry]


@dataclass
class Setup:
    entry: str
    players: int
    options: dict[str, bool]
    teams: list[list[int]] | None
    scores_before: dict[str, int]
    dealer: int
    cut: int
    sit_out: list[int]
    order: list[int]  # the deal's virtual table
    deck: list[str]  # deck order before the cut, top first


def table_setup(data: Mapping[str, Any], name: str) -> TableSetup:
    entry = data.get("entry", "classic")
    require(entry in VARIANTS, f"{name}: unknown entry {entry!r}")
    variant = VARIANTS[entry]
    players = data.get("players")
    if not isinstance(players, int) or players not in variant.player_counts:
        raise ScenarioError(
            f"{name}: 'players' must be one of {list(variant.player_counts)} for {entry}"
        )
    options = data.get("options") or {}
    require(isinstance(options, dict), f"{name}: 'options' is an object")
    teams = data.get("teams")
    if players in variant.host_chooses_teams:
        require(isinstance(teams, list) and bool(teams), f"{name}: 'teams' is required here")
        try:
            sides = choose_sides(variant, players, teams)
        except DomainError as exc:
            raise ScenarioError(f"{name}: teams: {exc.message}") from None
    else:
        teams = None
        sides = fixed_sides(players)
    scores = data.get("scores_before") or {}
    require(
        isinstance(scores, dict) and all(isinstance(v, int) for v in scores.values()),
        f"{name}: 'scores_before' maps sides to integers",
    )
    require(set(scores) <= set(sides), f"{name}: scores_before names unknown sides")
    target = data.get("target")
    require(
        target is None or (isinstance(target, int) and not isinstance(target, bool)),
        f"{name}: 'target' is an integer",
    )
    return TableSetup(
        entry=entry,
        players=players,
        options={k: bool(v) for k, v in options.items()},
        teams=teams,
        sides=sides,
        scores_before=dict(scores),
        target=target,
    )


def first_order(ts: TableSetup, deal: Mapping[str, Any], name: str) -> list[int]:
    """The first deal's virtual table; ``deal.sit_out`` picks the rotation's starting point."""
    sit_out = deal.get("sit_out")
    if sit_out:
        require(isinstance(sit_out, list), f"{name}: 'sit_out' is a list of seats")
        for rotation in range(3):
            active = virtual_table(ts.sides, rotation, ts.variant.sit_outs)
            if sorted(set(range(ts.players)) - set(active)) == sorted(sit_out):
                return active
        raise ScenarioError(f"{name}: no deal of the rotation sits out {sit_out}")
    return virtual_table(ts.sides, 0, ts.variant.sit_outs)


def deck_for(
    ts: TableSetup, deal: Mapping[str, Any], order: Sequence[int], dealer: int, name: str
) -> tuple[int, list[str]]:
    """The cut and the deck order before it that deal ``deal``'s cards from ``dealer``."""
    variant = ts.variant
    order = list(order)
    size = variant.decks * 54
    cut = deal.get("cut", 1)
    require(isinstance(cut, int) and 1 <= cut <= size - 1, f"{name}: 'cut' is 1..{size - 1}")
    namer = _Namer(variant.decks)
    hand_size = variant.hand_size_for(ts.players)
    named_hands = _named(deal, "hands", hand_size, order, namer, name)
    require(
        not deal.get("ponytails") or variant.ponytail_size > 0,
        f"{name}: {ts.entry} has no ponytails",
    )
    named_ponytails = _named(deal, "ponytails", variant.ponytail_size, order, namer, name)
    stock_in = deal.get("stock") or []
    require(isinstance(stock_in, list), f"{name}: 'stock' is a list")
    stock = [namer.take(c, f"{name}: stock") for c in stock_in]
    rest = sorted(namer.unused, key=_fill_key)
    hands: dict[int, list[str]] = {}
    for seat in sorted(order):
        cards = named_hands.get(seat, [])
        need = hand_size - len(cards)
        hands[seat] = cards + rest[:need]
        rest = rest[need:]
    ponytails: dict[int, list[str]] = {}
    for seat in sorted(order):  # [decision] ponytails are filled after every hand
        cards = named_ponytails.get(seat, [])
        need = variant.ponytail_size - len(cards)
        ponytails[seat] = cards + rest[:need]
        rest = rest[need:]
    stock += rest
    # The deal: one card at a time from the dealer's left (R-DEAL-5), then the ponytails
    # the same way (R-PT-DEAL-1), then the stock.
    i = order.index(dealer)
    seats = order[i + 1 :] + order[: i + 1]
    after_cut = [hands[s][r] for r in range(hand_size) for s in seats]
    after_cut += [ponytails[s][r] for r in range(variant.ponytail_size) for s in seats]
    after_cut += stock
    return cut, after_cut[size - cut :] + after_cut[: size - cut]  # undo R-DEAL-4


def _named(
    deal: Mapping[str, Any],
    key: str,
    size: int,
    order: Sequence[int],
    namer: _Namer,
    name: str,
) -> dict[int, list[str]]:
    raw = deal.get(key) or {}
    require(isinstance(raw, dict), f"{name}: '{key}' maps seats to card lists")
    named: dict[int, list[str]] = {}
    for seat, cards in raw.items():
        require(seat.isdigit() and int(seat) in order, f"{name}: {key}: seat {seat} does not play")
        require(isinstance(cards, list), f"{name}: {key}[{seat}] is a list")
        require(len(cards) <= size, f"{name}: {key}[{seat}] has over {size} cards")
        named[int(seat)] = [namer.take(c, f"{name}: {key}[{seat}]") for c in cards]
    return named


def first_dealer(deal: Mapping[str, Any], order: Sequence[int], name: str) -> int:
    dealer = deal.get("dealer", order[-1])
    require(dealer in order, f"{name}: the dealer must be a seat playing the deal: {list(order)}")
    return int(dealer)


def build_setup(data: Mapping[str, Any], name: str) -> Setup:
    """The table and the first deal of a scenario, for tests that drive the deal themselves."""
    ts = table_setup(data, name)
    deal = data.get("deal")
    if deal is None and isinstance(data.get("deals"), list) and data["deals"]:
        deal = data["deals"][0].get("deal")
    deal = deal or {}
    require(isinstance(deal, dict), f"{name}: 'deal' is an object")
    order = first_order(ts, deal, name)
    dealer = first_dealer(deal, order, name)
    cut, deck = deck_for(ts, deal, order, dealer, name)
    return Setup(
        entry=ts.entry,
        players=ts.players,
        options=ts.options,
        teams=ts.teams,
        scores_before=ts.scores_before,
        dealer=dealer,
        cut=cut,
        sit_out=sorted(set(range(ts.players)) - set(order)),
        order=order,
        deck=deck,
    )
