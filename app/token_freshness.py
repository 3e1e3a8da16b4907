"""Whether the bearer tokens a process remembers may be trusted (docs/api.md, "Replacing a
token"): a token revoked by any process must stop working on this one within
``TOKEN_BOUND`` seconds. The process's follower of the store (``app.fanout.EventHub``) tells
it of every revocation; ``TokenFreshness`` keeps when the follower's last complete read began,
and says the remembered tokens are fresh while that was less than ``TOKEN_BOUND`` ago. Past
it (the database slow or away, a replica stalled, the thread stuck) the process reads each
token from the store until the follower catches up. The lag is logged once (a warning, and a
line when it is over) and counted (``canasta_token_follower_lagging``,
``canasta_token_follower_lags_total``), noticed by whoever asks ``fresh()`` (a request, a live
stream, a scrape of ``/metrics``) or by the follower's own next read."""

from __future__ import annotations

import logging
import threading
import time

from app.metrics import TOKEN_FOLLOWER_LAGGING, TOKEN_FOLLOWER_LAGS

log = logging.getLogger("app.fanout")  # the lines of the event hub, the follower

#: Seconds within which a token revoked by any process stops working on this one: the
#: follower's last complete read must have begun less than this ago for the tokens this
#: process remembers to be trusted (a healthy follower reads every ``stream_poll_seconds``).
TOKEN_BOUND = 2.0


class TokenFreshness:
    def __init__(self) -> None:
        #: ``time.monotonic()`` when the last read that reached the store's head began.
        self._fresh_at = float("-inf")
        #: Whether the lag past ``TOKEN_BOUND`` was logged and not yet its end.
        self._lagging = False
        self._lock = threading.Lock()

    def fresh(self) -> bool:
        """Whether the follower's last complete read began less than ``TOKEN_BOUND`` ago."""
        age = time.monotonic() - self._fresh_at
        if age < TOKEN_BOUND:
            return True
        if not self._lagging:
            self._lag_began(age)
        return False

    @property
    def lagging(self) -> bool:
        """Whether a lag past the bound was logged and its end not yet."""
        return self._lagging

    def read_to_head(self, began: float) -> None:
        """A read that began at ``began`` (``time.monotonic()``) reached the store's head."""
        self._fresh_at = began
        if self._lagging and self.fresh():
            self._lag_ended()

    def _lag_began(self, age: float) -> None:
        """Log and count, once, that the follower lags past the bound."""
        with self._lock:
            if self._lagging:
                return
            self._lagging = True
        TOKEN_FOLLOWER_LAGS.inc()
        TOKEN_FOLLOWER_LAGGING.set(1)
        log.warning(
            "event hub: the follower's last complete read began %.1fs ago (bound %gs): "
            "bearer tokens are read from the store until it catches up",
            age,
            TOKEN_BOUND,
        )

    def _lag_ended(self) -> None:
        with self._lock:
            if not self._lagging:
                return
            self._lagging = False
        TOKEN_FOLLOWER_LAGGING.set(0)
        log.info("event hub: the follower caught up: remembered bearer tokens are trusted again")
