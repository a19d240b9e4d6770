# execgraph — entry points: `make demo`, `make check` (the fast gate) and `make test`
# (everything CI runs). Each sets up what it needs.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
EXTRAS := dev,postgres,browser,openai,mcp,temporal,docs,agentdojo
# pytest-xdist workers for the whole suite (each has its own servers, ports and folders):
# twice the cores, at most eight. Most of the suite's time is spent waiting (on servers,
# child processes, leases running out), not on a core: on two cores, four workers take
# about a third less time than two.
JOBS ?= $(shell n=$$(nproc); j=$$((n * 2)); echo $$((j > 8 ? 8 : j)))

.PHONY: demo temporal-demo check check-types check-unit test lint typecheck suite eval-quick docs system-deps clean

# Only the dev extra: what `make check` needs (no PostgreSQL driver, browser, OpenAI, MCP
# or Temporal).
$(DEV_STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c requirements.lock -e ".[dev]"
	@touch $(DEV_STAMP)

# Every extra: what `make test` and the demos need.
$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c requirements.lock -e ".[$(EXTRAS)]"
	@touch $(STAMP) $(DEV_STAMP)

# Debian packages the real-adapter tests drive (Chromium for the browser adapter,
# PostgreSQL server binaries for the Postgres store and database adapter).
system-deps:
	@bash scripts/system-deps.sh

# The demo needs execgraph alone, no extra: its own stamp installs only that (a venv that
# has everything already has it too). Exit 3 means the run is WAITING for an approval
# that no terminal could give: the command to continue it has been printed, so that is
# not a failure of `make demo`.
DEMO_STAMP := $(VENV)/.demo-installed

$(DEMO_STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -c requirements.lock -e .
	@touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/execgraph demo || test $$? -eq 3

# The demo on Temporal, on this machine: a local dev server, two workers, the demo run
# started, approved and finished through Temporal (scripts/temporal-demo.sh).
temporal-demo: $(STAMP)
	bash scripts/temporal-demo.sh $(BIN)

# The fast gate for every change: lint, types, import layers and the unit tier (no
# process, no server), with only the dev extra installed. Types and tests run side by side.
check: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	@$(MAKE) --no-print-directory -j2 --output-sync=target check-types check-unit

check-types: $(DEV_STAMP)
	$(BIN)/mypy

check-unit: $(DEV_STAMP)
	$(BIN)/python -m pytest -q -m unit -n 2

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# Every tier: unit, integration (real servers and processes) and system (torture, kill
# harness, crash matrices, benchmark smoke runs).
suite: $(STAMP) system-deps
	$(BIN)/python -m pytest -q -n $(JOBS) --dist loadscope --no-loadscope-reorder

# The evaluation's CI subset, end to end through the CLI (output under build/, git-ignored).
eval-quick: $(STAMP)
	$(BIN)/execgraph eval --quick --out build/eval-quick

# The documentation site, built strictly (a broken link or a failed generator fails the
# build) into build/site (git-ignored); its code blocks run in tests/docs. Never --quiet:
# it hides the warnings --strict counts, and a broken link would pass.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

test: lint typecheck docs suite eval-quick

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
