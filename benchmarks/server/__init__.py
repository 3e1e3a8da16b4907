"""The server benchmark (``make bench``, second half): ``python -m benchmarks.server``.

``benchmarks.server.cli`` says what it measures and how to read its report.
"""
