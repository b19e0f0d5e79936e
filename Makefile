# The two commands of the README's quick start: `make demo` and `make test` (`make test-all`: CI's, every tier).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)

.PHONY: demo test test-all setup lint clean

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

# the quick start's curve in about 3.5 minutes: every lane starts the window at once, one warm-up call per lane (the
# preset's ten are full prefills: c8's take ~90 s on this small server), 45 s windows (c8 still queues and bends),
# and 20 s for c8's long calls in flight at the window's end to finish (the grace ends when they have)
demo: setup
	$(BIN)/harness sweep recipes/quickstart-sim.yaml --set client.burst_phase_starts=true \
	  --set client.warmup_requests_per_lane=1 --set client.grace_s=20 --duration 45

# Markers (long, alone), host-wide tests: tests/conftest.py. Both print the 20 slowest tests beyond the unit tier.
PYTEST   := $(BIN)/python -m pytest -q
# two workers, each taking whole modules (a module's shared server or job runs once)
PARALLEL := -n 2 --dist loadscope --no-loadscope-reorder --durations=20
SERVICES := slurm or sglang or docker

# every mechanism: the unit tests, then the integration (and GPU) tests that are not long, on two workers
test: setup
	$(PYTEST) -n 2 tests/unit
	$(PYTEST) $(PARALLEL) -m "not (long or $(SERVICES))" tests --ignore=tests/unit

# what CI runs (.ci/run): make test's tests, the long ones and the tiers that need a service (local Slurm,
# real-SGLang CPU tier, docker; each skips without it unless HARNESS_REQUIRE_* says it is required), on two
# workers; then the tests that compare within a quiet machine's jitter, one at a time with nothing beside them
test-all: setup
	$(PYTEST) -n 2 tests/unit
	$(PYTEST) $(PARALLEL) -m "not alone" tests --ignore=tests/unit
	$(PYTEST) --durations=20 -m alone tests --ignore=tests/unit

lint: setup
	$(BIN)/ruff check harness launchers slurm tests benchmarks
	$(BIN)/mypy --strict harness
	$(BIN)/mypy launchers slurm

clean:
	rm -rf runs .pytest_cache .mypy_cache .ruff_cache
