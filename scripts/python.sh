#!/usr/bin/env bash
# Prints the Python interpreter `make` builds .venv from (when PYTHON is not given).
#
# The first of these that is Python 3.11 or newer and can make a virtualenv (has the venv and
# ensurepip modules):
#
#   1. /usr/bin/python3, the operating system's own;
#   2. python3 from the PATH.
#
# Why the system's first: distributions build CPython with profile-guided and link-time
# optimisation, and Debian links its python3 executable statically against libpython.
# CPython's own build (pyenv's too) does PGO and LTO only when asked (--enable-optimizations,
# --with-lto); the pyenv build on this project's machine has neither, and a shared libpython
# (--enable-shared), through whose indirections every call inside the interpreter then goes.
# On the 2-core machine this project is benchmarked on, Debian's 3.11.2 against pyenv's
# 3.11.7: the server used 8-27% less CPU per command (median 11%, six interleaved pairs of
# benchmark runs), the load generator 2-18% less, and the engine played 15-23% more deals
# per second (docs/performance.md).
#
# Prints nothing and exits 1 if neither will do.
set -euo pipefail

usable() {
    "$1" - <<'EOF' >/dev/null 2>&1
import sys
import ensurepip, venv  # noqa: F401  (Debian splits these into python3-venv)
sys.exit(sys.version_info < (3, 11))
EOF
}

for candidate in /usr/bin/python3 python3; do
    if command -v "$candidate" >/dev/null 2>&1 && usable "$candidate"; then
        command -v "$candidate"
        exit 0
    fi
done
echo "scripts/python.sh: no Python 3.11+ with the venv module found (tried /usr/bin/python3, python3);" \
    "install one, or run make with PYTHON=/path/to/python3.11" >&2
exit 1
