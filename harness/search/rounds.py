"""Rounds of a search: several concurrencies tested at once (as one Slurm job array), as a pure function of the
outcomes so far.

A round follows the same order as one point at a time (`harness.search.order`), only wider:

- gallop: the next concurrency to test and its next doublings, `width` of them (capped at `max_conc`), e.g.
  c1, c2, c4, c8 for width 4;
- bisect: the untested concurrencies of the interval in which the boundary lies (`Bracket.low`, `Bracket.high`),
  split into `width + 1` parts (`width` of them, all when it holds fewer).

A round re-tests an inconclusive concurrency as the local search does (`round_tests`): those inside the interval
that may still be re-tested (`order.retestable`: fewer tests so far than `attempts`) come first, each as its next
attempt (the command runs attempt 2 with twice the window, attempt 3 on as a repeat of it), up to `width` of them
(evenly spaced when there are more); the rest of the round is untested concurrencies as above. The gallop re-tests
nothing, as `order.bracket` does not. With width 1 a round is the one concurrency `order.bracket` names, re-tests
included, so the search tests the same points as the local one would. A round is empty when the search is done.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.search.order import Outcome, bracket, retestable, untested_inside


def next_round(outcomes: Mapping[int, Outcome], min_conc: int, max_conc: int, width: int) -> list[int]:
    """The concurrencies of the next round in increasing order (empty: the search is done), re-testing nothing."""
    return sorted(c for c, _ in round_tests(outcomes, dict.fromkeys(outcomes, 1), min_conc, max_conc, width, 1))


def round_tests(outcomes: Mapping[int, Outcome], tests: Mapping[int, int], min_conc: int, max_conc: int,
                width: int, attempts: int) -> list[tuple[int, int]]:
    """The next round as (concurrency, attempt) pairs, at most `width` (empty: the search is done): the re-tests
    first, then the untested concurrencies, each part in increasing order. `tests`: how many times each
    concurrency was tested so far (its latest test gave `outcomes`); `attempts`: tests allowed per concurrency."""
    if width < 1:
        raise ValueError(f"expected a round width of at least 1, got {width}")
    again = retestable(outcomes, tests, attempts)
    state = bracket(outcomes, min_conc, max_conc, again)
    if state.next_conc is None:
        return []
    tested = [c for c in outcomes if min_conc <= c <= max_conc]
    if not tested or (state.first_fail is None and max(tested) < max_conc):   # the gallop, as in `bracket`
        return [(c, 1) for c in _gallop(state.next_conc, max_conc, width)]
    start = min_conc if state.low is None else state.low + 1
    high = max_conc if state.high is None else state.high
    retests = _split([c for c in sorted(again) if start <= c <= high], width)   # those `bracket` would pick
    fresh = _split(untested_inside(outcomes, state, min_conc), width - len(retests)) if len(retests) < width else []
    return [(c, tests.get(c, 0) + 1) for c in retests] + [(c, 1) for c in fresh]


def _gallop(start: int, max_conc: int, width: int) -> list[int]:
    concs = [start]
    while len(concs) < width and concs[-1] < max_conc:
        concs.append(min(2 * concs[-1], max_conc))
    return concs


def _split(concs: list[int], width: int) -> list[int]:
    """Up to `width` of `concs` (increasing), evenly spaced (`width + 1` parts); width 1 gives the middle one, as
    `order.bracket` picks it."""
    if len(concs) <= width:
        return concs
    return sorted({concs[(len(concs) + 1) * i // (width + 1) - 1] for i in range(1, width + 1)})


def most_rounds_left(outcomes: Mapping[int, Outcome], tests: Mapping[int, int], min_conc: int, max_conc: int,
                     width: int, attempts: int) -> int:
    """The most rounds still to start, each of its tests conclusive (0: the search is done). A round's outcomes
    are taken monotone, as the search takes the SLO (its concurrencies pass up to some point and fail above it),
    so a round of k tests can end k + 1 ways; the worst of them, round after round."""
    memo: dict[tuple[object, ...], int] = {}

    def worst(extra: dict[int, Outcome]) -> int:
        merged = {**outcomes, **extra}
        counts = {**tests, **dict.fromkeys(extra, 1)}
        concs = sorted(c for c, _ in round_tests(merged, counts, min_conc, max_conc, width, attempts))
        if not concs:
            return 0
        # what is left to decide lies between the round's ends: the outcomes there and the highest tested say
        # what comes next (a conclusive test never lands inside the interval it leaves)
        key = (tuple(concs), tuple(sorted((c, o) for c, o in merged.items() if concs[0] <= c <= concs[-1])),
               max(merged, default=None), min((c for c, o in merged.items() if o == "fail"), default=None))
        if key not in memo:
            memo[key] = 1 + max(worst({**extra, **{c: "pass" if i < k else "fail" for i, c in enumerate(concs)}})
                                for k in range(len(concs) + 1))
        return memo[key]

    return worst({})
