"""The distribution-free interval of a percentile difference (harness.report.analysis.quantile_diff), hand-computed
at small samples, its coverage where a bootstrap's fails, and the bootstrap draws kept for the resolution
estimate (harness.report.analysis.noise)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.report.analysis.confidence import percentile_change
from harness.report.analysis.noise import MIN_REQUESTS, NO_RECORDS, min_requests, resampled_percentiles
from harness.report.analysis.quantile_diff import Side, diff_bounds, p_value, percentile_diff_interval, union_tail


@pytest.mark.parametrize("q", [0.5, 0.75, 0.9])
def test_resampled_percentiles_match_a_literal_bootstrap(q: float) -> None:
    """Drawing the order statistics directly gives the same distribution as resampling the requests."""
    x = np.random.default_rng(1).lognormal(0, 0.5, size=37)
    fast = resampled_percentiles(x, q, np.random.default_rng(2), 40_000)
    idx = np.random.default_rng(3).integers(0, len(x), size=(40_000, len(x)))
    literal = np.percentile(x[idx], 100 * q, axis=1)
    for p in (2.5, 25, 50, 75, 97.5):
        assert abs(np.percentile(fast, p) - np.percentile(literal, p)) <= 0.05 * np.std(literal) + 1e-12
    assert np.std(fast) == pytest.approx(np.std(literal), rel=0.03)


@pytest.mark.parametrize("q", [0.5, 0.75, 0.9])
def test_interval_contains_the_true_difference_of_known_distributions(q: float) -> None:
    """Exponential latencies with means 1.0 and 1.1: the true quantile difference is 0.1 * -ln(1 - q)."""
    rng = np.random.default_rng(7)
    a, b = rng.exponential(1.0, 3000), rng.exponential(1.1, 3000)
    r = percentile_diff_interval(a, b, q)
    true = 0.1 * -np.log(1 - q)
    assert r.diff is not None and r.pct is not None
    assert r.diff[0] <= true <= r.diff[1]
    assert r.pct[0] <= 10.0 <= r.pct[1]   # the true relative change is +10 % at every quantile
    assert (r.n_a, r.n_b) == (3000, 3000)


def test_identical_samples_are_within_noise() -> None:
    a = np.random.default_rng(3).normal(2.0, 0.3, 500)
    r = percentile_diff_interval(a, a.copy(), 0.9)
    assert r.within_noise is True and r.reading == "within noise"
    assert r.diff is not None and r.diff[0] < 0 < r.diff[1]


def test_a_shifted_sample_is_outside_noise() -> None:
    a = np.random.default_rng(4).normal(2.0, 0.1, 400)
    r = percentile_diff_interval(a, a + 0.3, 0.5)
    assert r.within_noise is False and r.reading == "outside noise"
    assert r.diff is not None and r.diff[0] == pytest.approx(0.3, abs=0.05) and r.diff[1] > 0.25
    assert r.pct is not None and 10 < r.pct[0] <= r.pct[1] < 20


def test_the_interval_is_reproducible() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.normal(1, 0.2, 100), rng.normal(1.05, 0.2, 100)
    assert percentile_diff_interval(a, b, 0.9) == percentile_diff_interval(list(a), list(b), 0.9)


def test_small_samples_give_no_interval_but_their_sizes() -> None:
    few = [1.0] * (MIN_REQUESTS - 1)
    r = percentile_diff_interval(few, [1.2] * 50, 0.5)
    assert r.diff is None and r.within_noise is None
    assert (r.n_a, r.n_b) == (MIN_REQUESTS - 1, 50)
    assert r.reading == f"fewer than {MIN_REQUESTS} requests ({MIN_REQUESTS - 1} vs 50): no interval"
    enough = percentile_diff_interval([1.0] * MIN_REQUESTS, [1.2] * MIN_REQUESTS, 0.5)
    assert enough.diff == pytest.approx((0.2, 0.2)) and enough.reading == "outside noise"


def test_an_empty_side_gives_no_interval() -> None:
    r = percentile_diff_interval([], [1.0, 2.0] * 10, 0.9)
    assert r.diff is None and r.reading == NO_RECORDS
    assert (r.n_a, r.n_b) == (None, 20)
    assert r.as_json() == {"n_a": None, "n_b": 20, "diff": None, "pct": None, "within_noise": None,
                           "reason": NO_RECORDS, "runs_a": 1, "runs_b": 1, "repeat_spread_pct": None}


def test_a_zero_baseline_gives_no_percent_interval() -> None:
    r = percentile_diff_interval([0.0] * 20, [0.5] * 20, 0.5)
    assert r.diff == pytest.approx((0.5, 0.5)) and r.pct is None


def test_n10_p50_by_hand() -> None:
    """Bin(10, 0.5): P(<= 1) = 0.0107 <= 0.0125, so x(2) bounds the median below; P(<= 8) = 0.9893 >= 0.9875, so
    x(9) above. A = 1..10 and B = 11..20: B − A in [12 − 9, 19 − 2] = [3, 17]."""
    r = percentile_diff_interval(list(range(1, 11)), list(range(11, 21)), 0.5)
    assert r.diff == (3.0, 17.0) and r.reading == "outside noise"
    assert r.pct == pytest.approx(((12 / 9 - 1) * 100, (19 / 2 - 1) * 100))


def test_n17_p50_by_hand_and_a_p90_needs_42() -> None:
    """Bin(17, 0.5): P(<= 3) = 0.0064, P(<= 4) = 0.0245, so x(4) below; P(<= 13) = 0.9936, P(<= 12) = 0.9755, so
    x(14) above. A = 0..16 and B = A + 5: [x_B(4) − x_A(14), x_B(14) − x_A(4)] = [8 − 13, 18 − 3] = [-5, 15],
    within noise."""
    a = [float(v) for v in range(17)]
    r = percentile_diff_interval(a, [v + 5 for v in a], 0.5)
    assert r.diff == (-5.0, 15.0) and r.reading == "within noise"
    assert min_requests(0.9) == 42                              # 0.9^42 = 0.0120 <= 0.0125 < 0.9^41 = 0.0133
    assert percentile_diff_interval(a, a, 0.9).reason == "fewer than 42 requests (17 vs 17): no interval"


def test_n50_p90_by_hand_reaches_the_sample_maximum() -> None:
    """Bin(50, 0.9): P(<= 39) = 0.0094 <= 0.0125, so x(40) below; P(<= 48) = 0.9662, P(<= 49) = 0.9949, so only
    the largest request, x(50), bounds the p90 above: the interval reaches the sample's end, as no bootstrap can."""
    a = [float(v) for v in range(1, 51)]
    r = percentile_diff_interval(a, [v * 2 for v in a], 0.9)
    assert r.diff == (80.0 - 50.0, 100.0 - 40.0)
    assert Side.of(a, 0.9).bounds(union_tail()) == (40.0, 50.0)


def test_identical_populations_are_within_noise_at_least_95_percent_of_the_time_at_the_fewest_requests() -> None:
    rng = np.random.default_rng(11)
    inside = sum(percentile_diff_interval(rng.lognormal(0, 1, 42), rng.lognormal(0, 1, 42), 0.9).within_noise
                 for _ in range(400))
    assert inside >= 0.95 * 400


def test_the_p_value_inverts_the_interval() -> None:
    rng = np.random.default_rng(12)
    a, b = rng.lognormal(0, 0.5, 300), rng.lognormal(0.25, 0.5, 300)
    change = percentile_change(a, b, 0.9)
    assert change.p is not None and change.low_pct is not None and change.high_pct is not None
    assert (change.p <= 0.05) == (change.low_pct > 0 or change.high_pct < 0)
    sa, sb = Side.of(a, 0.9), Side.of(b, 0.9)
    p = p_value(sa, sb)
    assert p == change.p and 0 < p < 1
    below, above = diff_bounds(sa, sb, p / 4 * 0.999), diff_bounds(sa, sb, p / 4 * 1.001)
    assert below[0] <= 0 <= below[1] and not above[0] <= 0 <= above[1]   # zero leaves the interval at p
