# execgraph — two entry points: `make demo` and `make test`. Each sets up what it needs.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXTRAS := dev,postgres,browser,openai,mcp,temporal,docs,agentdojo

.PHONY: demo temporal-demo test lint typecheck unit eval-quick docs system-deps clean

$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c requirements.lock -e ".[$(EXTRAS)]"
	@touch $(STAMP)

# Debian packages the real-adapter tests drive (Chromium for the browser adapter,
# PostgreSQL server binaries for the Postgres store and database adapter).
system-deps:
	@bash scripts/system-deps.sh

# Exit 3 means the run is WAITING for an approval that no terminal could give: the
# command to continue it has been printed, so that is not a failure of `make demo`.
demo: $(STAMP)
	$(BIN)/execgraph demo || test $$? -eq 3

# The demo on Temporal, on this machine: a local dev server, two workers, the demo run
# started, approved and finished through Temporal (scripts/temporal-demo.sh).
temporal-demo: $(STAMP)
	bash scripts/temporal-demo.sh $(BIN)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP) system-deps
	$(BIN)/python -m pytest -q

# The evaluation's CI subset, end to end through the CLI (output under build/, git-ignored).
eval-quick: $(STAMP)
	$(BIN)/execgraph eval --quick --out build/eval-quick

# The documentation site, built strictly (a broken link or a failed generator fails the
# build) into build/site (git-ignored); its code blocks run in tests/docs. Never --quiet:
# it hides the warnings --strict counts, and a broken link would pass.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

test: lint typecheck docs unit eval-quick

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
