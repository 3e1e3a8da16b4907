"""Cards in full notation (``"KH/1"``: face, then the deck it comes from) for the generators in
this folder: their own small model of the cards, written from docs/rules/, never the engine's,
so that what a generated scenario expects is computed apart from what it tests."""

from __future__ import annotations

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("S", "H", "D", "C")
NATURAL = ("4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")


def full_deck(decks: int = 2) -> list[str]:
    """Every card of ``decks`` decks, deck by deck."""
    faces = [r + s for s in SUITS for r in RANKS] + ["BJ", "LJ"]
    return [f"{face}/{deck}" for deck in range(1, decks + 1) for face in faces]


def rank(card: str) -> str:
    face = card.split("/")[0]
    return face if face in ("BJ", "LJ") else face[:-1]


def is_red_three(card: str) -> bool:
    return card.split("/")[0] in ("3H", "3D")


def is_black_three(card: str) -> bool:
    return card.split("/")[0] in ("3S", "3C")


def is_wild(card: str) -> bool:
    return rank(card) in ("2", "BJ", "LJ")


def is_natural(card: str) -> bool:
    return rank(card) in NATURAL


def value(card: str) -> int:
    """R-CARD-3 (classic): a black three 5, a red three no card value."""
    r = rank(card)
    if r in ("BJ", "LJ"):
        return 50
    if r in ("A", "2"):
        return 20
    if r in ("K", "Q", "J", "10", "9", "8"):
        return 10
    return 0 if is_red_three(card) else 5
