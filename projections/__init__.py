"""What turns events into rows and views: the read-model projections (``read_models``), the
tables they write and the writer's interface (``view``), the public discard log
(``discard_log``) and what each viewer may see (``visibility``). No database code: that is
``app.infra`` (the layers app -> projections -> domain are checked by ``lint-imports``)."""
