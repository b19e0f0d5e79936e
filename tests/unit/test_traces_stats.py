"""Statistics of the hand-built fixture, computed by hand, and the prefix-cache definition."""

from pathlib import Path

import pytest

from harness.traces import corpus_stats, load_corpus
from harness.traces.stats import distribution, percentile

HAND = Path(__file__).parents[1] / "fixtures" / "traces" / "hand"
QUICKSTART = Path(__file__).parents[2] / "recipes" / "traces" / "quickstart"


@pytest.fixture(scope="module")
def stats() -> dict:
    return corpus_stats(load_corpus(HAND))


def test_counts(stats: dict) -> None:
    assert stats["traces"] == 2
    assert stats["requests"] == 6
    assert stats["root_requests"] == 5
    assert stats["subagent_requests"] == 1
    assert stats["subagents"] == 1
    assert stats["max_subagent_depth"] == 1


def test_per_trace_distributions(stats: dict) -> None:
    # requests per trace: hand-a 4 (3 root + 1 subagent call), hand-b 2
    assert stats["requests_per_trace"] == {
        "count": 2, "mean": 3.0, "min": 2, "p50": 3.0, "p75": 3.5, "p90": 3.8, "p95": 3.9,
        "p99": pytest.approx(3.98, abs=1e-12), "max": 4,
    }
    assert stats["subagents_per_trace"] == {
        "count": 2, "mean": 0.5, "min": 0, "p50": 0.5, "p75": 0.75, "p90": 0.9, "p95": 0.95,
        "p99": pytest.approx(0.99, abs=1e-12), "max": 1,
    }


def test_isl_osl_think(stats: dict) -> None:
    # ISL sorted: 64 70 100 150 200 300; rank = p/100 * 5
    assert stats["isl_tokens"] == {
        "count": 6, "mean": 884 / 6, "min": 64, "p50": 125.0, "p75": 187.5, "p90": 250.0, "p95": 275.0,
        "p99": pytest.approx(295.0, abs=1e-9), "max": 300,
    }
    # OSL sorted: 5 10 20 30 50 100
    assert stats["osl_tokens"] == {
        "count": 6, "mean": 215 / 6, "min": 5, "p50": 25.0, "p75": 45.0, "p90": 75.0, "p95": 87.5,
        "p99": pytest.approx(97.5, abs=1e-9), "max": 100,
    }
    # think times sorted: 0 0 0 0.5 1 8
    assert stats["think_time_s"] == {
        "count": 6, "mean": 9.5 / 6, "min": 0.0, "p50": 0.25, "p75": 0.875, "p90": 4.5, "p95": 6.25,
        "p99": pytest.approx(7.65, abs=1e-9), "max": 8.0,
    }
    assert stats["context_tokens"]["max"] == 350 and stats["context_tokens"]["min"] == 75


def test_theoretical_prefix_cache_hit(stats: dict) -> None:
    # hand-a in time order: [0,1] 0/2; [0,2,3] 1/3; subagent [10,11] 0/2; [0,2,4,5] 2/4  -> 3/11
    # hand-b: [0] 0/1; [0,1,2,3,4] 1/5                                                   -> 1/6
    assert stats["theoretical_prefix_cache_hit"] == {"hit_blocks": 4, "total_blocks": 17, "rate": 4 / 17}


def test_percentile_edges() -> None:
    assert percentile([7.0], 99) == 7.0
    assert percentile([1.0, 2.0], 50) == 1.5
    assert distribution([]) == {"count": 0}


def test_prefix_cache_matches_aiperf_definition() -> None:
    """Our per-trace hit accounting agrees with AIPerf's shared seen-set pre-pass on the demo corpus."""
    from aiperf.dataset.loader.weka_metric_prepass import MetricRecord, compute_shared_prefix_cache_metrics

    from harness.traces.schema import walk_calls
    from harness.traces.stats import prefix_cache_blocks

    for trace in load_corpus(QUICKSTART).traces:
        records = [MetricRecord(sort_key=(loc.request.t, i, 0, 0), session_id=trace.id, k=i,
                                hash_ids=list(loc.request.hash_ids)) for i, loc in enumerate(walk_calls(trace))]
        theirs = compute_shared_prefix_cache_metrics(records).values()
        assert prefix_cache_blocks(trace) == (sum(h for h, _ in theirs), sum(t for _, t in theirs))
