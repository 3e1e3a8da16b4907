"""Entries (variants) as rule data plus a few hooks, looked up by key (docs/rules/README.md)."""

from __future__ import annotations

from domain.errors import SetupError
from domain.variants.base import Variant
from domain.variants.classic import CLASSIC
from domain.variants.extra_six import EXTRA_SIX
from domain.variants.modern_american import MODERN_AMERICAN
from domain.variants.ponytail import PONYTAIL

VARIANTS: dict[str, Variant] = {v.key: v for v in (CLASSIC, EXTRA_SIX, MODERN_AMERICAN, PONYTAIL)}


def get_variant(key: str) -> Variant:
    try:
        return VARIANTS[key]
    except KeyError:
        known = sorted(VARIANTS)
        raise SetupError("R-SEAT-3", "table.unknown_entry", name=key, known=known) from None


__all__ = ["VARIANTS", "Variant", "get_variant"]
