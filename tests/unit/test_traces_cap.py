"""Capping: requests above the cap go, their busy time is cut, later spacing and overlap survive."""

from harness.traces.cap import cap_corpus, cap_trace, merge_cuts, warp
from harness.traces.schema import Corpus, parse_trace, walk_calls


def _call(t: float, n_in: int, api: float, model: str = "main", stop: str = "tool_use") -> dict:
    return {"t": t, "type": "s", "model": model, "in": n_in, "out": 10, "hash_ids": list(range((n_in + 63) // 64)),
            "stop": stop, "api_time": api}


def _trace() -> dict:
    return {"id": "c", "models": ["main", "sub"], "block_size": 64, "hash_id_scope": "local", "requests": [
        _call(0.0, 100, 1.0),
        _call(2.0, 5000, 3.0),                      # dropped at cap 1000: cuts [2, 5]
        {"t": 6.0, "type": "subagent", "agent_id": "a1", "subagent_type": "Explore", "status": "completed",
         "duration_ms": 2500, "models": ["sub"], "requests": [_call(6.5, 200, 1.0, "sub"), _call(7.5, 300, 1.0, "sub")]},
        _call(7.0, 600, 1.0),                       # the parent runs while the subagent does
        _call(10.0, 700, 1.0, stop="end_turn"),
    ]}


def test_warp_and_merge() -> None:
    cuts = merge_cuts([(2.0, 5.0), (4.0, 6.0), (9.0, 9.0), (10.0, 11.0)])
    assert cuts == [(2.0, 6.0), (10.0, 11.0)]
    assert [warp(t, cuts) for t in (1.0, 2.0, 3.0, 6.0, 8.0, 10.5, 12.0)] == [1.0, 2.0, 2.0, 2.0, 4.0, 6.0, 7.0]


def test_cap_keeps_relative_timing_and_overlap() -> None:
    trace = parse_trace(_trace(), "c")
    capped, dropped, dropped_sa = cap_trace(trace, 1000)
    assert capped is not None and (dropped, dropped_sa) == (1, 0)
    times = [(loc.where, loc.request.t) for loc in walk_calls(capped)]
    assert times == [("requests[0]", 0.0), ("requests[1].requests[0]", 3.5), ("requests[1].requests[1]", 4.5),
                     ("requests[2]", 4.0), ("requests[3]", 7.0)]
    sa = capped.requests[1]
    assert sa.t == 3.0 and sa.duration_ms == 2500  # spawn moved by 3 s, same length, same overlap with parent


def test_cap_drops_emptied_subagents_and_traces() -> None:
    trace = parse_trace(_trace(), "c")
    capped, dropped, dropped_sa = cap_trace(trace, 250)
    assert capped is not None and dropped == 4 and dropped_sa == 0
    capped, dropped, dropped_sa = cap_trace(trace, 150)
    assert capped is not None and dropped == 5 and dropped_sa == 1
    assert [loc.where for loc in walk_calls(capped)] == ["requests[0]"]
    corpus, summary = cap_corpus(Corpus(traces=(trace,), source="x"), 50)
    assert len(corpus) == 0 and summary.dropped_traces == 1 and summary.total_requests == 6


def test_nothing_above_cap_is_identity() -> None:
    trace = parse_trace(_trace(), "c")
    assert cap_trace(trace, 10**6) == (trace, 0, 0)
