"""A predicted point: the numbers a benchmark run would report, computed from a virtual run's window.

Latency percentiles interpolate linearly between order statistics (numpy's default, as AIPerf's are). Interactivity
is a call's output tokens after the first per second of decoding, `(out - 1) / (e2el - ttft)`, and, as AIPerf does
for a higher-is-better metric, its p90 is the value 90 % of calls reach (the 10th percentile).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from harness.predict.virtual import Window


class Predicted(BaseModel):
    """Where the numbers come from: always the simulator's model, never a measurement."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = "predicted by the simulator (no server, no client)"
    engine: str = "sim"
    profile: str
    calibrated: bool
    seed: int


class PointPrediction(BaseModel):
    """One point's predicted pool use, queueing, throughput and latency."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    conc: int
    gpus: int
    samples: int                  # windows pooled (each its own trajectory starts and noise)
    warmup_s: float               # the warm-up before a window (the mean over samples)
    window_s: float               # their summed length
    requests: int
    cancelled: int
    kv_pool_tokens: int
    kv_peak_use: float            # the pool's peak use, prefix cache included (a warm cache fills it)
    kv_peak_request_use: float    # the peak share the running requests' contexts need
    kv_mean_use: float
    queue_peak: int
    queue_mean: float
    running_mean: float
    output_tok_s: float
    output_tok_s_per_gpu: float
    input_tok_s: float
    total_tok_s_per_gpu: float    # input + output tokens, as a run's total tok/s/GPU counts them
    ttft_p50_s: float | None
    ttft_p90_s: float | None
    e2el_p50_s: float | None
    e2el_p90_s: float | None
    interactivity_p50_tok_s: float | None
    interactivity_p90_tok_s: float | None


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile (0..100) by linear interpolation; None for no values."""
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summarize(name: str, conc: int, gpus: int, kv_pool_tokens: int, w: Window,
              samples: int = 1) -> PointPrediction:
    """The point's predicted figures from what its window saw."""
    dur = w.duration if w.duration > 0 else 1.0
    ttft = [f.first_token - f.sent for f in w.finished]
    e2el = [f.end - f.sent for f in w.finished]
    inter = [(f.output_tokens - 1) / (f.end - f.first_token) for f in w.finished
             if f.output_tokens > 1 and f.end > f.first_token]
    out_tok = sum(f.output_tokens for f in w.finished)
    in_tok = sum(f.prompt_tokens for f in w.finished)
    return PointPrediction(
        name=name, conc=conc, gpus=gpus, samples=samples, warmup_s=w.start, window_s=w.duration,
        requests=len(w.finished), cancelled=w.cancelled, kv_pool_tokens=kv_pool_tokens, kv_peak_use=w.kv_peak,
        kv_peak_request_use=w.kv_requests_peak, kv_mean_use=w.kv_time_weighted / dur, queue_peak=w.queue_peak,
        queue_mean=w.queue_time_weighted / dur,
        running_mean=w.running_time_weighted / dur, output_tok_s=out_tok / dur,
        output_tok_s_per_gpu=out_tok / dur / max(1, gpus), input_tok_s=in_tok / dur,
        total_tok_s_per_gpu=(in_tok + out_tok) / dur / max(1, gpus),
        ttft_p50_s=percentile(ttft, 50), ttft_p90_s=percentile(ttft, 90),
        e2el_p50_s=percentile(e2el, 50), e2el_p90_s=percentile(e2el, 90),
        interactivity_p50_tok_s=percentile(inter, 50), interactivity_p90_tok_s=percentile(inter, 10),
    )
