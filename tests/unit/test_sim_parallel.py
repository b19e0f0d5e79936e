"""Parallelism costs of the simulator's step times: collective formulas, layouts, PP stages, CUDA-graph limit."""

from __future__ import annotations

import argparse

import pytest

from harness.sim.batching.timing import TimingModel, load_profile
from harness.sim.batching.topology.parallel import (
    Layout,
    LinkSpec,
    all_to_all_seconds,
    comm_seconds,
    default_cuda_graph_max_bs,
    layout_from_args,
    pipelined_seconds,
    ring_allreduce_seconds,
)

SPEC = LinkSpec(link_bw=100e9, latency=1e-5, activation_bytes=2, hidden_size=1000, num_layers=10, moe_layers=8,
                experts_per_token=4, eager_launch_overhead=0.003)


def test_ring_allreduce_formula() -> None:
    assert ring_allreduce_seconds(1e9, 1, 100e9, 1e-5) == 0.0
    assert ring_allreduce_seconds(1e9, 8, 100e9, 1e-5) == pytest.approx(2 * 7 / 8 * 1e9 / 100e9 + 1e-5)
    assert ring_allreduce_seconds(1e9, 2, 100e9, 0.0) == pytest.approx(1e9 / 100e9)


def test_all_to_all_formula() -> None:
    assert all_to_all_seconds(1e9, 1, 100e9, 1e-5) == 0.0
    assert all_to_all_seconds(1e9, 4, 100e9, 1e-5) == pytest.approx(3 / 4 * 1e9 / 100e9 + 1e-5)


def test_tp_allreduce_twice_per_layer() -> None:
    dense = LinkSpec(**{**SPEC.__dict__, "moe_layers": 0})
    one = ring_allreduce_seconds(64 * 1000 * 2, 4, 100e9, 1e-5)
    assert comm_seconds(64, Layout(tp=4), dense) == pytest.approx(2 * 10 * one)
    assert comm_seconds(64, Layout(tp=1), dense) == 0.0


def test_ep_replaces_moe_allreduce_with_dispatch_and_combine() -> None:
    tokens = 64
    attn = ring_allreduce_seconds(tokens * 2000, 4, 100e9, 1e-5)
    a2a = all_to_all_seconds(tokens / 4 * 4 * 2000, 4, 100e9, 1e-5)
    expected = 10 * attn + 2 * attn + 8 * 2 * a2a
    assert comm_seconds(tokens, Layout(tp=4, ep=4), SPEC) == pytest.approx(expected)


def test_pipeline_bubble_and_handoffs() -> None:
    handoff = 100 * 2000 / 100e9 + 1e-5
    assert pipelined_seconds(0.04, 100, 1, Layout(), SPEC) == pytest.approx(0.04)
    # one micro-batch through 4 stages: its whole latency plus 3 handoffs
    assert pipelined_seconds(0.04, 100, 1, Layout(pp=4), SPEC) == pytest.approx(0.04 + 3 * handoff)
    # a full pipeline: 4 micro-batches each take one stage slot per stage
    assert pipelined_seconds(0.04, 100, 4, Layout(pp=4), SPEC) == pytest.approx(0.04 + 3 * handoff)


def test_pp_and_ep_change_step_time() -> None:
    p = load_profile("h200-tp8")
    base = TimingModel(p, 8, Layout(tp=8)).decode(64, 64 * 8000, 1, False)
    ep = TimingModel(p, 8, Layout(tp=8, ep=8)).decode(64, 64 * 8000, 1, False)
    pp = TimingModel(p, 8, Layout(tp=8, ep=8, pp=2)).decode(64, 64 * 8000, 1, False)
    assert len({round(base, 9), round(ep, 9), round(pp, 9)}) == 3
    # a single prefill chunk gains nothing from stages and pays the handoff
    one = TimingModel(p, 8, Layout(tp=8)).prefill([(0, 4096)])
    staged = TimingModel(p, 8, Layout(tp=8, pp=2)).prefill([(0, 4096)])
    assert staged > one


def test_cuda_graph_limit_adds_eager_overhead() -> None:
    p = load_profile("h200-tp8")
    t = TimingModel(p, 8, Layout(tp=8, cuda_graph_max_bs=32))
    below = t.decode(32, 32 * 1000, 1, False)
    above = t.decode(33, 33 * 1000, 1, False)
    smooth = TimingModel(p, 8, Layout(tp=8)).decode(33, 33 * 1000, 1, False)
    assert above == pytest.approx(smooth + p.eager_launch_overhead)
    assert below < above - p.eager_launch_overhead * 0.9


def test_default_cuda_graph_max_bs_follows_sglang() -> None:
    assert default_cuda_graph_max_bs(141e9, 8, 1024) == 512     # H200, TP8
    assert default_cuda_graph_max_bs(141e9, 2, 1024) == 256
    assert default_cuda_graph_max_bs(288e9, 4, 1024) == 512     # GB300
    assert default_cuda_graph_max_bs(24e9, 1, 1024) == 48
    assert default_cuda_graph_max_bs(141e9, 8, 64) == 64        # capped at --max-running-requests


def test_layout_from_flags() -> None:
    args = argparse.Namespace(tp_size=8, ep_size=8, pp_size=2, dp_size=4, enable_dp_attention=True,
                              disable_cuda_graph=False, disable_decode_cuda_graph=False,
                              cuda_graph_max_bs_decode=None)
    lay = layout_from_args(args, 141e9, 256)
    assert (lay.tp, lay.ep, lay.pp, lay.attn_dp, lay.attn_tp, lay.cuda_graph_max_bs) == (8, 8, 2, 4, 2, 256)
    assert layout_from_args({"tp_size": 1, "disable_cuda_graph": True}, 141e9, 256).cuda_graph_max_bs == 0
    assert layout_from_args({"tp_size": 1, "cuda_graph_max_bs_decode": 16}, 141e9, 256).cuda_graph_max_bs == 16


def _resolve(*argv: str):
    from harness.sim.frontend.app import resolve
    from harness.sim.frontend.cli import build_parser

    return resolve(build_parser().parse_args(list(argv)), {})


def test_server_resolves_layout_and_reports_sglang_graph_default() -> None:
    res = _resolve("--sim-profile", "h200-tp8", "--tp-size", "8", "--ep-size", "8", "--pp-size", "2",
                   "--max-running-requests", "1024")
    assert (res.timing.layout.tp, res.timing.layout.ep, res.timing.layout.pp) == (8, 8, 2)
    assert res.timing.layout.cuda_graph_max_bs == 512
    assert res.server_args["cuda_graph_max_bs_decode"] == 512
    small = _resolve("--sim-profile", "demo", "--max-running-requests", "32")
    assert small.server_args["cuda_graph_max_bs_decode"] == 32
    eager = _resolve("--sim-profile", "demo", "--disable-cuda-graph")
    assert eager.timing.layout.cuda_graph_max_bs == 0


def test_server_noise_seed_from_flags() -> None:
    assert _resolve("--sim-seed", "5").noise_seed == 5
    assert _resolve("--random-seed", "9").noise_seed == 9
