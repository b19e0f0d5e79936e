"""Time of the bootstrap interval behind `harness compare`: one latency percentile, 100k requests per side.

Draws two lognormal latency samples and times `percentile_diff_interval` (2,000 resamples) at p50, p75 and
p90, printing the time of each and the interval. Target: well under one second per percentile.

    .venv/bin/python benchmarks/noise_bench.py [--requests 100000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from harness.report.analysis.noise import percentile_diff_interval


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100_000, help="requests per side")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    a = rng.lognormal(0.0, 0.5, args.requests)
    b = rng.lognormal(0.01, 0.5, args.requests)
    for q in (0.5, 0.75, 0.9):
        start = time.perf_counter()
        r = percentile_diff_interval(a, b, q)
        took = time.perf_counter() - start
        print(f"p{round(q * 100)}: {took * 1000:.1f} ms for n={args.requests:,} per side; "
              f"B - A in {r.diff}, {r.reading}; {'OK' if took < 1.0 else 'OVER TARGET'}")


if __name__ == "__main__":
    main()
