# canasta-ledger developer tasks.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# The interpreter .venv is made from; empty: scripts/python.sh picks one (the system's own
# python3 first: it is built for speed). E.g. make PYTHON=python3.12 venv (after make clean).
PYTHON ?=
VENV := .venv
STAMP := $(VENV)/.installed
PG := scripts/pg.sh

DEMO_ARGS ?=
BENCH_ARGS ?=
SERVER_BENCH_ARGS ?=
MENU_BENCH_ARGS ?=
ARENA_BENCH_ARGS ?=
SPECTATORS_BENCH_ARGS ?=
SOAK_BENCH_ARGS ?=
PYTEST_ARGS ?=
# make test runs the suite in this many processes (pytest-xdist; each has a database of its
# own on the one throwaway PostgreSQL: tests/conftest.py). Many tests wait on servers and
# browsers, so one more than the cores keeps them busy. TEST_WORKERS=0: one process.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))

.PHONY: help venv run test test-fast lint migrate demo bench pg-start pg-replica-start pg-stop clean

help:
	@echo "targets: venv run test test-fast lint migrate demo bench pg-start pg-replica-start pg-stop clean"

venv: $(STAMP)

# Re-installs only when pyproject.toml changes.
$(STAMP): pyproject.toml
	@test -x $(VENV)/bin/python || { \
		py="$(PYTHON)"; if [ -z "$$py" ]; then py="$$(scripts/python.sh)" || exit 1; fi; \
		echo "creating $(VENV) with $$py ($$("$$py" -c 'import sys; print(sys.version.split()[0])'))"; \
		"$$py" -m venv $(VENV); }
	$(VENV)/bin/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

run: venv
	$(VENV)/bin/uvicorn app.main:app --host 127.0.0.1 --port 8000

# Installs Debian's chromium for the browser tests and nginx for the deployment kit's tests when
# missing (scripts/chromium.sh, scripts/nginx.sh), starts a throwaway PostgreSQL and a streaming
# standby of it (pg_basebackup: the read-replica tests, docs/scaling.md), runs pytest against
# them (in TEST_WORKERS processes), always stops them again, and exits with pytest's exit code. The 15 slowest tests are listed at the end (where a
# slow CI run spent its time).
test: venv
	@scripts/chromium.sh >/dev/null
	@scripts/nginx.sh >/dev/null
	@$(PG) start
	@trap '$(PG) stop' EXIT; $(PG) replica-start && \
	TEST_DATABASE_URL="$$($(PG) url)" TEST_READ_DATABASE_URL="$$($(PG) replica-url)" \
		$(VENV)/bin/pytest -q -n $(TEST_WORKERS) --dist worksteal --durations=15 $(PYTEST_ARGS)

# The pure, fast tests without PostgreSQL: the domain, the rule scenarios, the properties and
# the docs, slow ones deselected (under a minute). `make test` still runs everything.
FAST_TESTS := tests/domain tests/scenarios tests/property tests/docs
test-fast: venv
	$(VENV)/bin/pytest -q -m "not slow and not postgres" $(FAST_TESTS) $(PYTEST_ARGS)

# ruff, the formatter check, mypy, then the import contracts of pyproject.toml
# ([tool.importlinter]: app -> projections -> domain, and a pure domain).
lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy .
	$(VENV)/bin/lint-imports

migrate: venv
	@test -n "$$DATABASE_URL" || test -n "$$CANASTA_DATABASE_URL" || \
		{ echo "set DATABASE_URL (e.g. DATABASE_URL=\$$($(PG) url) make migrate)"; exit 2; }
	$(VENV)/bin/alembic upgrade head

demo: venv
	$(VENV)/bin/canasta demo $(DEMO_ARGS)

# The engine benchmark, the move menu's latency, the table page in Chromium (its weight and
# time to the first card), the bots' strength (a few minutes over every core: basic against
# random), then the server benchmark (uvicorn + load generator) against a throwaway
# PostgreSQL, which is always stopped again. Every one runs; the target fails if any failed or
# missed its target, and says which. Options: BENCH_ARGS (benchmarks.run), MENU_BENCH_ARGS
# (benchmarks.menu), WEB_BENCH_ARGS (benchmarks.web, e.g. "--visits 20"), ARENA_BENCH_ARGS
# (benchmarks.arena, e.g. "--games 40"), SERVER_BENCH_ARGS (benchmarks.server, e.g.
# "--seconds 60 --nodelay-fix"), SPECTATORS_BENCH_ARGS (benchmarks.spectators: live streams
# at scale, e.g. "--spectators 0,500,2000,5000 --games 64 --rate 500"),
# COMMAND_PATH_BENCH_ARGS (benchmarks.command_path: the server's CPU per command in one
# process, e.g. "--profile 40"), SOAK_BENCH_ARGS (benchmarks.soak: what grows while the
# server runs, three minutes by default, e.g. "--minutes 15"). Figures: .bench/
bench: venv
	@$(PG) start
	@scripts/chromium.sh >/dev/null
	@trap '$(PG) stop' EXIT; failed=""; \
	$(VENV)/bin/python -m benchmarks.run $(BENCH_ARGS) || failed="$$failed run"; \
	$(VENV)/bin/python -m benchmarks.menu $(MENU_BENCH_ARGS) || failed="$$failed menu"; \
	$(VENV)/bin/python -m benchmarks.web $(WEB_BENCH_ARGS) || failed="$$failed web"; \
	$(VENV)/bin/python -m benchmarks.arena $(ARENA_BENCH_ARGS) || failed="$$failed arena"; \
	DATABASE_URL="$$($(PG) url)" $(VENV)/bin/python -m benchmarks.server $(SERVER_BENCH_ARGS) \
		|| failed="$$failed server"; \
	DATABASE_URL="$$($(PG) url)" $(VENV)/bin/python -m benchmarks.command_path \
		$(COMMAND_PATH_BENCH_ARGS) || failed="$$failed command_path"; \
	DATABASE_URL="$$($(PG) url)" $(VENV)/bin/python -m benchmarks.spectators \
		$(SPECTATORS_BENCH_ARGS) || failed="$$failed spectators"; \
	DATABASE_URL="$$($(PG) url)" $(VENV)/bin/python -m benchmarks.soak \
		$(SOAK_BENCH_ARGS) || failed="$$failed soak"; \
	if [ -n "$$failed" ]; then echo "benchmarks that failed or missed a target:$$failed"; exit 1; fi

pg-start:
	@$(PG) start

# The throwaway cluster's streaming standby (after pg-start; pg-stop stops both).
pg-replica-start:
	@$(PG) replica-start

pg-stop:
	@$(PG) stop

clean:
	-@$(PG) destroy
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
