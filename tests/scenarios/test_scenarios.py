"""Every rule scenario under tests/scenarios/ passes through the real application service."""

from __future__ import annotations

from pathlib import Path

import pytest

from app import scenario

SCENARIOS = sorted(Path(__file__).parent.rglob("*.json"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_scenario_holds(path: Path) -> None:
    result = scenario.run_file(path)
    assert result.ok, "\n".join(str(f) for f in result.failures)


def test_there_are_scenarios() -> None:
    assert len(SCENARIOS) >= 1
