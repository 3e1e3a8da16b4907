"""Each sender's command sequence numbers and first answers at a table (R-CMD-1).

Saved in the same transaction as the deal events a command records, so an accepted
command and its sequence number are stored together or not at all. A retry under a
number already answered gets the first answer back and changes nothing.
"""

from __future__ import annotations

import json
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import Aggregate, event

from domain.errors import SEQ_TOO_FAR, STALE, Conflict

KEEP_ANSWERS = 64  # how many recent answers a sender can retry
#: A new sequence number may exceed the sender's last by at most this much (R-CMD-1): a
#: number far ahead would otherwise make every smaller one unusable ("locked out").
MAX_SEQ_JUMP = 1000


def command_log_id(table_id: UUID | str, player: str) -> UUID:
    return uuid5(NAMESPACE_URL, f"canasta-ledger:commands:{table_id}:{player}")


class CommandLog(Aggregate):
    @event("Opened")
    def __init__(self, table_id: str, player: str) -> None:
        self.table_id = table_id
        self.player = player
        self.last_seq = 0
        self.answers: dict[str, dict[str, Any]] = {}  # str(seq) -> {"digest", "status", "body"}

    @classmethod
    def create_id(cls, table_id: str, player: str) -> UUID:
        return command_log_id(table_id, player)

    def __deepcopy__(self, memo: dict[int, Any]) -> CommandLog:
        """Fast copy for the aggregate cache: answers are replaced, never changed in place."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.__dict__["answers"] = dict(self.answers)
        new.__dict__["_pending_events"] = list(self._pending_events)
        return new

    def answer_for(self, seq: int) -> dict[str, Any] | None:
        """The first answer under ``seq`` (``digest``, ``status``, ``body``), or None."""
        kept = self.answers.get(str(seq))
        if kept is None:
            return None
        return {**kept, "body": json.loads(kept["body"])}

    def check_new(self, seq: int) -> None:
        """R-CMD-1: ``seq`` may number a new command: greater than the last (else ``STALE``:
        the number is used) and at most ``MAX_SEQ_JUMP`` above it (else ``SEQ_TOO_FAR``).
        A retry (a number whose answer is kept) is recognised before this check."""
        if seq <= self.last_seq:
            raise Conflict(STALE, "seq.used", seq=seq, last=self.last_seq)
        if seq > self.last_seq + MAX_SEQ_JUMP:
            raise Conflict(
                SEQ_TOO_FAR,
                "seq.too_far",
                seq=seq,
                last=self.last_seq,
                most=self.last_seq + MAX_SEQ_JUMP,
            )

    @event("Answered")
    def record(self, seq: int, digest: str, status: int, body: dict[str, Any]) -> None:
        self.last_seq = max(self.last_seq, seq)
        # The body is kept as JSON text: a dict of strings and ints is not tracked by
        # Python's cyclic garbage collector, whereas the body's nested dicts and lists
        # were most of the objects a server's young collections had to walk (they live
        # for the last KEEP_ANSWERS commands), and those collections paused every command
        # of the process for tens of milliseconds (``make bench``). Retries, which read
        # it, are rare.
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        self.answers[str(seq)] = {"digest": digest, "status": status, "body": text}
        while len(self.answers) > KEEP_ANSWERS:
            del self.answers[min(self.answers, key=int)]
