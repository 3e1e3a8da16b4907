"""Which Python build runs a benchmark: it moves every CPU figure."""

from __future__ import annotations

import os
import sys


def interpreter() -> dict[str, str]:
    """Which Python build runs the benchmark (and, through ``sys.executable``, the workers and
    the read-model process): its real path, and whether libpython is a shared library
    (mapped into the process) or linked into the executable. The build moves every CPU
    figure: the server used 8-27% more CPU per command here on pyenv's default build (shared
    libpython, no PGO) than on Debian's (static, PGO-built)."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            shared = any("libpython" in line for line in maps)
        libpython = "shared" if shared else "static"
    except OSError:
        libpython = "unknown"
    return {"executable": os.path.realpath(sys.executable), "libpython": libpython}


def described(version: str, info: dict[str, str]) -> str:
    """The report's line for it: ``Python 3.11.2: /usr/bin/python3.11, libpython static``."""
    return f"Python {version}: {info['executable']}, libpython {info['libpython']}"
