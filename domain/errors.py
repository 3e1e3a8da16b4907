"""Domain exceptions. Every refusal carries a stable code: a rule id of docs/rules/ (R-CMD-3),
or one of the codes below (docs/rules/common.md, "Error codes")."""

from __future__ import annotations

from domain.refusals import Param, render

#: R-CMD-1: a stale command (``expect`` does not match), or a used sequence number.
STALE = "R-CMD-1"
#: Another command (or request) changed the same game or account first: reload and retry.
RACE_LOST = "race_lost"
#: The name is already an account's.
NAME_TAKEN = "name_taken"
#: A sequence number too far above the sender's last (``domain.command_log.MAX_SEQ_JUMP``).
SEQ_TOO_FAR = "seq_too_far"


class DomainError(Exception):
    """Base class of everything the domain refuses. ``key`` and ``params``: what it says
    this time, by a key of ``domain.refusals.MESSAGES`` and the parameters its template names
    (None and empty for a refusal worded in English only: the app's 401)."""

    code = "R-CMD-3"

    def __init__(
        self,
        code: str,
        message: str,
        *,
        key: str | None = None,
        params: dict[str, Param] | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.key = key
        self.params: dict[str, Param] = params or {}


class Worded(DomainError):
    """A refusal made from its code, a key of ``domain.refusals.MESSAGES`` and that
    template's parameters; its English message is the template filled in."""

    def __init__(self, code: str, key: str, /, **params: Param) -> None:
        super().__init__(code, render(key, params), key=key, params=params)


class RuleViolation(Worded):
    """A command that breaks a rule: nothing is recorded (R-CMD-3)."""

    @property
    def details(self) -> dict[str, int]:
        """The numbers a dry run's refusal also lists apart (``points`` and ``minimum`` of an
        initial meld that falls short: R-INIT-1 and the entries' equivalents)."""
        return {
            name: value
            for name, value in self.params.items()
            if name in ("points", "minimum") and isinstance(value, int)
        }


class SetupError(Worded):
    """A table or game set-up that is not allowed (R-SEAT-*)."""


class Forbidden(Worded):
    """The sender may not do this: not the host, no seat here, not an auditor (HTTP 403).
    ``Forbidden(code, key, **params)``, worded as any refusal (``domain.refusals``)."""


class Conflict(Worded):
    """A request that collides with what is recorded (HTTP 409); ``code`` says how: a stale
    command or a used sequence number (``STALE``, R-CMD-1), a lost race (``RACE_LOST``), a
    taken name (``NAME_TAKEN``), a sequence number too far ahead (``SEQ_TOO_FAR``).
    ``Conflict(code, key, **params)``."""


class NotFound(Worded):
    """No table or deal with that id (or not at that step): code ``not_found``.
    ``NotFound(key, **params)``."""

    def __init__(self, key: str, /, **params: Param) -> None:
        super().__init__("not_found", key, **params)
