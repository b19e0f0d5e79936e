"""How far a search has to go: "test N of at most M" and an ETA, printed as each test starts.

`most_tests_left` (pure) is the most tests the search may still start if every one of them is conclusive (a
pass or a fail): the worst case over those outcomes of the order's own choices (`order.bracket`), the
inconclusive concurrencies that may be re-tested counted once each. `at_most` adds the tests done, caps the sum at
the search's `--max-points`, and says whether inconclusive points could add more (re-tests allowed and the cap
not reached). A search in rounds counts rounds the same way (`rounds_at_most`). `Progress` turns that into the line, its ETA the mean time per test so far on its clock (none
before the first test has ended).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from harness.search.order import Outcome, bracket, retestable
from harness.search.rounds import most_rounds_left


def most_tests_left(outcomes: Mapping[int, Outcome], tests: Mapping[int, int], min_conc: int, max_conc: int,
                    attempts: int) -> int:
    """The most tests still to start, each of them conclusive: 0 when the search is done. `outcomes` as each
    concurrency's latest test says, `tests` how many times each was tested, `attempts` tests per concurrency."""
    memo: dict[tuple[int | None, ...], int] = {}

    def worst(extra: dict[int, Outcome]) -> int:
        merged = {**outcomes, **extra}
        again = retestable(merged, tests, attempts)
        state = bracket(merged, min_conc, max_conc, again)
        conc = state.next_conc
        if conc is None:
            return 0
        # A conclusive test always lands outside the interval left, so the interval's contents are the original
        # outcomes': the bracket's ends, its lowest failure and the gallop's top say what comes next.
        top = max((c for c in merged if min_conc <= c <= max_conc), default=None)
        key = (state.low, state.high, state.first_fail, top)
        if key not in memo:
            memo[key] = 1 + max(worst({**extra, conc: "pass"}), worst({**extra, conc: "fail"}))
        return memo[key]

    return worst({})


@dataclass(frozen=True)
class AtMost:
    """Test (or round: `unit`) `number` of at most `total`; `more`: inconclusive points could add more."""

    number: int
    total: int
    more: bool
    unit: str = "test"


def at_most(outcomes: Mapping[int, Outcome], tests: Mapping[int, int], min_conc: int, max_conc: int,
            attempts: int, max_points: int | None) -> AtMost:
    """The next test's number and the most tests in all, as the search stands (see the module docstring)."""
    done = sum(tests.values())
    total = done + most_tests_left(outcomes, tests, min_conc, max_conc, attempts)
    capped = total if max_points is None else min(total, max_points)
    more = attempts > 1 and (max_points is None or capped < max_points)
    return AtMost(done + 1, capped, more)


def rounds_at_most(outcomes: Mapping[int, Outcome], tests: Mapping[int, int], min_conc: int, max_conc: int,
                   width: int, attempts: int, rounds_done: int) -> AtMost:
    """The next round's number and the most rounds in all (`rounds.most_rounds_left`), as the search stands."""
    left = most_rounds_left(outcomes, tests, min_conc, max_conc, width, attempts)
    return AtMost(rounds_done + 1, rounds_done + left, attempts > 1, unit="round")


def progress_text(count: AtMost, elapsed_s: float, ended: int) -> str:
    """"test N of at most M" (or "round ..."), and an ETA from the mean time of the `ended` ones (taking
    `elapsed_s`)."""
    text = f"{count.unit} {count.number} of at most {count.total}"
    if count.more:
        text += " (more if a point is inconclusive)"
    if ended > 0:
        left = count.total - count.number + 1
        text += (f", ETA {_duration(left * elapsed_s / ended)} ({elapsed_s / ended / 60:.1f} min per {count.unit} "
                 "so far)")
    return text


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


@dataclass
class Progress:
    """The line printed as each test starts; `clock` (monotonic seconds) starts at the first test."""

    clock: Callable[[], float] = time.monotonic
    started: float | None = field(default=None)

    def line(self, count: AtMost, conc: int) -> str:
        return f"[search] c{conc}: {self.text(count)}"

    def text(self, count: AtMost) -> str:
        now = self.clock()
        if self.started is None:
            self.started = now
        return progress_text(count, now - self.started, count.number - 1)
