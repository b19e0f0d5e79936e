"""The synthetic generator: deterministic, shaped like agentic coding, accepted by AIPerf's schema."""

import itertools
import math
from pathlib import Path

import pytest

from harness.traces import corpus_stats, load_corpus
from harness.traces.files import trace_text
from harness.traces.schema import walk_calls, walk_subagents
from harness.traces.synth import SynthConfig, synth_corpus, synth_trace

QUICKSTART = Path(__file__).parents[2] / "recipes" / "traces" / "quickstart"


@pytest.fixture(scope="module")
def corpus():
    return synth_corpus(SynthConfig(sessions=24, seed=0))


def test_deterministic_per_seed_and_prefix_stable() -> None:
    a = SynthConfig(sessions=3, seed=7)
    assert [trace_text(t) for t in synth_corpus(a).traces] == [trace_text(t) for t in synth_corpus(a).traces]
    assert trace_text(synth_trace(SynthConfig(sessions=50, seed=7), 2)) == trace_text(synth_trace(a, 2))
    assert trace_text(synth_trace(SynthConfig(seed=8), 2)) != trace_text(synth_trace(a, 2))


def test_shipped_demo_corpus_is_the_generator_output(corpus) -> None:
    shipped = load_corpus(QUICKSTART)
    assert [trace_text(t) for t in shipped.traces] == [trace_text(t) for t in corpus.traces]


def test_hash_blocks_cover_each_prompt_and_context_grows(corpus) -> None:
    for trace in corpus.traces:
        bs = trace.block_size
        root = [loc.request for loc in walk_calls(trace) if loc.depth == 0]
        for loc in walk_calls(trace):
            r = loc.request
            assert (len(r.hash_ids) - 1) * bs < r.input_tokens <= len(r.hash_ids) * bs
            assert r.input_tokens + r.output_tokens <= 12288
            assert 50 <= r.output_tokens <= 400
        for prev, cur in itertools.pairwise(root):
            full = prev.input_tokens // bs
            assert cur.hash_ids[:full] == prev.hash_ids[:full]  # every full block is reused
            assert cur.input_tokens > prev.input_tokens + prev.output_tokens
            assert cur.t > prev.t + prev.api_time
        assert root[-1].stop == "end_turn"
        assert 1160 <= root[0].input_tokens <= 1900  # system + tools + first prompt ranges


def test_turn_mix_and_subagents(corpus) -> None:
    calls = [loc for t in corpus.traces for loc in walk_calls(t)]
    tool_use = sum(1 for loc in calls if loc.request.stop == "tool_use")
    assert tool_use / len(calls) > 0.6
    subagents = [(t, sa) for t in corpus.traces for _, sa in walk_subagents(t)]
    assert 10 <= len(subagents) <= 60
    for trace, sa in subagents:
        root_ids = {h for loc in walk_calls(trace) if loc.depth == 0 for h in loc.request.hash_ids}
        inner = sa.requests
        assert not root_ids & set(inner[0].hash_ids)  # its own prefix
        assert inner[-1].stop == "end_turn" and all(r.model == "synth-sub" for r in inner)
        assert sa.duration_ms == round((inner[-1].t + inner[-1].api_time - sa.t) * 1000)


def test_stats_of_demo(corpus) -> None:
    s = corpus_stats(corpus)
    assert s["traces"] == 24 and s["max_subagent_depth"] == 1
    assert 0.8 < s["theoretical_prefix_cache_hit"]["rate"] < 0.95
    assert math.isclose(s["context_tokens"]["max"], 12197)


def test_aiperf_weka_schema_accepts_output(corpus) -> None:
    from aiperf.dataset.loader.weka_trace_models import WekaTrace

    for trace in corpus.traces:
        WekaTrace.model_validate(trace.to_json_dict())


def test_config_rejects_bad_ranges() -> None:
    with pytest.raises(ValueError, match="turns"):
        SynthConfig(turns=(5, 2))
    with pytest.raises(ValueError):
        SynthConfig(extra_field=1)  # type: ignore[call-arg]
