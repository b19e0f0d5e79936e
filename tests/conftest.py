"""Which command runs a test, and what it may share (see the Makefile):

- `make test`: every mechanism, on two workers: the unit tier, then every other test that is neither `long` nor of
  a tier that needs a service (`slurm`, `sglang`, `docker`);
- `make test-all` (what `.ci/run` calls): those, the `long` tests and those tiers, on two workers, then the
  `alone` tests one at a time with nothing else running.

Tests marked `host_wide` use what the whole machine shares: the deployment recipes' fixed ports, the routers and
SGLang processes a test checks are all gone when it ends, the local Slurm. Each holds a lock on this machine while
it runs (a module marked so holds it through its module-scoped fixtures too), so no two of them overlap, whichever
worker or pytest session runs them. The workers take whole modules (`--dist loadscope`), so a module's shared
fixtures run once.
"""

from __future__ import annotations

import fcntl
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

HOST_LOCK = Path(tempfile.gettempdir()) / "harness-tests-host-wide.lock"
_held = 0   # this process's holds on HOST_LOCK (a module's hold covers its tests)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "long: in make test-all only: minutes of wall time for a command that is no "
                                       "mechanism of everyday change (the search, the InferenceX reference run)")
    config.addinivalue_line("markers", "alone: make test-all runs it by itself after the parallel tiers: what it "
                                       "compares is within the scheduling jitter of a machine running nothing else")
    config.addinivalue_line("markers", "host_wide: uses what the whole machine shares (fixed ports, routers or "
                                       "SGLang processes it checks are gone, the local Slurm): one such test at a time")


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
    yield from _hold(request.node.get_closest_marker("host_wide") is not None)


@pytest.fixture(autouse=True)
def _host_wide_test(request: pytest.FixtureRequest) -> Iterator[None]:
    yield from _hold(request.node.get_closest_marker("host_wide") is not None)
