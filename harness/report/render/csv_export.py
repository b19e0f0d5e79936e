"""`report.csv`: the curves as one row per point with every published metric (spreadsheets, notebooks); each
row names its curve, the point's identity in it and the point's attributes.

Latency columns are `<metric>_<stat>` for every metric and statistic a result publishes (seconds;
tokens/s/user for the interactivity metrics); an unmeasured value is an empty cell. The last columns are the
point's SLO attainment, goodput and cost (`harness.report.analysis.goodput`), empty without an SLO or a price.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from harness.report.analysis.curves import Curve, power_text
from harness.report.analysis.goodput import GOODPUT_COLUMNS, goodput_cells
from harness.report.results.attributes import topology
from harness.report.results.configs import config_name
from harness.report.results.load import LATENCY_METRICS

STATS = ("mean", "p50", "p75", "p90", "p95", "p99", "std")
COLUMNS = (
    "config_key", "variant", "overrides", "tag", "note", "engine", "simulated", "image", "model", "hw",
    "conc", "state", "valid", "invalid_reasons", "invalid_messages", "total_tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu",
    *(f"{m}_{s}" for m in LATENCY_METRICS for s in STATS),
    "num_requests_total", "num_requests_successful", "errors", "cancelled_at_cutoff", "power",
    "curve", "point", "topology", "spec_decoding", "kv_offloading", "dp_attention", "disagg", "recipe_fingerprint",
    "harness_commit", "source", "publishable", "publish_label", *GOODPUT_COLUMNS,
)


def render_csv(curves: Sequence[Curve]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for c in curves:
        for pid, p in c.labelled():
            w.writerow([
                p.config_key or config_name(p), c.variant or "", ";".join(c.overrides), p.tag or "", p.note or "", p.engine,
                str(p.simulated).lower(), p.image, p.model, p.hw, p.conc, p.state, str(p.valid).lower(),
                ";".join(r.code for r in p.invalid_reasons),
                "; ".join(f"{r.code}: {r.message}" if r.message else r.code for r in p.invalid_reasons),
                *(_cell(v) for v in (p.total_tput_per_gpu, p.output_tput_per_gpu, p.input_tput_per_gpu)),
                *(_cell(p.stat(m, s)) for m in LATENCY_METRICS for s in STATS),
                *(_cell(v) for v in (p.num_requests_total, p.num_requests_successful, p.errors,
                                     p.cancelled_at_cutoff)),
                power_text(p), c.key, pid, topology(p), p.arm.spec_decoding, p.arm.kv_offloading, p.arm.dp_attention, p.arm.disagg,
                p.recipe_fingerprint or "", p.harness_commit or "", str(p.source),
                "" if p.publishable is None else str(p.publishable).lower(), p.publish_label or "",
                *goodput_cells(p),
            ])
    return buf.getvalue()


def _cell(value: float | int | None) -> str:
    return "" if value is None else repr(value) if isinstance(value, float) else str(value)
