"""Parallelism costs of one simulated step: TP all-reduce, EP all-to-all, PP stages, CUDA-graph limit.

All times are seconds. The collective formulas are pure functions of bytes, group size, the per-GPU link
bandwidth (`nvlink_bw`, bytes/s per direction) and a fixed per-collective latency (`collective_latency_s`):

- **Ring all-reduce** over n GPUs of B bytes: `2 (n - 1) / n * B / link_bw + latency` (0 when n = 1).
- **All-to-all** over n GPUs, each sending B bytes in total: `(n - 1) / n * B / link_bw + latency` (the share that
  stays on the GPU costs nothing).

What a forward over T tokens pays, for the whole model (`num_layers` layers, `moe_layers` of them MoE):

- Tensor parallel (attention TP size `tp / attn_dp`): an all-reduce after attention in every layer, and after the
  MLP of every dense layer (and of every MoE layer when `ep = 1`); bytes = tokens x `hidden_size` x
  `activation_bytes`. With DP attention each attention group reduces only its `T / attn_dp` tokens.
- Expert parallel (`ep > 1`): per MoE layer a dispatch and a combine all-to-all; each GPU sends its `T / ep`
  tokens' hidden states to their `experts_per_token` experts (it replaces the MLP all-reduce).
- Pipeline parallel (`pp > 1`): the layers are split into `pp` stages; the batch is cut into
  `m = min(pp, requests)` micro-batches that flow through the stages. One step (every request advances once)
  takes `max(m, pp)` stage slots of one micro-batch's stage time (a micro-batch's whole-model time / pp) plus
  `pp - 1` stage handoffs (a point-to-point send of the micro-batch's activations). With m < pp the pipeline has
  bubbles; a single prefill chunk pays the full latency of all stages.
- CUDA graphs: a decode batch above `--cuda-graph-max-bs-decode` (or any decode with `--disable-cuda-graph` /
  `--disable-decode-cuda-graph`) runs eagerly and pays `eager_launch_overhead` per step. The default limit
  follows SGLang (`memory_hook._handle_gpu_memory_settings`): by GPU memory and TP size, capped at
  `--max-running-requests`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any


def ring_allreduce_seconds(nbytes: float, n: int, link_bw: float, latency: float) -> float:
    """Time of one ring all-reduce of `nbytes` over `n` GPUs (0 for one GPU)."""
    if n <= 1 or nbytes <= 0:
        return 0.0
    return 2.0 * (n - 1) / n * nbytes / link_bw + latency


def all_to_all_seconds(nbytes_per_gpu: float, n: int, link_bw: float, latency: float) -> float:
    """Time of one all-to-all over `n` GPUs where each GPU sends `nbytes_per_gpu` in total."""
    if n <= 1 or nbytes_per_gpu <= 0:
        return 0.0
    return (n - 1) / n * nbytes_per_gpu / link_bw + latency


def p2p_seconds(nbytes: float, link_bw: float, latency: float) -> float:
    """One point-to-point send (a pipeline stage handoff)."""
    if nbytes <= 0:
        return 0.0
    return nbytes / link_bw + latency


def default_cuda_graph_max_bs(hbm_bytes: float, tp: int, max_running: int | None) -> int:
    """SGLang's default decode CUDA-graph batch limit for a GPU of `hbm_bytes` (0.5.23 memory_hook), capped at
    the running-request limit."""
    mib = hbm_bytes / (1 << 20)
    if mib < 20 * 1024:
        bs = 8
    elif mib < 35 * 1024:
        bs = 48 if tp < 4 else 160
    elif mib < 60 * 1024:
        bs = 32 if tp < 4 else 160
    elif mib < 160 * 1024:
        bs = 256 if tp < 4 else 512
    else:
        bs = 512
    if max_running is not None and max_running > 0:
        bs = min(bs, max_running)
    return bs


@dataclass(frozen=True)
class Layout:
    """How one server splits the model: tensor, expert, pipeline and attention-data parallel sizes, and the
    largest decode batch that runs as a CUDA graph (0: graphs off)."""

    tp: int = 1
    ep: int = 1
    pp: int = 1
    attn_dp: int = 1
    cuda_graph_max_bs: int = 1 << 30

    @property
    def attn_tp(self) -> int:
        return max(1, self.tp // max(1, self.attn_dp))


def layout_from_args(args: argparse.Namespace | dict[str, Any], hbm_bytes: float, max_running: int | None) -> Layout:
    """The layout a server's launch flags ask for (SGLang's flag names; unset ones take SGLang's defaults)."""
    get = args.get if isinstance(args, dict) else (lambda k, d=None: getattr(args, k, d))
    tp = int(get("tp_size") or 1)
    ep = int(get("ep_size") or 1)
    pp = int(get("pp_size") or 1)
    attn_dp = int(get("dp_size") or 1) if get("enable_dp_attention") else 1
    graph_limit = get("cuda_graph_max_bs_decode")
    if graph_limit is None:
        graph_limit = get("cuda_graph_max_bs")    # older SGLang spelling
    if get("disable_cuda_graph") or get("disable_decode_cuda_graph"):
        graphs = 0
    elif graph_limit is not None:
        graphs = int(graph_limit)
    else:
        graphs = default_cuda_graph_max_bs(hbm_bytes, tp, max_running)
    return Layout(tp=max(1, tp), ep=max(1, ep), pp=max(1, pp), attn_dp=max(1, attn_dp), cuda_graph_max_bs=graphs)


@dataclass(frozen=True)
class LinkSpec:
    """The profile figures the collectives need."""

    link_bw: float
    latency: float
    activation_bytes: float
    hidden_size: int
    num_layers: int
    moe_layers: int
    experts_per_token: int
    eager_launch_overhead: float


def comm_seconds(tokens: float, layout: Layout, spec: LinkSpec) -> float:
    """TP all-reduces and EP all-to-alls of one forward over `tokens` tokens through the whole model."""
    if tokens <= 0:
        return 0.0
    act = spec.hidden_size * spec.activation_bytes
    bw, lat = spec.link_bw, spec.latency
    attn = ring_allreduce_seconds(tokens / layout.attn_dp * act, layout.attn_tp, bw, lat)
    dense_mlp = ring_allreduce_seconds(tokens * act, layout.tp, bw, lat)
    moe_layers = min(spec.moe_layers, spec.num_layers)
    if layout.ep > 1 and moe_layers > 0:
        per_gpu = tokens / layout.ep * max(1, spec.experts_per_token) * act
        moe_mlp = 2.0 * all_to_all_seconds(per_gpu, layout.ep, bw, lat)
    else:
        moe_mlp = dense_mlp
    return spec.num_layers * attn + (spec.num_layers - moe_layers) * dense_mlp + moe_layers * moe_mlp


def micro_batches(layout: Layout, requests: int) -> int:
    """Micro-batches one step is cut into: one per pipeline stage when there are enough requests."""
    return max(1, min(layout.pp, requests))


def pipelined_seconds(per_micro_batch: float, micro_tokens: float, m: int, layout: Layout, spec: LinkSpec) -> float:
    """One step through `pp` stages: `max(m, pp)` stage slots of `per_micro_batch / pp` plus `pp - 1` handoffs."""
    pp = layout.pp
    if pp <= 1:
        return per_micro_batch * m
    handoff = p2p_seconds(micro_tokens * spec.hidden_size * spec.activation_bytes, spec.link_bw, spec.latency)
    return max(m, pp) * per_micro_batch / pp + (pp - 1) * handoff


def eager_seconds(batch: int, layout: Layout, spec: LinkSpec) -> float:
    """Launch overhead of a decode step that runs without a CUDA graph."""
    return spec.eager_launch_overhead if batch > layout.cuda_graph_max_bs else 0.0
