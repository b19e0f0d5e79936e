"""`harness predict RECIPE [--points c2 c8] [--json]`: each point's pool use, queueing, throughput and latency as the
simulator's model predicts them, in seconds, without a server or AIPerf (`harness.predict`)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("recipe", help="recipe YAML file")
    parser.add_argument("--points", nargs="+", metavar="cN", help="only these points (c8 or 8; default: all)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SETTING=VALUE",
                        help="override a setting first, e.g. args.max-running-requests=64")
    parser.add_argument("--profile", help="simulator profile to predict on (default: the point's sim profile, "
                                          "else the recipe's sim_profile)")
    parser.add_argument("--seed", type=int, help="noise seed (default: the server's --sim-seed, else the client's "
                                                 "seed)")
    parser.add_argument("--duration", type=float, help="window in seconds (default: client.duration_s)")
    parser.add_argument("--samples", type=_samples, default=1, metavar="N",
                        help="pool N windows per point, each with its own trajectory starts and noise (default 1; a "
                             "short window's figures depend much on which calls it holds)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def main(args: argparse.Namespace) -> int:
    from harness.artifacts import print_json
    from harness.predict.point import profile_of
    from harness.recipe.points import load_plans

    # not a run: AIPerf's official-run gate (pinned corpus, long window) does not apply
    recipe, plans = load_plans(args.recipe, args.points, args.overrides, unofficial=True)
    rows = predict_all(plans, [profile_of(plan, recipe.sim_profile, args.profile) for plan in plans], args)
    if args.json:
        print_json({"config_key": recipe.config_key, "recipe": str(args.recipe),
                    "points": [{**p.model_dump(), "predicted": s.model_dump()} for p, s in rows]})
        return 0
    print(render(recipe.config_key, rows))
    return 0


def predict_all(plans: list[Any], profiles: list[str], args: argparse.Namespace) -> list[tuple[Any, Any]]:
    """Every point's prediction, in the plans' order: one worker process per CPU (largest concurrency first, so the
    longest points do not come last), each point's progress on stderr as it ends (stdout stays one document)."""
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from harness.report.render.build import die_with_parent

    jobs = [(plan, profile, args.seed, args.duration, args.samples) for plan, profile in zip(plans, profiles)]
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    workers = min(len(jobs), cpus)
    began = time.monotonic()
    print(f"predict: {len(jobs)} point(s), {workers} at a time", file=sys.stderr, flush=True)
    results: dict[int, tuple[Any, Any, float]] = {}
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        for i, job in enumerate(jobs):
            results[i] = _predict_job(job)
            _progress(len(results), len(jobs), jobs[i], results[i], time.monotonic() - began)
        return [results[i][:2] for i in range(len(jobs))]
    order = sorted(range(len(jobs)), key=lambda i: -plans[i].client.conc)
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                             initializer=die_with_parent, initargs=(os.getpid(),)) as pool:
        futures = {pool.submit(_predict_job, jobs[i]): i for i in order}
        for future in as_completed(futures):
            i = futures[future]
            results[i] = future.result()
            _progress(len(results), len(jobs), jobs[i], results[i], time.monotonic() - began)
    return [results[i][:2] for i in range(len(jobs))]


def _predict_job(job: tuple[Any, str, int | None, float | None, int]) -> tuple[Any, Any, float]:
    from harness.predict.point import predict_point

    plan, profile, seed, duration, samples = job
    began = time.monotonic()
    point, source = predict_point(plan, profile, seed, {}, duration, samples)
    return point, source, time.monotonic() - began


def _progress(done: int, of: int, job: tuple[Any, str, int | None, float | None, int],
              result: tuple[Any, Any, float], elapsed: float) -> None:
    plan, profile, _, duration, samples = job
    point, _, took = result
    print(f"predict [{done}/{of}] {plan.name} (conc {plan.client.conc}, {duration or plan.client.duration_s:g} s "
          f"window x {samples}, profile {profile}) in {took:.1f} s, {point.requests} calls measured; "
          f"{elapsed:.0f} s so far", file=sys.stderr, flush=True)


def _samples(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 100:
        raise argparse.ArgumentTypeError(f"expected a whole number of windows from 1 to 100, got {text!r}")
    return int(text)


def _f(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def render(config_key: str, rows: list[tuple[Any, Any]]) -> str:
    """The predicted points as a table, headed by where the numbers come from."""
    lines = [f"{config_key}: PREDICTED by the simulator (no server, no client run)"]
    for label in sorted({f"profile {s.profile} ({'calibrated' if s.calibrated else 'not calibrated'}), "
                         f"noise seed {s.seed}" for _, s in rows}):
        lines.append(f"  {label}")
    if any(p.samples > 1 for p, _ in rows):
        lines.append(f"  {max(p.samples for p, _ in rows)} windows pooled per point")
    from harness.report.analysis.table import OUTPUT_PER_GPU, TOTAL_PER_GPU

    head = ("point", "conc", "warm-up s", "reqs", "KV peak all/reqs", "queue pk/mean", TOTAL_PER_GPU, OUTPUT_PER_GPU,
            "TTFT p50/p90 s", "E2EL p50/p90 s", "intvty p50/p90")
    body = []
    for p, _ in rows:
        body.append((p.name, str(p.conc), f"{p.warmup_s:.0f}", str(p.requests),
                     f"{p.kv_peak_use:.1%}/{p.kv_peak_request_use:.1%}",
                     f"{p.queue_peak}/{p.queue_mean:.2f}", f"{p.total_tok_s_per_gpu:.1f}", f"{p.output_tok_s_per_gpu:.1f}",
                     f"{_f(p.ttft_p50_s, '.3f')}/{_f(p.ttft_p90_s, '.3f')}",
                     f"{_f(p.e2el_p50_s, '.2f')}/{_f(p.e2el_p90_s, '.2f')}",
                     f"{_f(p.interactivity_p50_tok_s, '.0f')}/{_f(p.interactivity_p90_tok_s, '.0f')}"))
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    for r in [head, *body]:
        lines.append("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))
    lines.append(f"(all figures predicted; {TOTAL_PER_GPU} counts input + output tokens, as a run's table does; KV peak: the pool with its prefix cache / what running requests need; "
                 "interactivity in tokens/s per call, p90 = the value 90 % of calls reach)")
    return "\n".join(lines)
