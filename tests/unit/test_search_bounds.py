"""A percentile's bounds as the search judges them: order statistics from the binomial law, computed here by hand
(math.comb) at 10, 17 and 50 requests; an upper bound beyond the sample's largest value or unbounded, so a point
with too few requests cannot pass a `<=` condition; the least requests a p90 needs, as docs/search.md states it."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from harness.report.analysis.noise import min_requests_for_bound, quantile_bounds
from harness.search.slo import parse_slo
from harness.search.spread import interval_of
from harness.search.tested import Check, judge

ROOT = Path(__file__).resolve().parents[2]


def binom_cdf(n: int, q: float, k: int) -> float:
    """P(Binomial(n, q) <= k), term by term."""
    return sum(math.comb(n, i) * q ** i * (1 - q) ** (n - i) for i in range(k + 1))


def sample(n: int) -> list[float]:
    """n distinct latencies, shuffled: the bounds must come from the sorted sample."""
    values = [0.1 + 0.01 * i for i in range(n)]
    return values[::2] + values[1::2]


def test_ten_requests_bound_a_p90_from_below_only() -> None:
    # P(Binom(10, 0.9) <= 6) = 0.0128 <= 0.05 < P(<= 7) = 0.0702: the lower bound is the 7th smallest value;
    # P(<= 9) = 1 - 0.9^10 = 0.651 < 0.95: no order statistic bounds it from above
    assert binom_cdf(10, 0.9, 6) <= 0.05 < binom_cdf(10, 0.9, 7)
    assert 1 - 0.9 ** 10 < 0.95
    xs = sample(10)
    assert quantile_bounds(xs, 0.9) == (sorted(xs)[6], math.inf)


def test_seventeen_requests_leave_a_p90_unbounded_above() -> None:
    # P(Binom(17, 0.9) <= 12) = 0.0221 <= 0.05 < P(<= 13) = 0.0826: the lower bound is the 13th smallest value;
    # 1 - 0.9^17 = 0.833 < 0.95: no upper bound
    assert binom_cdf(17, 0.9, 12) <= 0.05 < binom_cdf(17, 0.9, 13)
    assert 1 - 0.9 ** 17 < 0.95
    xs = sample(17)
    assert quantile_bounds(xs, 0.9) == (sorted(xs)[12], math.inf)


def test_fifty_requests_bound_a_p90_by_their_second_largest_value() -> None:
    # upper: P(Binom(50, 0.9) <= 47) = 0.888 < 0.95 <= P(<= 48) = 0.966: the 49th smallest value;
    # lower: P(<= 40) = 0.0245 <= 0.05 < P(<= 41) = 0.0579: the 41st smallest value
    assert binom_cdf(50, 0.9, 47) < 0.95 <= binom_cdf(50, 0.9, 48)
    assert binom_cdf(50, 0.9, 40) <= 0.05 < binom_cdf(50, 0.9, 41)
    xs = sample(50)
    assert quantile_bounds(xs, 0.9) == (sorted(xs)[40], sorted(xs)[48])


def test_a_median_is_bounded_on_both_sides_by_the_same_rule() -> None:
    # n = 10, q = 0.5: P(<= 1) = 0.0107 <= 0.05 < P(<= 2) = 0.0547 -> 2nd smallest; P(<= 7) = 0.945 < 0.95 <=
    # P(<= 8) = 0.989 -> 9th smallest
    assert binom_cdf(10, 0.5, 1) <= 0.05 < binom_cdf(10, 0.5, 2)
    assert binom_cdf(10, 0.5, 7) < 0.95 <= binom_cdf(10, 0.5, 8)
    xs = sample(10)
    assert quantile_bounds(xs, 0.5) == (sorted(xs)[1], sorted(xs)[8])


@pytest.mark.parametrize("q", [0.5, 0.75, 0.9, 0.95, 0.99])
def test_the_least_requests_for_an_upper_bound_is_where_it_first_exists(q: float) -> None:
    n = min_requests_for_bound(q)
    assert q ** n <= 0.05 < q ** (n - 1)
    assert math.isfinite(quantile_bounds(sample(n), q)[1])
    assert quantile_bounds(sample(n - 1), q)[1] == math.inf
    assert quantile_bounds(sample(n), q)[1] == max(sample(n))   # at the edge, the largest value is the bound


def test_seventeen_requests_all_below_the_threshold_cannot_pass_a_p90_condition() -> None:
    slo = parse_slo("ttft_p90<=0.5")
    few = [0.2 + 0.01 * i for i in range(17)]   # p90 0.344, every request well below 0.5
    iv = interval_of(few, 0.9)
    assert iv.bounds is not None and iv.bounds[1] == math.inf
    assert iv.reason == "17 requests: a p90 needs 29 for a 95% upper bound"
    j = judge("completed", True, (), [Check(slo, 0.344, iv)], 4, 4.0)
    assert j.outcome == "inconclusive"
    assert "the threshold lies within its distribution-free 95 % bounds [0.32, unbounded]" in j.why[0]
    assert Check(slo, 0.344, iv).as_json()["interval_95"] == [0.32, None]
    enough = [0.2 + 0.0065 * i for i in range(50)]   # p90 0.487, bounds [0.46, 0.512]: the upper one above 0.5
    assert interval_of(enough, 0.9).bounds == pytest.approx((0.46, 0.512))
    assert judge("completed", True, (), [Check(slo, 0.487, interval_of(enough, 0.9))], 4, 4.0).outcome == "inconclusive"
    low = [0.2 + 0.001 * i for i in range(50)]     # upper bound 0.248: below it
    assert judge("completed", True, (), [Check(slo, 0.244, interval_of(low, 0.9))], 4, 4.0).outcome == "pass"


def test_a_lower_bound_above_the_threshold_fails_a_point_whose_upper_bound_is_unbounded() -> None:
    slo = parse_slo("ttft_p90<=0.5")
    slow = [2.0 + 0.1 * i for i in range(17)]
    j = judge("completed", True, (), [Check(slo, 3.44, interval_of(slow, 0.9))], 4, 4.0)
    assert (j.outcome, j.why) == ("fail", ("ttft_p90=3.44 breaches ttft_p90<=0.5",))


def test_docs_state_the_least_requests_a_p90_needs() -> None:
    text = (ROOT / "docs" / "search.md").read_text()
    stated = re.search(r"a p90 needs\s+(\d+)\s+requests", text)
    assert stated is not None and int(stated.group(1)) == min_requests_for_bound(0.9)
    assert "bootstrap" not in text
