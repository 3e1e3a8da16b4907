"""What a scenario run reports: failures (exit 1) and malformed files (exit 2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class ScenarioError(Exception):
    """A malformed scenario file (exit code 2)."""


def require(cond: bool, message: str) -> None:
    if not cond:
        raise ScenarioError(message)


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
