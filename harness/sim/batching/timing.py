"""The simulator's timing model: roofline-style step times from a hardware/model profile.

All times are seconds (float) inside the model; the engine converts to nanoseconds.

For one forward step that processes `T` new tokens while attending over `A` (token x context)
pairs and reading `K` KV-cache tokens, on `tp` GPUs:

    touched_weights = W_active + (W_total - W_active) * (1 - exp(-T / expert_saturation_tokens))
    t_mem     = (touched_weights + K * kv_bytes_per_token) / (tp * hbm_bw * bw_efficiency)
    t_compute = (2 * active_params * T + 4 * num_layers * hidden_size * A) / (tp * flops * flops_efficiency)
    t_step    = step_overhead + max(t_mem, t_compute) + t_comm

t_comm is the TP all-reduce / EP all-to-all time of the step; with `--pp-size` > 1 the step is cut into
micro-batches that flow through the pipeline stages, and a decode batch above the CUDA-graph limit pays the
eager launch overhead (`harness.sim.batching.topology.parallel` has the formulas).

W_* = params * weight_bytes_per_param. MoE weights touched grow with the tokens in the step until
every expert is read (`expert_saturation_tokens` sets how fast).

- Decode step, batch of B requests with contexts c_i, verify width q (1 without speculation,
  the draft tokens with it): T = B*q, K = sum c_i, A = q * sum c_i. With speculation a draft
  pass is added: `draft_cost_fraction * t_step(T=B, K, A=sum c_i)` (the draft model is small and
  sees one token per request per draft step).
- Prefill step over chunks (n_j new tokens after p_j already-cached ones): T = sum n_j,
  K = sum (p_j + n_j), A = sum n_j * (p_j + n_j / 2), plus `prefill_overhead`.
- HiCache transfers move `kv_bytes_per_token` per token over the host link at `host_link_bw`
  per GPU (all `tp` links in parallel): loads back to the GPU block the step that needs them;
  backups (write-through at insertion, write-back at eviction) overlap with compute except for
  the fraction `1 - backup_overlap`.
"""

from __future__ import annotations

import math
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.sim.batching.calibration import Calibration
from harness.sim.batching.kvpool import ModelConfig, cell_size, pool_tokens
from harness.sim.batching.topology.parallel import (
    Layout,
    LinkSpec,
    comm_seconds,
    eager_seconds,
    micro_batches,
    pipelined_seconds,
)

PROFILE_DIR = Path(__file__).resolve().parent / "profiles"
COMM_MEMO_SIZE = 1 << 16  # step sizes whose collective time a timing model keeps


class Profile(BaseModel):
    """Hardware + model parameters of one simulated deployment (a `profiles/<name>.json` file)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    model: ModelConfig = Field(description="the simulated model's public config (its KV footprint)")
    calibrated: bool = False
    calibration: Calibration | None = Field(default=None, description="measured constants and their source")
    # hardware, per GPU
    hbm_bytes: float = Field(gt=0)
    hbm_bw: float = Field(gt=0, description="bytes/s")
    flops: float = Field(gt=0, description="dense FLOP/s at the serving precision")
    host_link_bw: float = Field(gt=0, description="bytes/s GPU<->host (HiCache transfers)")
    # parallelism and variation (harness.sim.batching.topology.parallel, harness.sim.batching.noise)
    nvlink_bw: float = Field(default=450e9, gt=0, description="bytes/s per GPU per direction between GPUs of a server")
    collective_latency_s: float = Field(default=10e-6, ge=0, description="fixed seconds per collective or handoff")
    activation_bytes: float = Field(default=2.0, gt=0, description="bytes per activation element on the wire")
    moe_layers: int = Field(default=0, ge=0, description="MoE layers (EP all-to-all); 0: a dense model")
    experts_per_token: int = Field(default=0, ge=0, description="experts each token is routed to (top-k)")
    eager_launch_overhead: float = Field(default=0.0, ge=0,
                                         description="seconds a decode step pays without a CUDA graph")
    run_noise_sigma: float = Field(default=0.0, ge=0, description="lognormal sigma of one per-start step multiplier")
    step_noise_sigma: float = Field(default=0.0, ge=0, description="lognormal sigma of a per-step multiplier")
    request_noise_sigma: float = Field(default=0.0, ge=0, description="lognormal sigma of a per-request multiplier")
    transfer_gbps: float = Field(default=400.0, gt=0,
                                 description="Gb/s between a prefill and a decode worker (KV handover)")
    bw_efficiency: float = Field(gt=0, le=1)
    flops_efficiency: float = Field(gt=0, le=1)
    # model
    total_params: float = Field(gt=0)
    active_params: float = Field(gt=0)
    weight_bytes_per_param: float = Field(gt=0)
    num_layers: int = Field(gt=0)
    hidden_size: int = Field(gt=0)
    expert_saturation_tokens: float = Field(gt=0)
    context_length: int = Field(gt=0)
    # serving
    default_tp: int = Field(ge=1)
    mem_fraction_static: float = Field(gt=0, lt=1)
    default_chunked_prefill_size: int = Field(gt=0)
    step_overhead: float = Field(ge=0, description="seconds per step (launch, sampling, scheduling)")
    prefill_overhead: float = Field(ge=0)
    draft_cost_fraction: float = Field(ge=0)
    natural_accept_fraction: float = Field(ge=0, le=1, description="accepted share of drafts without simulation")
    backup_overlap: float = Field(ge=0, le=1)
    startup_seconds: float = Field(ge=0, description="model load + warmup time before /health is 200")

    @model_validator(mode="after")
    def _layers_agree(self) -> Profile:
        if self.model.num_hidden_layers != self.num_layers:
            raise ValueError(f"num_layers {self.num_layers} != model.num_hidden_layers {self.model.num_hidden_layers}")
        return self

    @property
    def kv_bytes_per_token(self) -> float:
        """KV bytes per token of the whole model (all KV heads, all layers), from `model`."""
        return float(cell_size(self.model, 1))


def load_profile(name: str) -> Profile:
    """Load `profiles/<name>.json` (or a path to a profile file)."""
    path = Path(name) if name.endswith(".json") else PROFILE_DIR / f"{name}.json"
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in PROFILE_DIR.glob("*.json")))
        raise FileNotFoundError(f"no simulator profile {name!r} (known: {known})")
    return Profile.model_validate_json(path.read_text())


class TimingModel:
    """Step times for one profile at one tensor-parallel size (and, optionally, a full parallel layout)."""

    def __init__(self, profile: Profile, tp: int, layout: Layout | None = None):
        p = profile
        self.p = p
        self.tp = max(1, tp)
        self.layout = layout if layout is not None else Layout(tp=self.tp)
        self.links = LinkSpec(link_bw=p.nvlink_bw, latency=p.collective_latency_s, activation_bytes=p.activation_bytes,
                              hidden_size=p.hidden_size, num_layers=p.num_layers, moe_layers=p.moe_layers,
                              experts_per_token=p.experts_per_token, eager_launch_overhead=p.eager_launch_overhead)
        self._w_active = p.active_params * p.weight_bytes_per_param
        self._w_rest = max(0.0, (p.total_params - p.active_params) * p.weight_bytes_per_param)
        self._bw = self.tp * p.hbm_bw * p.bw_efficiency
        self._fl = self.tp * p.flops * p.flops_efficiency
        self._attn = 4.0 * p.num_layers * p.hidden_size
        self._link = self.tp * p.host_link_bw
        self._kv_bytes_per_token = p.kv_bytes_per_token
        self._comm: dict[float, float] = {}  # comm_seconds by micro-batch tokens (a pure function of them)

    def core(self, new_tokens: float, kv_tokens: float, attn_pairs: float) -> float:
        """max(t_mem, t_compute) for T new tokens, K KV tokens read, A attention pairs (see module docstring)."""
        p = self.p
        touched = self._w_active + self._w_rest * (1.0 - math.exp(-new_tokens / p.expert_saturation_tokens))
        t_mem = (touched + kv_tokens * self._kv_bytes_per_token) / self._bw
        t_compute = (2.0 * p.active_params * new_tokens + self._attn * attn_pairs) / self._fl
        return max(t_mem, t_compute)

    def forward(self, new_tokens: float, kv_tokens: float, attn_pairs: float, requests: int = 1) -> float:
        """t_step for T new tokens of `requests` requests, K KV tokens read, A attention pairs, with the layout's
        collectives and pipeline stages."""
        m = micro_batches(self.layout, requests)
        t, k, a = new_tokens / m, kv_tokens / m, attn_pairs / m
        comm = self._comm.get(t)
        if comm is None:
            comm = comm_seconds(t, self.layout, self.links)
            if len(self._comm) < COMM_MEMO_SIZE:
                self._comm[t] = comm
        per = self.core(t, k, a) + comm
        return self.p.step_overhead + pipelined_seconds(per, t, m, self.layout, self.links)

    def decode(self, batch: int, context_tokens: int, verify_width: int, speculative: bool) -> float:
        """One decode (or draft + verify) step for `batch` requests holding `context_tokens` in total."""
        if batch <= 0:
            return 0.0
        t = self.forward(batch * verify_width, context_tokens, verify_width * context_tokens, batch)
        if speculative:
            t += self.p.draft_cost_fraction * self.forward(batch, context_tokens, context_tokens, batch)
        return t + eager_seconds(batch, self.layout, self.links)

    def prefill(self, chunks: list[tuple[int, int]]) -> float:
        """One prefill step over (cached_before, new_tokens) chunks."""
        if not chunks:
            return 0.0
        new = sum(n for _, n in chunks)
        kv = sum(c + n for c, n in chunks)
        pairs = sum(n * (c + n / 2.0) for c, n in chunks)
        return self.p.prefill_overhead + self.forward(new, kv, pairs, len(chunks))

    def transfer(self, tokens: int) -> float:
        """Seconds to move `tokens` of KV cache between GPU and host memory."""
        return tokens * self._kv_bytes_per_token / self._link

    def kv_pool_tokens(self, mem_fraction_static: float | None, max_total_tokens: int | None = None,
                       dp: int = 1, kv_cache_dtype: str | None = None) -> int:
        """One attention-DP rank's GPU KV pool, as SGLang sizes it (`harness.sim.batching.kvpool`): the static
        share of HBM less this GPU's weight shard, over the per-GPU cell of an attention-TP group of tp // dp."""
        frac = mem_fraction_static or self.p.mem_fraction_static
        weights_per_gpu = self.p.total_params * self.p.weight_bytes_per_param / self.tp
        cell = self.cell_bytes(dp, kv_cache_dtype)
        return pool_tokens(self.p.hbm_bytes, frac, weights_per_gpu, cell, max_total_tokens)

    def cell_bytes(self, dp: int = 1, kv_cache_dtype: str | None = None) -> int:
        """KV bytes per token on one GPU (SGLang's `cell_size`) with `dp` attention-DP ranks."""
        return cell_size(self.p.model, max(1, self.tp // max(1, dp)), kv_cache_dtype)

    def host_pool_tokens(self, hicache_size_gb: int, hicache_ratio: float | None, device_tokens: int,
                         cell: int | None = None) -> int:
        """DRAM tier size: `--hicache-size` GB per rank over the per-GPU cell if set, else `--hicache-ratio` (2.0)
        x the GPU pool."""
        if hicache_size_gb and hicache_size_gb > 0:
            return int(hicache_size_gb * 1e9 / (cell or self.cell_bytes()))
        return int(device_tokens * (hicache_ratio if hicache_ratio else 2.0))
