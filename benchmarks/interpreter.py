"""Which Python build runs a benchmark: it moves every CPU figure."""

from __future__ import annotations

import os
import sys


def interpreter() -> dict[str, str]:
    """Which Python build runs the benchmark (and, through ``sys.executable``, the workers and
    the read-model process): its real path, and whether libpython is a shared library
    (mapped into the process) or linked into the executable. The build moves every CPU
    figure: a shared, non-PGO libpython (pyenv's default) cost 15-20% more per command here
    than Debian's static, PGO-built one."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            shared = any("libpython" in line for line in maps)
        libpython = "shared" if shared else "static"
    except OSError:
        libpython = "unknown"
    return {"executable": os.path.realpath(sys.executable), "libpython": libpython}
