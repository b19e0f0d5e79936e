# The two commands of the README's quick start: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)

.PHONY: demo test setup lint clean

$(BIN)/python:
	@echo "make: creating $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); echo "error: could not create $(VENV) with $(PYTHON);" \
	  "on Debian/Ubuntu install the venv module: apt-get install python3-venv" >&2; exit 1; }
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	@echo "make: installing the harness and its pinned dependencies (AgentX client, test tools) into $(VENV);" \
	  "the first time takes a few minutes, longer on a busy machine"
	$(BIN)/python -m pip install --quiet --progress-bar off -e '.[dev]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)
	@echo "make: $(VENV) ready"

setup: $(STAMP)

demo: setup
	$(BIN)/harness sweep recipes/quickstart-sim.yaml --set client.burst_phase_starts=true

# the unit tests (no server, no fixed port) on two workers; then every other test, one at a time
test: setup
	$(BIN)/python -m pytest -q -n 2 tests/unit
	$(BIN)/python -m pytest -q --durations=20 tests --ignore=tests/unit

lint: setup
	$(BIN)/ruff check harness launchers slurm tests benchmarks
	$(BIN)/mypy --strict harness
	$(BIN)/mypy launchers slurm

clean:
	rm -rf runs .pytest_cache .mypy_cache .ruff_cache
