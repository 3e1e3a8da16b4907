"""``python -m benchmarks.server``: see ``benchmarks.server.cli``."""

import sys

from benchmarks.server.cli import main

sys.exit(main())
