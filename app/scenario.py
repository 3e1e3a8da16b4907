"""Rule scenarios as data (../shared/SCENARIOS.md): load, set up, play, check.

A scenario fixes one deal's cards; the runner turns them into the deck order that the
real cut and deal produce, then plays the steps through ``CanastaApp`` on a throwaway
embedded store, exactly as the HTTP API would.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

from app.application import CanastaApp
from app.settings import Settings, eventsourcing_env
from domain.cards import CARDS, FACE_RANK, JOKERS, full_deck
from domain.commands import (
    TOP,
    Answer,
    AskPartner,
    Command,
    Cut,
    DeclinePile,
    Discard,
    Draw,
    Meld,
    MeldSpec,
    PickUpPonytail,
    TakePile,
)
from domain.errors import DomainError
from domain.seating import choose_sides, fixed_sides, virtual_table
from domain.state import OVER, DealState
from domain.table import Table
from domain.variants import VARIANTS

# SCENARIOS.md: unnamed cards are ordered by rank 4 5 6 7 8 9 10 J Q K A 2, then LJ BJ,
# then black threes, then red threes; within a rank by suit S H D C, then deck number.
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


class ScenarioError(Exception):
    """A malformed scenario file (exit code 2)."""


@dataclass
class Failure:
    step: str
    expected: Any
    actual: Any

    def __str__(self) -> str:
        return f"{self.step}: expected {self.expected!r}, got {self.actual!r}"


@dataclass
class Result:
    name: str
    failures: list[Failure] = field(default_factory=list)
    final: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failures


# --- loading and the deck -------------------------------------------------------------------


def load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(f"{path}: no such file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScenarioError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario is a JSON object")
    return data


def _require(cond: bool, message: str) -> None:
    if not cond:
        raise ScenarioError(message)


class _Namer:
    """Resolves card names: ``QH/2`` is one card; ``KH`` the next unused K♥ (set-up)."""

    def __init__(self, decks: int) -> None:
        self.unused = full_deck(decks)
        self.unused_set = set(self.unused)

    def take(self, name: Any, where: str) -> str:
        _require(isinstance(name, str), f"{where}: a card is a string like 'QH/2', not {name!r}")
        if "/" in name:
            _require(name in CARDS, f"{where}: unknown card {name!r}")
            _require(name in self.unused_set, f"{where}: {name} is named twice or not in play")
            card = name
        else:
            _require(name in FACE_RANK, f"{where}: unknown card {name!r}")
            card = next((c for c in self.unused if CARDS[c].face == name), "")
            _require(bool(card), f"{where}: no {name} left to name")
        self.unused.remove(card)
        self.unused_set.discard(card)
        return str(card)


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


def build_setup(data: Mapping[str, Any], name: str) -> Setup:
    entry = data.get("entry", "classic")
    _require(entry in VARIANTS, f"{name}: unknown entry {entry!r}")
    variant = VARIANTS[entry]
    players = data.get("players")
    if not isinstance(players, int) or players not in variant.player_counts:
        raise ScenarioError(
            f"{name}: 'players' must be one of {list(variant.player_counts)} for {entry}"
        )
    options = data.get("options") or {}
    _require(isinstance(options, dict), f"{name}: 'options' is an object")
    teams = data.get("teams")
    if players in variant.host_chooses_teams:
        _require(isinstance(teams, list) and bool(teams), f"{name}: 'teams' is required here")
        try:
            sides = choose_sides(variant, players, teams)
        except DomainError as exc:
            raise ScenarioError(f"{name}: teams: {exc.message}") from None
    else:
        teams = None
        sides = fixed_sides(players)
    scores = data.get("scores_before") or {}
    _require(
        isinstance(scores, dict) and all(isinstance(v, int) for v in scores.values()),
        f"{name}: 'scores_before' maps sides to integers",
    )
    _require(set(scores) <= set(sides), f"{name}: scores_before names unknown sides")
    deal = data.get("deal") or {}
    _require(isinstance(deal, dict), f"{name}: 'deal' is an object")
    sit_out = deal.get("sit_out")
    rotation = 0
    if sit_out:
        for rotation in range(3):
            active = virtual_table(sides, rotation, variant.sit_outs)
            if sorted(set(range(players)) - set(active)) == sorted(sit_out):
                break
        else:
            raise ScenarioError(f"{name}: no deal of the rotation sits out {sit_out}")
    order = virtual_table(sides, rotation, variant.sit_outs)
    sit_out = sorted(set(range(players)) - set(order))
    dealer = deal.get("dealer", order[-1])
    _require(dealer in order, f"{name}: the dealer must be a seat playing the deal: {order}")
    size = variant.decks * 54
    cut = deal.get("cut", 1)
    _require(isinstance(cut, int) and 1 <= cut <= size - 1, f"{name}: 'cut' is 1..{size - 1}")

    namer = _Namer(variant.decks)
    hand_size = variant.hand_size_for(players)
    hands_in = deal.get("hands") or {}
    _require(isinstance(hands_in, dict), f"{name}: 'hands' maps seats to card lists")
    named_hands: dict[int, list[str]] = {}
    for key, cards in hands_in.items():
        _require(key.isdigit() and int(key) in order, f"{name}: hands: seat {key} does not play")
        _require(isinstance(cards, list), f"{name}: hands[{key}] is a list")
        _require(len(cards) <= hand_size, f"{name}: hands[{key}] has over {hand_size} cards")
        named_hands[int(key)] = [namer.take(c, f"{name}: hands[{key}]") for c in cards]
    ponytails_in = deal.get("ponytails") or {}
    _require(isinstance(ponytails_in, dict), f"{name}: 'ponytails' maps seats to card lists")
    _require(not ponytails_in or variant.ponytail_size > 0, f"{name}: {entry} has no ponytails")
    named_ponytails: dict[int, list[str]] = {}
    for key, cards in ponytails_in.items():
        _require(
            key.isdigit() and int(key) in order, f"{name}: ponytails: seat {key} does not play"
        )
        _require(isinstance(cards, list), f"{name}: ponytails[{key}] is a list")
        _require(
            len(cards) <= variant.ponytail_size,
            f"{name}: ponytails[{key}] has over {variant.ponytail_size} cards",
        )
        named_ponytails[int(key)] = [namer.take(c, f"{name}: ponytails[{key}]") for c in cards]
    stock_in = deal.get("stock") or []
    _require(isinstance(stock_in, list), f"{name}: 'stock' is a list")
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
    before_cut = after_cut[size - cut :] + after_cut[: size - cut]  # undo R-DEAL-4
    return Setup(
        entry=entry,
        players=players,
        options={k: bool(v) for k, v in options.items()},
        teams=teams,
        scores_before=dict(scores),
        dealer=dealer,
        cut=cut,
        sit_out=sit_out,
        order=order,
        deck=before_cut,
    )


# --- commands -------------------------------------------------------------------------------


class _HandNamer:
    """Resolves card names within one step against what the seat holds."""

    def __init__(self, hand: Sequence[str], where: str) -> None:
        self.held = set(hand)
        self.left = sorted(hand, key=lambda c: CARDS[c].deck)
        self.where = where

    def take(self, name: Any) -> str:
        _require(isinstance(name, str), f"{self.where}: a card is a string, not {name!r}")
        if name == TOP or "/" in name:
            if name in self.left:
                self.left.remove(name)
            return str(name)
        _require(name in FACE_RANK, f"{self.where}: unknown card {name!r}")
        for card in self.left:
            if CARDS[card].face == name:
                self.left.remove(card)
                return card
        # Not held: name a copy the seat does not hold, so that the engine refuses it.
        return next(c for c in CARDS if CARDS[c].face == name and c not in self.held)


def _melds(raw: Any, names: _HandNamer, where: str) -> tuple[MeldSpec, ...]:
    _require(isinstance(raw, list), f"{where}: 'melds' is a list of melds")
    specs = []
    for meld in raw:
        if isinstance(meld, dict):
            _require(
                isinstance(meld.get("rank"), str) and isinstance(meld.get("cards"), list),
                f"{where}: an addition is {{'rank': 'K', 'cards': [...]}}",
            )
            specs.append(MeldSpec(tuple(names.take(c) for c in meld["cards"]), rank=meld["rank"]))
        else:
            _require(isinstance(meld, list), f"{where}: a meld is a list of cards")
            specs.append(MeldSpec(tuple(names.take(c) for c in meld)))
    return tuple(specs)


def build_command(step: Mapping[str, Any], hand: Sequence[str], where: str) -> Command:
    do = step.get("do")
    names = _HandNamer(hand, where)
    if do == "cut":
        _require(isinstance(step.get("n"), int), f"{where}: cut needs an integer 'n'")
        return Cut(step["n"])
    if do == "draw":
        return Draw()
    if do == "take_pile":
        return TakePile(_melds(step.get("melds", [[TOP]]), names, where))
    if do == "meld":
        melds = _melds(step.get("melds", []), names, where)
        discard = step.get("discard")
        return Meld(melds, discard=names.take(discard) if discard is not None else None)
    if do == "discard":
        return Discard(names.take(step.get("card")))
    if do == "ask_partner":
        partner = step.get("partner")
        _require(partner is None or isinstance(partner, int), f"{where}: 'partner' is a seat")
        return AskPartner(partner)
    if do == "answer":
        _require(isinstance(step.get("yes"), bool), f"{where}: answer needs 'yes': true/false")
        return Answer(step["yes"])
    if do == "decline_pile":
        return DeclinePile()
    if do == "pick_up_ponytail":
        return PickUpPonytail()
    raise ScenarioError(f"{where}: unknown action {do!r}")


# --- checks ---------------------------------------------------------------------------------

CHECK_KEYS = frozenset(
    {
        "pile_top",
        "pile_size",
        "pile_frozen",
        "stock_size",
        "hand_count",
        "hand",
        "melds",
        "red_threes",
        "black_threes",
        "turn",
        "phase",
        "deal_over",
        "deal_scores",
        "totals",
        "game_over",
        "winners",
    }
)


def _same_card(expected: str, actual: str | None) -> bool:
    if actual is None:
        return False
    return expected == actual if "/" in expected else expected == CARDS[actual].face


def _meld_counts(st: DealState, side: str) -> dict[str, Any]:
    by_rank: dict[str, list[int]] = {}
    for meld in st.melds[side]:
        rank = "W" if all(CARDS[c].is_wild for c in meld.cards) else meld.rank
        by_rank.setdefault(rank, []).append(meld.size)
    return {r: (n[0] if len(n) == 1 else n) for r, n in by_rank.items()}


def check(
    app: CanastaApp, table_id: UUID, st: DealState, expect: Mapping[str, Any], where: str
) -> list[Failure]:
    unknown = set(expect) - CHECK_KEYS
    _require(not unknown, f"{where}: unknown checks {sorted(unknown)}")
    table = app.get_table(table_id)
    failures: list[Failure] = []

    def compare(key: str, expected: Any, actual: Any) -> None:
        if expected != actual:
            failures.append(Failure(f"{where} {key}", expected, actual))

    for key, expected in expect.items():
        if key == "pile_top":
            if expected is None:
                compare(key, None, st.pile_top)
            elif not _same_card(expected, st.pile_top):
                failures.append(Failure(f"{where} pile_top", expected, st.pile_top))
        elif key == "pile_size":
            compare(key, expected, len(st.pile))
        elif key == "pile_frozen":
            compare(key, expected, st.pile_frozen)
        elif key == "stock_size":
            compare(key, expected, len(st.stock))
        elif key == "hand_count":
            for seat, n in expected.items():
                compare(f"hand_count[{seat}]", n, len(st.hands[int(seat)]))
        elif key == "hand":
            for seat, cards in expected.items():
                actual = st.hands[int(seat)]
                full = all("/" in c for c in cards)
                got = Counter(actual if full else [CARDS[c].face for c in actual])
                want = Counter(c if full or "/" not in c else CARDS[c].face for c in cards)
                if got != want:
                    failures.append(Failure(f"{where} hand[{seat}]", sorted(want), sorted(got)))
        elif key == "melds":
            for side, ranks in expected.items():
                compare(f"melds[{side}]", ranks, _meld_counts(st, side))
        elif key == "red_threes":
            for side, n in expected.items():
                compare(f"red_threes[{side}]", n, len(st.red_threes[side]))
        elif key == "black_threes":
            for side, n in expected.items():
                laid = sum(1 for c in st.red_threes[side] if CARDS[c].is_black_three)
                compare(f"black_threes[{side}]", n, laid)
        elif key == "turn":
            compare(key, expected, st.turn if st.phase != OVER else None)
        elif key == "phase":
            compare(key, expected, st.phase)
        elif key == "deal_over":
            compare(key, expected, st.phase == OVER)
        elif key == "deal_scores":
            actual_scores = {s: b["total"] for s, b in (st.scores or {}).items()}
            compare(key, expected, {s: actual_scores.get(s) for s in expected})
        elif key == "totals":
            compare(key, expected, {s: table.totals.get(s) for s in expected})
        elif key == "game_over":
            compare(key, expected, table.status == "finished")
        elif key == "winners":
            compare(key, expected, table.winners)
    return failures


# --- running --------------------------------------------------------------------------------


@contextmanager
def throwaway_app() -> Iterator[CanastaApp]:
    with tempfile.TemporaryDirectory(prefix="canasta-scenario-") as tmp:
        env = eventsourcing_env(Settings(database_url=None, data_dir=Path(tmp)))
        app = CanastaApp(env=env, allow_stacked_decks=True)
        try:
            yield app
        finally:
            app.close()


def run(data: Mapping[str, Any], name: str, app: CanastaApp) -> Result:
    setup = build_setup(data, name)
    result = Result(name=str(data.get("name", name)))
    players = [f"seat{i}" for i in range(setup.players)]
    table_id = app.create_table(players[0], setup.entry, setup.players, setup.options)
    for seat, player in enumerate(players):
        app.join_table(table_id, player, seat)
    if setup.teams:
        app.choose_teams(table_id, players[0], setup.teams)
    deal_id = app.start_game(
        table_id,
        players[0],
        dealer=setup.dealer,
        scores_before=setup.scores_before,
        deck=setup.deck,
        sit_out=setup.sit_out,
    )
    cutter = app.get_deal(deal_id).state.cutter
    app.act(deal_id, players[cutter], Cut(setup.cut))
    steps = data.get("steps") or []
    _require(isinstance(steps, list), f"{name}: 'steps' is a list")
    for number, step in enumerate(steps, start=1):
        where = f"step {number}"
        _require(isinstance(step, dict), f"{name}: {where} is an object")
        seat = step.get("seat")
        _require(
            isinstance(seat, int) and 0 <= seat < setup.players,
            f"{name}: {where}: 'seat' is 0..{setup.players - 1}",
        )
        st = app.get_deal(deal_id).state
        command = build_command(step, st.hands[seat], f"{name}: {where}")
        expect = step.get("expect", "ok")
        _require(
            expect == "ok" or (isinstance(expect, dict) and isinstance(expect.get("error"), str)),
            f'{name}: {where}: \'expect\' is "ok" or {{"error": "R-..."}}',
        )
        before = app.get_deal(deal_id).version
        try:
            app.act(deal_id, players[seat], command)
            outcome: str = "ok"
        except DomainError as exc:
            outcome = exc.code
            message = exc.message
        wanted = "ok" if expect == "ok" else expect["error"]
        if outcome != wanted:
            actual = outcome if outcome == "ok" else f"{outcome} ({message})"
            result.failures.append(Failure(f"{where} ({step.get('do')})", wanted, actual))
            break
        after = app.get_deal(deal_id)
        if outcome != "ok" and after.version != before:
            result.failures.append(Failure(f"{where} refused", "nothing recorded", "events"))
            break
        if "then" in step:
            result.failures += check(app, table_id, after.state, step["then"], where)
            if result.failures:
                break
    st = app.get_deal(deal_id).state
    if not result.failures and "expect_end" in data:
        result.failures += check(app, table_id, st, data["expect_end"], "end")
    table = app.get_table(table_id)
    result.final = final_report(st, table)
    return result


def final_report(st: DealState, table: Table) -> dict[str, Any]:
    return {
        "phase": st.phase,
        "turn": st.turn,
        "pile": {"top": st.pile_top, "size": len(st.pile), "frozen": st.pile_frozen},
        "stock_size": len(st.stock),
        "hands": {str(s): list(st.hands[s]) for s in st.order},
        "melds": {side: [m.to_json() for m in st.melds[side]] for side in st.sides},
        "red_threes": st.red_threes,
        "deal_scores": st.scores,
        "totals": table.totals,
        "winners": table.winners,
    }


def run_file(path: Path) -> Result:
    data = load(path)
    with throwaway_app() as app:
        return run(data, str(path), app)
