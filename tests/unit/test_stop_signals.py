"""Stop signals: a SIGUSR1 that comes before a point watches for signals is kept, and the first point to watch
stops at once with the walltime reason (what `harness run-point` relies on when Slurm's margin comes early)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from harness.point.state.watch import StopSignals, keep_early_walltime_signal


@pytest.fixture
def usr1_restored() -> Iterator[None]:
    old = signal.getsignal(signal.SIGUSR1)
    yield
    signal.signal(signal.SIGUSR1, old)


def test_an_early_usr1_is_kept_and_stops_the_first_point_that_watches(usr1_restored: None) -> None:
    keep_early_walltime_signal()
    os.kill(os.getpid(), signal.SIGUSR1)          # the process lives on: the signal is only kept
    with StopSignals() as sigs:
        assert sigs.received == signal.SIGUSR1
        assert sigs.reason() == "walltime_margin: SIGUSR1 before the Slurm time limit"
    with StopSignals() as later:                  # kept once: the next point starts clean
        assert later.reason() is None


def test_without_an_early_signal_a_point_starts_clean(usr1_restored: None) -> None:
    keep_early_walltime_signal()
    with StopSignals() as sigs:
        assert sigs.reason() is None
        os.kill(os.getpid(), signal.SIGUSR1)      # while watching: the point's own handler takes it
        assert sigs.reason() == "walltime_margin: SIGUSR1 before the Slurm time limit"
    with StopSignals() as later:
        assert later.reason() is None
