"""Which command runs a test, and what it may share (see the Makefile):

- `make test`: every mechanism, on two workers: the unit tier, then every other test that is neither `long` nor of
  a tier that needs a service (`slurm`, `sglang`, `docker`);
- `make test-all` (what `.ci/run` calls): those, the `long` tests and those tiers, on two workers, then the
  `alone` tests one at a time with nothing else running.

Host-wide tests (`HOST_WIDE`) use what the whole machine shares: the deployment recipes' fixed ports, the routers and
SGLang processes a test checks are all gone when it ends, the local Slurm. The workers take whole modules, so a
module's shared fixtures run once, and all host-wide tests as one unit, so one worker runs them in turn while the
other runs the rest; that unit goes out first, then the modules with a `long` test, then the rest in order, so no
long module starts last. Each also holds a lock on this machine while it runs (a host-wide module holds it through its
module-scoped fixtures too), so no two overlap across pytest sessions either.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Node id prefixes of the host-wide tests: what the whole machine shares, and why
HOST_WIDE = (
    "tests/slurm/",                                   # the one local Slurm: a module's jobs must not queue behind another's
    "tests/sglang/",                                  # checks that no SGLang process or router is left on the machine
    "tests/integration/test_deployment_sweep.py",     # fixed ports; checks that no router is left
    "tests/integration/test_sim_dp_routing.py",       # a router: not while another test checks that none is left
    "tests/integration/test_sim_disaggregation.py",   # a router: not while another test checks that none is left
    "tests/integration/test_submission_grade.py::test_a_deployment_at_agentx_length",   # the example's fixed ports
)
HOST_WIDE_SCOPE = "host-wide"
HOST_LOCK = Path(tempfile.gettempdir()) / "harness-tests-host-wide.lock"
_held = 0   # this process's holds on HOST_LOCK (a module's hold covers its tests)


def pytest_configure(config: pytest.Config) -> None:
    # No test writes into the user's own results store (or a team's HARNESS_DB): the store is off unless a test
    # names one (`--db`, or HARNESS_DB set by the test itself).
    os.environ["HARNESS_DB"] = "off"
    config.addinivalue_line("markers", "long: in make test-all only: minutes of wall time for a command that is no "
                                       "mechanism of everyday change (the search, the InferenceX reference run)")
    config.addinivalue_line("markers", "alone: make test-all runs it by itself after the parallel tiers: what it "
                                       "compares is within the scheduling jitter of a machine running nothing else")


def is_host_wide(nodeid: str) -> bool:
    return nodeid.startswith(HOST_WIDE)


def _start_rank(item: pytest.Item, long_modules: set[str]) -> int:
    if is_host_wide(item.nodeid):
        return 0
    return 1 if item.nodeid.split("::", 1)[0] in long_modules else 2


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The order the workers are handed the work in (`--no-loadscope-reorder` keeps it): host-wide tests, then the
    modules with a `long` test, then the rest; a module's tests stay together and in their order."""
    long_modules = {item.nodeid.split("::", 1)[0] for item in items if item.get_closest_marker("long")}
    items.sort(key=lambda item: _start_rank(item, long_modules))


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadscope` with every host-wide test in one scope: the worker that takes it runs them in turn and the
    other never waits on the lock."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class HostWideInOneScope(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return HOST_WIDE_SCOPE if is_host_wide(nodeid) else super()._split_scope(nodeid)

    return HostWideInOneScope(config, log)


def _hold(marked: bool) -> Iterator[None]:
    global _held
    if not marked or _held:
        yield
        return
    with HOST_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _held += 1
        try:
            yield
        finally:
            _held -= 1
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="module", autouse=True)
def _host_wide_module(request: pytest.FixtureRequest) -> Iterator[None]:
    yield from _hold(is_host_wide(request.node.nodeid))


@pytest.fixture(autouse=True)
def _host_wide_test(request: pytest.FixtureRequest) -> Iterator[None]:
    yield from _hold(is_host_wide(request.node.nodeid))
