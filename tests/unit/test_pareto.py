"""Pareto frontier: properties over random inputs (hypothesis) and exact small cases."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.report.analysis.pareto import dominates, pareto_frontier

directions = st.sampled_from(["min", "max"])
# Small integer grids make ties and duplicates frequent; None and inf/nan exercise exclusion.
coord = st.one_of(
    st.integers(min_value=0, max_value=6).map(float),
    st.sampled_from([None, math.inf, math.nan]),
)
point_lists = st.lists(st.tuples(coord, coord), max_size=25)


def _rows(pts):
    return [(i, x, y) for i, (x, y) in enumerate(pts)]


@settings(max_examples=300, deadline=None)
@given(point_lists, directions, directions)
def test_partition_and_dominance_properties(pts, x_dir, y_dir):
    result = pareto_frontier(_rows(pts), x_dir, y_dir)
    finite = {i for i, (x, y) in enumerate(pts) if x is not None and y is not None
              and math.isfinite(x) and math.isfinite(y)}
    # Every point lands in exactly one list; excluded means a missing or non-finite coordinate.
    assert sorted(result.frontier + result.dominated + result.excluded) == list(range(len(pts)))
    assert set(result.excluded) == set(range(len(pts))) - finite
    coords = {i: pts[i] for i in finite}
    # Every frontier point is dominated by no measured point.
    for f in result.frontier:
        assert not any(dominates(coords[o], coords[f], x_dir, y_dir) for o in finite)
    # Every other measured point is dominated by some frontier point.
    for d in result.dominated:
        assert any(dominates(coords[f], coords[d], x_dir, y_dir) for f in result.frontier)
    # Lists keep input order; coverage is frontier / measured.
    assert result.frontier == sorted(result.frontier)
    assert result.dominated == sorted(result.dominated)
    assert result.coverage == f"{len(result.frontier)}/{len(finite)}"


@settings(max_examples=200, deadline=None)
@given(point_lists, directions, directions)
def test_input_order_does_not_change_membership(pts, x_dir, y_dir):
    forward = pareto_frontier(_rows(pts), x_dir, y_dir)
    backward = pareto_frontier(list(reversed(_rows(pts))), x_dir, y_dir)
    assert set(forward.frontier) == set(backward.frontier)
    assert set(forward.dominated) == set(backward.dominated)


@settings(max_examples=200, deadline=None)
@given(point_lists)
def test_flipping_an_axis_direction_equals_negating_it(pts):
    a = pareto_frontier(_rows(pts), "min", "max")
    negated = [(i, None if x is None else -x, y) for i, (x, y) in enumerate(pts)]
    b = pareto_frontier(negated, "max", "max")
    assert a.frontier == b.frontier and a.dominated == b.dominated


def test_latency_vs_throughput_upper_left_envelope():
    # x = E2EL p90 (lower better), y = tok/s/GPU (higher better)
    rows = [(1, 2.0, 100.0), (2, 2.5, 180.0), (4, 3.0, 300.0), (8, 4.5, 280.0), (16, 6.0, 450.0)]
    r = pareto_frontier(rows, "min", "max")
    assert (r.frontier, r.dominated, r.excluded, r.coverage) == ([1, 2, 4, 16], [8], [], "4/5")


def test_ties():
    rows = [
        ("a", 1.0, 5.0),
        ("b", 1.0, 5.0),  # duplicate of a frontier point: also on the frontier
        ("c", 1.0, 4.0),  # same x, worse y: dominated
        ("d", 2.0, 5.0),  # same y, worse x: dominated
        ("e", 3.0, 6.0),
    ]
    r = pareto_frontier(rows, "min", "max")
    assert r.frontier == ["a", "b", "e"]
    assert r.dominated == ["c", "d"]


def test_both_maximized_and_excluded():
    rows = [(1, 80.0, 100.0), (2, 60.0, 180.0), (4, None, 300.0), (8, math.nan, 1.0), (16, 30.0, 150.0)]
    r = pareto_frontier(rows, "max", "max")
    assert (r.frontier, r.dominated, r.excluded, r.coverage) == ([1, 2], [16], [4, 8], "2/3")


def test_empty_and_bad_direction():
    assert pareto_frontier([], "min", "max").coverage == "0/0"
    with pytest.raises(ValueError):
        pareto_frontier([(1, 1.0, 1.0)], "lower", "max")  # type: ignore[arg-type]
