"""Does what a spectator (or one player) was given hold a card he may not see? Checked against
the auditor's history of the deal, step by step (R-VIEW-1..4, issue 16's spectator test).

A card is *public* from the step it is shown face up: turned up to start the pile, discarded,
melded or added to a meld, laid as a red three (the pile's cards were all shown so, and a
card taken with the pile stays public). It is *own* to a seat from the step it is dealt to
him, drawn by him (a red three's replacement too), taken by him with the pile or picked up
with his ponytail. At step ``s`` a viewer may be given the public cards and, a player, his
own; every other card of the deal is then in the undealt deck, the stock, a hand or a
face-down ponytail: *hidden*. This is what ``projections/visibility.py`` shows (the public
table, the public event views and a player's own hand and draws).

Seats change players (docs/tables.md, absent players: a leave, a seat taken back, given by
the host or taken over after missed turns; ``SeatPlayerChanged`` in the history). A person
sees a seat's private cards at step ``s`` only if he plays that seat at ``s``
(``hidden_for``): his draws before his leave, the seat's whole hand again from his return,
none of what the bot drew in between at the steps it drew them; and a seat given to him from
the step it is given. What he may hold in a text with no step of its own (an error message)
is anything he could see at some step so far (``hidden_ever``).

The history is what ``GET /audit/deals/{id}`` answers an auditor (``events`` with their
fields, ``deck``); ``GET /audit/deals/{id}/replay?step=N`` (optional) says where a hidden
card lay, for the messages. ``tests/api/secrecy_support.py`` does the same for the API's
own tests from the events in the server's process; this module reads only HTTP answers,
so it works against a real server the browser talks to.

A card is found in a text by its code (``QH/2``, as in ``data-card`` attributes and JSON)
or by its spoken name in either catalogue (``queen of hearts, deck 2``, ``红心Q（第 2 副）``,
as in ``aria-label`` and ``title``). A printed face alone (``Q♥``) names no physical card and
is not looked for.

Usage (the auditor's headers: a bearer token or a browser context's ``request`` with a
signed-in auditor's cookie, anything with ``.get(path)`` answering JSON)::

    seen = [Seen(step, page.content(), "page"), Seen(step, body, "GET /deals/x"), ...]
    # or: recorder = PageRecorder(page) (tests/web/recorder.py) ...; seen = recorder.seen()
    secrets = read_history(http, deal_id, headers=auditor)
    assert secrets.violations(seen) == []          # a spectator
    assert secrets.violations(mine, seat=2) == []  # what seat 2's player was given
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from tests.api.secrecy_support import card_tokens

CATALOGUES = Path(__file__).resolve().parents[2] / "app" / "web" / "i18n"
#: Events that show cards face up to everybody, and the fields that hold them.
_SHOWN = {
    "CardTurnedUp": "card",
    "CardDiscarded": "card",
    "RedThreeLaid": "card",
    "MeldLaid": "cards",
    "MeldExtended": "cards",
    "PileTaken": "top",
}


@dataclass(frozen=True)
class Seen:
    """Something the viewer was given at ``step`` of the deal: a network response's body, the
    page's HTML, its scripts' state (as JSON)...; ``where`` says what, for the messages."""

    step: int
    text: str
    where: str = ""


@dataclass(frozen=True)
class Violation:
    """A hidden card found in what the viewer was given."""

    card: str
    step: int
    where: str
    found_as: str  # the code or the spoken name found
    location: str  # where the card lay at that step (from the replay), or "hidden"

    def __str__(self) -> str:
        return (
            f"step {self.step}, {self.where or 'a text'}: {self.card} (as {self.found_as!r}) "
            f"was {self.location}"
        )


def step_of(text: str) -> int | None:
    """The deal's step that a JSON answer shows: the largest integer ``step`` in it (a deal
    view's, or the last event's of an event list), None for text that has none."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    steps: list[int] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("step"), int):
                steps.append(node["step"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(data)
    return max(steps) if steps else None


# --- finding cards in a text ----------------------------------------------------------------------


@cache
def _spoken_names(card: str) -> tuple[str, ...]:
    """``card``'s spoken name in every catalogue, as ``cardName`` of common.js writes it."""
    face, deck = card.split("/")
    names = []
    for path in sorted(CATALOGUES.glob("*.json")):
        t = json.loads(path.read_text(encoding="utf-8"))
        if face in ("BJ", "LJ"):
            name = t[f"joker_{face}"]
        else:
            rank, suit = face[:-1], face[-1]
            name = t["card_name"].format(rank=t[f"rank_{rank}"], suit=t[f"suit_{suit}"])
        names.append(t["card_of_deck"].format(card=name, deck=deck))
    return tuple(dict.fromkeys(names))


def cards_in(text: str, cards: Iterable[str]) -> dict[str, str]:
    """Which of ``cards`` the text names, each with the form found (code or spoken name)."""
    found = {card: card for card in card_tokens(text)}
    lowered = text.lower()
    for card in cards:
        if card in found:
            continue
        for name in _spoken_names(card):
            # "deck 1" must not match inside "deck 12": a digit may not follow
            if re.search(re.escape(name.lower()) + r"(?!\d)", lowered):
                found[card] = name
                break
    return {card: form for card, form in found.items() if card in set(cards)}


# --- the history ----------------------------------------------------------------------------------


class Secrets:
    """The cards hidden from each viewer at each step of one deal, from the auditor's history
    (``GET /audit/deals/{id}``) and, optionally, the replays (``GET /audit/deals/{id}/replay``
    by step) to say where each card was."""

    def __init__(
        self, history: Mapping[str, Any], replays: Mapping[int, Mapping[str, Any]] | None = None
    ) -> None:
        self.deal = str(history["deal"])
        self.cards = frozenset(history.get("deck") or history.get("stacked_deck") or [])
        assert self.cards, "the history has no deck: is it an auditor's GET /audit/deals/{id}?"
        self.replays = dict(replays or {})
        self.last_step = 0
        self._public: list[frozenset[str]] = [frozenset()]  # by step; step 0: nothing yet
        self._own: list[dict[int, frozenset[str]]] = [{}]
        #: who plays each room seat after each step (``Started``, ``SeatPlayerChanged``)
        self._players: list[tuple[str, ...]] = [()]
        self.order: frozenset[int] = frozenset()  # the seats dealt in (R-SEAT-4)
        self._ever: dict[str | None, list[frozenset[str]]] = {}
        public: set[str] = set()
        own: dict[int, set[str]] = {}
        players: list[str] = []
        for event in history["events"]:
            step, kind = int(event["step"]), event["kind"]
            assert step == self.last_step + 1, f"the history skips from {self.last_step} to {step}"
            self.last_step = step
            if kind == "Started":
                players = list(event.get("player_ids") or [])
                self.order = frozenset(event.get("order") or range(len(players)))
            elif kind == "SeatPlayerChanged":
                players[event["seat"]] = event["player"]
            self._players.append(tuple(players))
            if kind in _SHOWN:
                shown = event[_SHOWN[kind]]
                public.update([shown] if isinstance(shown, str) else shown)
            if kind == "CardsDealt":
                for seat, card in event["cards"]:
                    own.setdefault(seat, set()).add(card)
            elif kind in ("CardsDrawn", "PileTaken", "PonytailPickedUp"):
                own.setdefault(event["seat"], set()).update(event["cards"])
            self._public.append(frozenset(public))
            self._own.append({seat: frozenset(cards) for seat, cards in own.items()})

    def _at(self, step: int) -> int:
        return max(0, min(step, self.last_step))

    def public_at(self, step: int) -> frozenset[str]:
        """The cards shown face up at or before ``step``."""
        return self._public[self._at(step)]

    def own_at(self, seat: int, step: int) -> frozenset[str]:
        """The cards seat ``seat`` has held (and so seen) by ``step``."""
        return self._own[self._at(step)].get(seat, frozenset())

    def hidden_at(self, step: int, seat: int | None = None) -> frozenset[str]:
        """The cards a viewer may not be given at ``step``: a spectator (``seat`` None), or
        the player in room seat ``seat``."""
        hidden = self.cards - self.public_at(step)
        return hidden - self.own_at(seat, step) if seat is not None else hidden

    def seat_of(self, name: str | None, step: int) -> int | None:
        """The room seat whose private cards ``name`` may see at ``step``: the one he plays
        then (None: he plays none then, or sits the deal out; ``name`` None: anonymous)."""
        players = self._players[self._at(step)]
        if name is None or name not in players:
            return None
        seat = players.index(name)
        return seat if seat in self.order else None

    def hidden_for(self, name: str | None, step: int) -> frozenset[str]:
        """The cards ``name`` may not be given at ``step``, as he could see the deal then:
        the seat he played then, or none (docs/tables.md, absent players)."""
        return self.hidden_at(step, self.seat_of(name, step))

    def hidden_ever(self, name: str | None, step: int) -> frozenset[str]:
        """The cards ``name`` could see at no step up to ``step``: what a text that names no
        step (an error message, a page's chrome) may never hold for him."""
        ever = self._ever.get(name)
        if ever is None:
            ever = [self.hidden_for(name, 0)]
            for at in range(1, self.last_step + 1):
                ever.append(ever[-1] & self.hidden_for(name, at))
            self._ever[name] = ever
        return ever[self._at(step)]

    def location(self, card: str, step: int) -> str:
        """Where ``card`` lay at ``step``, as far as the replays tell."""
        replay = self.replays.get(self._at(step))
        if replay is None:
            return "hidden"
        if card in replay.get("stock", []):
            return "in the stock"
        for seat, hand in replay.get("hands", {}).items():
            if card in hand:
                return f"in the hand of seat {seat}"
        if replay.get("phase") in ("shuffle", "cut"):
            return "in the undealt deck"
        return "face down"

    def violations(self, seen: Iterable[Seen], seat: int | None = None) -> list[Violation]:
        """Every hidden card named in what the viewer was given (``seat`` None: a spectator;
        otherwise the player in that room seat, who may see his own cards)."""
        found: list[Violation] = []
        for item in seen:
            hidden = self.hidden_at(item.step, seat)
            for card, form in sorted(cards_in(item.text, hidden).items()):
                location = self.location(card, item.step)
                found.append(Violation(card, item.step, item.where, form, location))
        return found


def read_history(
    http: Any, deal_id: str, headers: Mapping[str, str] | None = None, *, replays: bool = True
) -> Secrets:
    """The deal's history as an auditor reads it (``headers`` sign him in), with the replay of
    every step unless ``replays`` is False. ``http`` is an httpx client, a TestClient or a
    Playwright ``APIRequestContext`` (``context.request``)."""
    history = _json(http.get(f"/audit/deals/{deal_id}", headers=dict(headers or {})))
    by_step: dict[int, Mapping[str, Any]] = {}
    if replays:
        for step in range(1, int(history["step"]) + 1):
            answer = http.get(
                f"/audit/deals/{deal_id}/replay?step={step}", headers=dict(headers or {})
            )
            by_step[step] = _json(answer)
    return Secrets(history, by_step)


def _json(answer: Any) -> Any:
    """An httpx or Playwright answer's JSON, once it is known to be a 200."""
    status = getattr(answer, "status_code", None) or getattr(answer, "status", None)
    text = answer.text() if callable(answer.text) else answer.text
    assert status == 200, f"the auditor's request was refused: {status} {text}"
    return json.loads(text)
