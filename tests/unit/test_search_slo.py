"""SLO expressions: parsing, refusal with a suggestion, and judging a value."""

from __future__ import annotations

import pytest

from harness.errors import UserError
from harness.search.slo import Slo, parse_slo, parse_slos


def test_an_expression_is_metric_op_value() -> None:
    assert parse_slo("intvty_p90>=20") == Slo("intvty", "p90", ">=", 20.0)
    assert parse_slo(" ttft_p90 <= 0.5 ") == Slo("ttft", "p90", "<=", 0.5)
    assert parse_slo("e2e_norm_intvty_mean>1e1") == Slo("e2e_norm_intvty", "mean", ">", 10.0)
    assert parse_slo("e2el_p99<60").text == "e2el_p99<60"


@pytest.mark.parametrize(("op", "measured", "holds"), [
    ("<=", 0.5, True), ("<=", 0.51, False), ("<", 0.5, False), (">=", 0.5, True), (">", 0.5, False),
    (">", 0.6, True),
])
def test_holds_compares_the_measured_value_with_the_threshold(op: str, measured: float, holds: bool) -> None:
    assert parse_slo(f"ttft_p90{op}0.5").holds(measured) is holds


def test_an_unknown_metric_is_refused_with_the_closest_one() -> None:
    with pytest.raises(UserError, match=r"unknown metric 'ttft_p9' \(did you mean .*'ttft_p90'"):
        parse_slo("ttft_p9<=1")
    with pytest.raises(UserError, match="unknown metric 'throughput'"):
        parse_slo("throughput>=1")


@pytest.mark.parametrize("text", ["ttft_p90", "ttft_p90==1", "ttft_p90<=", "<=1", "ttft_p90=<1"])
def test_a_malformed_expression_is_refused(text: str) -> None:
    with pytest.raises(UserError, match="expected METRIC OP VALUE"):
        parse_slo(text)


@pytest.mark.parametrize("value", ["nan", "inf", "fast"])
def test_a_value_that_is_not_a_finite_number_is_refused(value: str) -> None:
    with pytest.raises(UserError, match="not a finite number"):
        parse_slo(f"ttft_p90<={value}")


def test_one_bound_per_metric() -> None:
    assert [s.name for s in parse_slos(["ttft_p90<=1", "intvty_p90>=20"])] == ["ttft_p90", "intvty_p90"]
    with pytest.raises(UserError, match="ttft_p90 given more than once"):
        parse_slos(["ttft_p90<=1", "ttft_p90<=2"])
