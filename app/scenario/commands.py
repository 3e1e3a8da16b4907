"""A scenario step turned into the domain command the seat sends."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.scenario.model import ScenarioError, require
from domain.cards import CARDS, FACE_RANK
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


class _HandNamer:
    """Resolves card names within one step against what the seat holds."""

    def __init__(self, hand: Sequence[str], where: str) -> None:
        self.held = set(hand)
        self.left = sorted(hand, key=lambda c: CARDS[c].deck)
        self.where = where

    def take(self, name: Any) -> str:
        require(isinstance(name, str), f"{self.where}: a card is a string, not {name!r}")
        if name == TOP or "/" in name:
            if name in self.left:
                self.left.remove(name)
            return str(name)
        require(name in FACE_RANK, f"{self.where}: unknown card {name!r}")
        for card in self.left:
            if CARDS[card].face == name:
                self.left.remove(card)
                return card
        # Not held: name a copy the seat does not hold, so that the engine refuses it.
        return next(c for c in CARDS if CARDS[c].face == name and c not in self.held)


def _melds(raw: Any, names: _HandNamer, where: str) -> tuple[MeldSpec, ...]:
    require(isinstance(raw, list), f"{where}: 'melds' is a list of melds")
    specs = []
    for meld in raw:
        if isinstance(meld, dict):
            require(
                isinstance(meld.get("rank"), str) and isinstance(meld.get("cards"), list),
                f"{where}: an addition is {{'rank': 'K', 'cards': [...]}}",
            )
            specs.append(MeldSpec(tuple(names.take(c) for c in meld["cards"]), rank=meld["rank"]))
        else:
            require(isinstance(meld, list), f"{where}: a meld is a list of cards")
            specs.append(MeldSpec(tuple(names.take(c) for c in meld)))
    return tuple(specs)


def build_command(step: Mapping[str, Any], hand: Sequence[str], where: str) -> Command:
    do = step.get("do")
    names = _HandNamer(hand, where)
    if do == "cut":
        require(isinstance(step.get("n"), int), f"{where}: cut needs an integer 'n'")
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
        require(partner is None or isinstance(partner, int), f"{where}: 'partner' is a seat")
        return AskPartner(partner)
    if do == "answer":
        require(isinstance(step.get("yes"), bool), f"{where}: answer needs 'yes': true/false")
        return Answer(step["yes"])
    if do == "decline_pile":
        return DeclinePile()
    if do == "pick_up_ponytail":
        return PickUpPonytail()
    raise ScenarioError(f"{where}: unknown action {do!r}")
