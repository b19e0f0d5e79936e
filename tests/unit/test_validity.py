"""Every validity reason code, each triggered on its own."""

from harness.point.record.validity import verdict
from harness.recipe.thresholds import Thresholds


def good(**over):
    r = {"conc": 4, "achieved_concurrency": {"sessions": 3.0, "requests": 1.0}, "context_overflow_count": 0,
         "request_accounting": {"successful": 100, "errors": 0, "cancelled_at_cutoff": 0},
         "request_metrics": {"throughput": {"duration_seconds": 60.0}},
         "speculative_acceptance": None, "power_valid": False, "power_invalid_reasons": ["nvml_unavailable"]}
    r.update(over)
    return r


def codes(result, duration=60.0, **th):
    return [x["code"] for x in verdict(result, duration, Thresholds(**th))["reasons"]]


def test_valid_result_has_no_reasons_and_records_thresholds():
    v = verdict(good(), 60.0, Thresholds())
    assert v["valid"] and v["reasons"] == [] and v["thresholds"]["max_error_ratio"] == 0.10


def test_too_few_completed():
    assert codes(good(request_accounting={"successful": 3, "errors": 0, "cancelled_at_cutoff": 0})) == [
        "too_few_completed"]


def test_window_too_short():
    assert codes(good(request_metrics={"throughput": {"duration_seconds": 20.0}})) == ["window_too_short"]


def test_error_ratio_is_inferencex_gate_failed_over_completed():
    """InferenceX's validator: error_request_count / completed requests <= 0.10."""
    acc = {"successful": 90, "errors": 10, "cancelled_at_cutoff": 0}
    assert codes(good(request_accounting=acc)) == ["error_ratio"]     # 11.1 % of completed
    acc = {"successful": 100, "errors": 10, "cancelled_at_cutoff": 0}
    assert codes(good(request_accounting=acc)) == []                  # exactly 0.10 passes
    acc = {"successful": 0, "errors": 3, "cancelled_at_cutoff": 0}
    assert "error_ratio" in codes(good(request_accounting=acc))


def test_inferencex_requires_sglang_server_metrics():
    assert codes(good(server_metrics_sglang=False)) == ["server_metrics_missing"]
    assert codes(good(server_metrics_sglang=True)) == []
    assert codes(good(server_metrics_sglang=None)) == []   # no export at all: the row says so itself


def test_the_clients_runtime_invalidity_is_named_and_a_smoke_override_is_not():
    submission = {"scenario": "agentx", "submission_valid": False,
                  "submission_invalid_reasons": ["unsafe_override", "insufficient_profile_metric_coverage",
                                                 "context_overflow_rate_exceeded", "run_cancelled"]}
    assert codes(good(aiperf_submission=submission)) == ["latency_coverage", "context_overflow_rate",
                                                          "run_cancelled"]
    smoke = {"scenario": "agentx", "submission_valid": False, "submission_invalid_reasons": ["unsafe_override"]}
    assert codes(good(aiperf_submission=smoke)) == []


def test_cancelled_ratio_and_unknown():
    assert codes(good(request_accounting={"successful": 70, "errors": 0, "cancelled_at_cutoff": 30})) == [
        "cancelled_ratio"]
    assert codes(good(request_accounting={"successful": 70, "errors": 0, "cancelled_at_cutoff": None})) == [
        "cancelled_unknown"]


def test_concurrency_below_target():
    assert codes(good(achieved_concurrency={"sessions": 1.5, "requests": 1.0})) == ["concurrency_below_target"]


def test_context_overflow():
    assert codes(good(context_overflow_count=2)) == ["context_overflow"]


def test_accept_length_off_target_and_unmeasured():
    assert codes(good(speculative_acceptance={"target": 4.05, "achieved": 4.10})) == []
    assert codes(good(speculative_acceptance={"target": 4.05, "achieved": 3.90})) == ["accept_length_off_target"]
    assert codes(good(speculative_acceptance={"target": 4.05, "achieved": None, "reason": "no metrics"})) == [
        "accept_length_unmeasured"]


def test_power_invalid_only_in_strict_mode():
    assert codes(good()) == []
    assert codes(good(), require_power=True) == ["power_invalid"]


def test_accept_length_is_compared_with_its_expectation_for_the_output_lengths():
    # at 50-token outputs a server hitting AL 4.05 exactly measures 3.907 (the last step before max_tokens)
    spec = {"target": 4.05, "expected": 3.9074, "achieved": 3.91}
    assert codes(good(speculative_acceptance=spec)) == []
    assert codes(good(speculative_acceptance={k: v for k, v in spec.items() if k != "expected"})) == [
        "accept_length_off_target"]  # against the golden value alone it would be flagged
    v = verdict(good(speculative_acceptance={**spec, "achieved": 3.6}), 60.0, Thresholds())
    assert "vs 3.907 expected for the observed output lengths at the golden 4.05" in v["reasons"][0]["message"]
