"""``canasta bots``: the bots and the turn clocks played in the foreground of a process of
their own (docs/operations.md, "The bots"), beside ``cli_read_models``'s ``canasta project``."""

from __future__ import annotations

import faulthandler
import logging
import signal
import threading

from app.application import CanastaApp
from app.bot_runner import BotRunner
from app.settings import Settings


def run_foreground(
    canasta: CanastaApp, settings: Settings, where: str, retry_seconds: float
) -> int:
    """``canasta bots``: play until SIGINT or SIGTERM, saying when this process leads, then
    "stopping" and, the runner stopped (its lease let go), "stopped"; exit 0."""
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    stopping = threading.Event()
    # SIGUSR1 prints every thread's stack (to stderr): what a process that does not stop is
    # doing, for its operator and for the tests.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    previous = {
        sig: signal.signal(sig, lambda *_: stopping.set())
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    runner = BotRunner(canasta, settings, lease_retry_seconds=retry_seconds)
    try:
        print(f"bots on {where}: waiting for the lease (Ctrl-C or SIGTERM stops)", flush=True)
        runner.start()
        leading = False
        while not stopping.wait(0.05):
            if runner.is_leading != leading:
                leading = runner.is_leading
                print(
                    "leading: this process plays the bots" if leading else "not leading any more",
                    flush=True,
                )
        print("stopping", flush=True)
    finally:
        runner.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    # once the runner has let go of the lease, as ``canasta project`` says it: a service
    # manager's log shows the process ended cleanly, not killed half-way
    print("stopped", flush=True)
    return 0
