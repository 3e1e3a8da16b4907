"""The discard log's lines for people (``canasta demo``, the audit's mismatches) read as
English: a pile of one card is "1 card"."""

from __future__ import annotations

from typing import Any

import pytest

from projections.discard_log import describe


@pytest.mark.parametrize(
    ("entry", "line"),
    [
        (
            {"kind": "pile_taken", "seat": 2, "size": 1, "top": "7H/0"},
            "seat 2 took the pile: 1 card, top 7H/0",
        ),
        (
            {"kind": "pile_taken", "seat": 0, "size": 9, "top": "KS/1"},
            "seat 0 took the pile: 9 cards, top KS/1",
        ),
        ({"kind": "discarded", "seat": 1, "card": "3C/0"}, "seat 1 discarded 3C/0"),
        (
            {"kind": "turned_up", "card": "BJ/1", "crosswise": True},
            "turned up BJ/1 (crosswise, pile frozen)",
        ),
        ({"kind": "answered", "seat": 3, "yes": False}, "seat 3 answered no"),
    ],
)
def test_a_log_line_reads_as_english(entry: dict[str, Any], line: str) -> None:
    assert describe(entry) == line
