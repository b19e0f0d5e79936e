"""A tested point's outcome (pass, fail, inconclusive for each reason its sample gives), the re-tests of an
inconclusive point within the search's budget, and the uncertain answer when the budget ends."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.search.driver import Budget, run_search
from harness.search.order import bracket
from harness.search.outcome import SearchSpec, answer_line, render_summary, search_json
from harness.search.slo import parse_slo
from harness.search.spread import Interval
from harness.search.tested import Check, TestedPoint, judge

SLO = parse_slo("ttft_p90<=0.5")


def check(value: float | None, bounds: tuple[float, float] | None = None) -> Check:
    return Check(SLO, value, Interval(bounds, None if bounds else "no samples"))


def point(conc: int, ttft: float, invalid: tuple[str, ...] = (), achieved: float | None = None,
          bounds: tuple[float, float] | None = None, state: str = "completed") -> TestedPoint:
    return TestedPoint(conc, Path(f"/runs/conc{conc}"), state, not invalid, invalid, (check(ttft, bounds),),
                        None, "fake", achieved if achieved is not None else float(conc), 40, 20.0)


def test_a_valid_point_at_its_concurrency_with_every_expression_holding_passes() -> None:
    j = judge("completed", True, (), [check(0.3, (0.25, 0.35))], 8, 7.9)
    assert (j.outcome, j.why) == ("pass", ("ttft_p90=0.3 meets ttft_p90<=0.5",))


def test_a_valid_point_breaching_the_slo_clear_of_its_interval_fails() -> None:
    j = judge("completed", True, (), [check(0.9, (0.8, 1.0))], 8, 8.0)
    assert (j.outcome, j.why) == ("fail", ("ttft_p90=0.9 breaches ttft_p90<=0.5",))


def test_too_few_requests_is_inconclusive_whatever_the_metric_says() -> None:
    for ttft in (0.2, 0.9):
        j = judge("completed", False, ("too_few_completed",), [check(ttft)], 8, 7.0)
        assert (j.outcome, j.why) == ("inconclusive", ("invalid for its sample: too_few_completed",))


def test_achieved_concurrency_well_below_its_target_is_inconclusive() -> None:
    low = judge("completed", True, (), [check(0.22)], 8, 2.9)
    assert low.outcome == "inconclusive" and low.why == ("achieved concurrency 2.9 of 8 (below 70%)",)
    assert judge("completed", True, (), [check(0.22)], 8, 2.9, min_achieved_ratio=0.3).outcome == "pass"
    assert judge("completed", True, (), [check(0.22)], 8, None).outcome == "pass"   # not recorded: not judged
    record = judge("completed", False, ("too_few_completed", "concurrency_below_target"), [check(0.22)], 8, 2.9)
    assert record.why == ("invalid for its sample: too_few_completed, concurrency_below_target",)


def test_a_clear_breach_at_a_load_below_the_target_fails() -> None:
    low = judge("completed", True, (), [check(0.9, (0.8, 1.0))], 8, 2.9)
    assert low.outcome == "fail" and low.why == (
        "ttft_p90=0.9 breaches ttft_p90<=0.5 (the threshold outside its distribution-free 95 % bounds [0.8, 1])",
        "at a load below its target (achieved concurrency 2.9 of 8): the full load breaches it too")
    record = judge("completed", False, ("concurrency_below_target",), [check(0.9, (0.8, 1.0))], 8, 2.9)
    assert record.outcome == "fail"
    # no interval (too few samples), a threshold inside it, or another sample reason: still cannot tell
    assert judge("completed", True, (), [check(0.9)], 8, 2.9).outcome == "inconclusive"
    assert judge("completed", True, (), [check(0.52, (0.45, 0.6))], 8, 2.9).outcome == "inconclusive"
    both = ("too_few_completed", "concurrency_below_target")
    assert judge("completed", False, both, [check(0.9, (0.8, 1.0))], 8, 2.9).outcome == "inconclusive"


def test_a_threshold_inside_the_interval_of_the_percentile_is_inconclusive() -> None:
    j = judge("completed", True, (), [check(0.48, (0.41, 0.57))], 8, 8.0)
    assert j.outcome == "inconclusive" and (
        "the threshold lies within its distribution-free 95 % bounds [0.41, 0.57]" in j.why[0])


def test_a_failed_point_or_an_invalidity_other_than_the_sample_fails() -> None:
    assert judge("failed", False, ("ready_timeout",), [check(None)], 8, None).why == (
        "the point failed: ready_timeout",)
    j = judge("completed", False, ("too_few_completed", "error_ratio"), [check(0.1)], 8, 8.0)
    assert (j.outcome, j.why) == ("fail", ("invalid: error_ratio",))
    assert judge("completed", True, (), [check(None)], 8, 8.0).why == ("not measured: ttft_p90",)


Tester = Callable[[int, int], TestedPoint]


def curve(capacity: int, unsure: dict[int, list[bool]]) -> tuple[list[tuple[int, int]], Tester]:
    """A fake curve: ttft 0.2 s up to `capacity`, 0.9 s above; `unsure[c][attempt-1]`: that test of c is
    inconclusive (achieved concurrency far below target)."""
    calls: list[tuple[int, int]] = []

    def test(conc: int, attempt: int) -> TestedPoint:
        calls.append((conc, attempt))
        low = unsure.get(conc, [False] * 3)[attempt - 1]
        return point(conc, 0.2 if conc <= capacity else 0.9, achieved=conc * (0.3 if low else 1.0))

    return calls, test


def test_an_inconclusive_point_inside_the_bracket_is_retested_and_then_counts_as_its_latest_test() -> None:
    calls, test = curve(8, {8: [True, False, False]})
    run = run_search(1, 32, test)
    assert calls == [(1, 1), (2, 1), (4, 1), (8, 1), (16, 1), (8, 2), (12, 1), (10, 1), (9, 1)]
    assert (run.state.boundary, run.state.first_fail, run.state.settled, run.budget_reason) == (8, 9, True, None)


def test_an_inconclusive_point_below_the_boundary_is_not_retested() -> None:
    calls, test = curve(8, {1: [True, True, True], 2: [True, True, True]})
    run = run_search(1, 32, test)
    assert [c for c, a in calls if a > 1] == [] and run.state.boundary == 8 and run.state.settled


def test_a_point_inconclusive_on_every_try_leaves_the_answer_uncertain_with_its_interval() -> None:
    calls, test = curve(8, {8: [True, True, True]})
    run = run_search(1, 32, test)
    assert [(c, a) for c, a in calls if c == 8] == [(8, 1), (8, 2), (8, 3)]
    assert (run.state.boundary, run.state.first_fail, run.state.low, run.state.high) == (7, 9, 7, 8)
    doc = search_json(SearchSpec("r", "k", None, (SLO,), 1, 32, 1, 1), run.tested, run.state, run.complete)
    assert doc["boundary_interval"] == [7, 8] and doc["uncertain"]["boundary"] is True
    assert doc["uncertain"]["inconclusive"] == [8]
    assert doc["uncertain"]["reason"] == ("the boundary lies between c7 and c8: c8 inconclusive (achieved "
                                          "concurrency 2.4 of 8 (below 70%))")
    eights = [p for p in doc["points"] if p["conc"] == 8]
    assert [(p["attempt"], p["counted"]) for p in eights] == [(1, False), (2, False), (3, True)]
    assert answer_line(doc).startswith("answer: UNCERTAIN: the boundary lies between c7 and c8")
    assert "replaced by a later try" in render_summary(doc)


def test_the_budget_ends_the_search_and_the_answer_says_where_the_boundary_lies() -> None:
    calls, test = curve(8, {8: [True, True, True]})
    run = run_search(1, 32, test, budget=Budget(max_points=6))
    assert calls == [(1, 1), (2, 1), (4, 1), (8, 1), (16, 1), (8, 2)]
    assert (run.complete, run.budget_reason, run.state.low, run.state.high) == (True, "--max-points 6 spent", 4, 15)
    doc = search_json(SearchSpec("r", "k", None, (SLO,), 1, 32, 1, 1), run.tested, run.state, run.complete,
                      run.budget_reason)
    assert doc["uncertain"]["reason"].startswith("the boundary lies between c4 and c15: c8 inconclusive")
    assert doc["uncertain"]["reason"].endswith("; --max-points 6 spent")
    assert "c4 meets the SLO: 4 agents/GPU, 4 agents/node at least" in answer_line(doc)


def test_time_ends_the_search_as_the_point_budget_does() -> None:
    calls, test = curve(8, {})
    run = run_search(1, 32, test, budget=Budget(out_of_time=lambda: "--max-hours 1 spent"))
    assert calls == [] and run.budget_reason == "--max-hours 1 spent" and (run.state.low, run.state.high) == (None, 32)


def test_no_pass_below_an_inconclusive_min_conc_is_uncertain_between_none_and_it() -> None:
    state = bracket({1: "inconclusive", 2: "fail"}, 1, 32)
    doc = search_json(SearchSpec("r", "k", None, (SLO,), 1, 32, 1, 1),
                      [point(1, 0.2, ("too_few_completed",)), point(2, 0.9)], state, True)
    assert doc["uncertain"]["reason"] == ("the boundary lies between no concurrency and c1: c1 inconclusive "
                                          "(invalid for its sample: too_few_completed)")
    assert doc["boundary_conc"] is None and doc["boundary_interval"] == [None, 1]


def test_the_plot_tells_a_breach_from_a_failed_point_an_inconclusive_one_and_a_replaced_try(tmp_path: Path) -> None:
    from harness.search.plot import kind, plot_search

    calls, test = curve(8, {8: [True, False, False]})
    run = run_search(1, 32, test)
    doc = search_json(SearchSpec("r", "k", None, (SLO,), 1, 32, 1, 1), run.tested, run.state, run.complete)
    kinds = {(p["conc"], p["attempt"]): kind(p) for p in doc["points"]}
    assert (kinds[(8, 1)], kinds[(8, 2)], kinds[(16, 1)], kinds[(4, 1)]) == ("superseded", "pass", "breach", "pass")
    failed = {"counted": True, "outcome": "fail", "state": "failed", "valid": False}
    assert kind(failed) == "invalid" and kind({**failed, "outcome": "inconclusive"}) == "inconclusive"
    assert plot_search(doc, tmp_path / "search.png").read_bytes()[:4] == b"\x89PNG"
