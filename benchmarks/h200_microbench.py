"""Microbenchmarks of one GPU for the simulator's efficiency constants (runs where a GPU and PyTorch are).

Measures what the simulator's roofline needs, each as the median of timed repetitions after warm-ups
(CUDA events):

- `hbm`: device-to-device copy and a read-only reduction of a few GiB (bytes moved per second);
- `gemv`: bf16 weight-streaming products `x[B, K] @ W[K, N]` with a 2 GiB weight for decode-sized
  batches (weight bytes read per second: the bandwidth a decode step reaches);
- `gemm`: large bf16 and fp8 (e4m3, per-tensor scales, `torch._scaled_mm`) products (FLOP/s);
- `attention`: decode attention (one query token per request over a long bf16 KV cache, grouped
  query heads) as KV bytes read per second, and causal prefill attention as FLOP/s;
- `launch`: the cost of one small kernel launched eagerly and replayed from a CUDA graph;
- `power`: NVML board power idle and during the bf16 product, when NVML answers.

    python3 benchmarks/h200_microbench.py --out h200-microbench.json

The JSON it writes is the input of `harness.sim.batching.calibration.fit_constants`, which turns it
into a profile's efficiency constants.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import statistics
import time

import torch


def timed(fn, reps: int = 20, warmup: int = 3) -> float:
    """Median seconds of `fn()` over `reps` repetitions, each timed with CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def hbm() -> dict:
    n = 4 * 2**30 // 2
    a = torch.empty(n, dtype=torch.bfloat16, device="cuda").normal_()
    b = torch.empty_like(a)
    t_copy = timed(lambda: b.copy_(a))
    t_sum = timed(lambda: a.sum(dtype=torch.float32))
    return {"bytes": n * 2, "copy_bytes_per_s": 2 * n * 2 / t_copy, "read_bytes_per_s": n * 2 / t_sum}


def gemv() -> list[dict]:
    k, n = 8192, 131072
    w = torch.empty(k, n, dtype=torch.bfloat16, device="cuda").normal_()
    rows = []
    for batch in (1, 8, 32, 64, 128, 256, 512):
        x = torch.empty(batch, k, dtype=torch.bfloat16, device="cuda").normal_()
        t = timed(lambda: x @ w)  # noqa: B023 - timed at once
        rows.append({"batch": batch, "k": k, "n": n, "seconds": t, "weight_bytes_per_s": k * n * 2 / t,
                     "flops_per_s": 2 * batch * k * n / t})
    return rows


def gemm() -> list[dict]:
    rows = []
    k = n = 8192
    for m in (1024, 4096, 8192, 16384):
        a = torch.empty(m, k, dtype=torch.bfloat16, device="cuda").normal_()
        b = torch.empty(k, n, dtype=torch.bfloat16, device="cuda").normal_()
        t = timed(lambda: a @ b)  # noqa: B023
        rows.append({"dtype": "bf16", "m": m, "k": k, "n": n, "flops_per_s": 2 * m * k * n / t})
        try:
            a8 = a.to(torch.float8_e4m3fn)
            b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm needs
            one = torch.ones((), device="cuda", dtype=torch.float32)
            t8 = timed(lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16))  # noqa: B023
            rows.append({"dtype": "fp8_e4m3", "m": m, "k": k, "n": n, "flops_per_s": 2 * m * k * n / t8})
        except Exception as exc:  # noqa: BLE001 - a build without fp8 GEMM: say so
            rows.append({"dtype": "fp8_e4m3", "m": m, "error": f"{type(exc).__name__}: {exc}"[:300]})
    return rows


def attention() -> dict:
    import torch.nn.functional as F

    out: dict = {"decode": [], "prefill": []}
    heads_q, heads_kv, dim = 64, 8, 128
    for batch, ctx in ((8, 8192), (32, 8192), (64, 16384)):
        q = torch.empty(batch, heads_q, 1, dim, dtype=torch.bfloat16, device="cuda").normal_()
        kv = [torch.empty(batch, heads_kv, ctx, dim, dtype=torch.bfloat16, device="cuda").normal_() for _ in range(2)]
        t = timed(lambda: F.scaled_dot_product_attention(q, kv[0], kv[1], enable_gqa=True))  # noqa: B023
        kv_bytes = 2 * batch * heads_kv * ctx * dim * 2
        out["decode"].append({"batch": batch, "context": ctx, "heads_q": heads_q, "heads_kv": heads_kv, "head_dim": dim,
                              "seconds": t, "kv_bytes_per_s": kv_bytes / t})
    for seq in (4096, 8192):
        q, k, v = (torch.empty(1, heads_q, seq, dim, dtype=torch.bfloat16, device="cuda").normal_() for _ in range(3))
        t = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), reps=10)  # noqa: B023
        flops = 4 * seq * seq * heads_q * dim / 2  # QK^T and PV, causal half
        out["prefill"].append({"seq": seq, "heads": heads_q, "head_dim": dim, "seconds": t, "flops_per_s": flops / t})
    return out


def launch() -> dict:
    x = torch.zeros(1024, device="cuda")
    kernels = 1000

    def many() -> None:
        for _ in range(kernels):
            x.add_(1.0)

    eager = timed(many, reps=5)
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        many()
    torch.cuda.current_stream().wait_stream(stream)
    with torch.cuda.graph(graph):
        many()
    replay = timed(graph.replay, reps=10)
    return {"kernels": kernels, "eager_s_per_kernel": eager / kernels, "graph_s_per_kernel": replay / kernels}


def power() -> dict:
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
    except Exception as exc:  # noqa: BLE001
        return {"error": f"NVML: {exc}"[:300]}

    def watts() -> float:
        return pynvml.nvmlDeviceGetPowerUsage(h) / 1e3

    idle = []
    for _ in range(10):
        idle.append(watts())
        time.sleep(0.1)
    a = torch.empty(8192, 8192, dtype=torch.bfloat16, device="cuda").normal_()
    busy = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < 4.0:
        for _ in range(20):
            a @ a
        torch.cuda.synchronize()
        if time.monotonic() - t0 > 1.0:
            busy.append(watts())
    return {"idle_w": statistics.median(idle), "bf16_gemm_w": statistics.median(busy),
            "limit_w": pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1e3}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    props = torch.cuda.get_device_properties(0)
    result = {
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "device": {"name": props.name, "memory_bytes": props.total_memory, "sms": props.multi_processor_count,
                   "capability": f"{props.major}.{props.minor}"},
        "software": {"torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version()},
    }
    for name, fn in (("power", power), ("hbm", hbm), ("gemv", gemv), ("gemm", gemm), ("attention", attention),
                     ("launch", launch)):
        t0 = time.monotonic()
        result[name] = fn()
        torch.cuda.empty_cache()
        print(f"{name}: {time.monotonic() - t0:.1f}s", flush=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
