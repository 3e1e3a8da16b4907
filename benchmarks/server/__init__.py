"""The server benchmark (``make bench``, second half): ``python -m benchmarks.server``.

``benchmarks.server.cli`` says what it measures and how to read its report. Its parts:
``config`` (paths, targets), ``stats`` (percentiles), ``database``, ``cpu`` and ``probes``
(what the machine did during a run), ``server_process`` and ``experiments`` (the server
under test), ``http_client``, ``mirror``, ``driver`` and ``load`` (the load generator),
``profiler`` (py-spy), ``pgbench``, ``replay`` and ``report``.
"""
