"""``PROMETHEUS_MULTIPROC_DIR`` made ready before ``prometheus_client`` is imported (it
chooses its multiprocess mode once, at import, and its first metric then writes a file in
the directory): called by ``app/__init__.py``, so that it runs before any module of the
application imports the library (docs/operations.md, "Metrics").

A directory that is not there is made (empty, as the metrics want it): a worker used to die
at import with a traceback, ``FileNotFoundError: .../counter_PID.db``, and uvicorn started
new ones for ever. One that cannot be made (no permission) is left aside: the variable is
removed from this process's environment, so that it counts alone, and ``PROBLEM`` says why
(``app.metrics.warn_if_alone`` logs it at start-up)."""

from __future__ import annotations

import os

#: The environment variable that puts the library in multiprocess mode (a directory).
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

#: Why the directory could not be used, if it could not.
PROBLEM: str | None = None
#: The directory this process made, if it made one.
MADE: str | None = None


def prepare() -> None:
    global PROBLEM, MADE
    path = os.environ.get(MULTIPROC_ENV)
    if not path or os.path.isdir(path):
        return
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        del os.environ[MULTIPROC_ENV]
        PROBLEM = f"{MULTIPROC_ENV} {path} is not a directory and cannot be made: {exc.strerror}"
    else:
        MADE = path
