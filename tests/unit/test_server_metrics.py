"""Parsing SGLang's /metrics and the achieved accept length from counter deltas."""

import pytest

from harness.point.servers.server_metrics import achieved_accept_length, parse_counters

TEXT = """# HELP sglang:generation_tokens_total Number of generation tokens.
# TYPE sglang:generation_tokens_total counter
sglang:generation_tokens_total{model_name="m",is_streaming="true"} 900.0
sglang:generation_tokens_total{model_name="m",is_streaming="false"} 100.0
sglang:num_requests_total{model_name="m"} 10
sglang:spec_verify_calls_total{model_name="m"} 200
"""


def test_parse_sums_label_sets():
    c = parse_counters(TEXT)
    assert c["sglang:generation_tokens_total"] == 1000.0 and c["sglang:num_requests_total"] == 10


def test_accept_length_excludes_each_requests_prefill_token():
    before = {"sglang:generation_tokens_total": 100.0, "sglang:num_requests_total": 2.0,
              "sglang:spec_verify_calls_total": 20.0}
    al, why = achieved_accept_length(before, parse_counters(TEXT))
    assert why is None and al == pytest.approx((900 - 8) / 180)


def test_accept_length_reasons():
    assert achieved_accept_length(None, {})[1].startswith("server /metrics unavailable")
    assert "lacks" in achieved_accept_length({}, {"sglang:num_requests_total": 1})[1]
    same = parse_counters(TEXT)
    assert achieved_accept_length(same, same) == (None, "no speculative verify steps in the window")
