"""Domain exceptions. Every refusal carries a stable rule id of docs/rules/ (R-CMD-3)."""

from __future__ import annotations


class DomainError(Exception):
    """Base class of everything the domain refuses."""

    code = "R-CMD-3"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class RuleViolation(DomainError):
    """A command that breaks a rule: nothing is recorded (R-CMD-3)."""


class SetupError(DomainError):
    """A table or game set-up that is not allowed (R-SEAT-*)."""


class Forbidden(DomainError):
    """The sender may not do this: not the host, no seat here, not an auditor."""


class Conflict(DomainError):
    """The command was based on a state that is no longer current (R-CMD-1)."""

    def __init__(self, message: str) -> None:
        super().__init__("R-CMD-1", message)


class NotFound(DomainError):
    """No table or deal with that id (or not at that step)."""

    def __init__(self, message: str) -> None:
        super().__init__("not_found", message)
