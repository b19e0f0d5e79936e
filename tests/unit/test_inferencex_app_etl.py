"""InferenceX-app's AgentX ingest reads our export whole and recomputes every server metric our row carries.

The app discards nine server metrics of a producer's row and recomputes them from the export (AIPerf's
`server_metrics_export.csv`, the stored server logs). `tests/fixtures/inferencex-app-etl/` holds that ETL's real
output on a real export of a single-node point and of a prefill/decode deployment point (its README records the
commits). Gauges reach the app through the CSV, which prints four decimals, so KV usage agrees to that precision.

For a prefill/decode point the app defines three values otherwise than InferenceX's aggregator, whose row ours
equals field for field (`tests/unit/test_multinode_row.py`): its headline pool is the decode role's pool (the
aggregator sums every worker's), and its token totals are the client's (engine counters count a disaggregated
request on both roles). Those are checked against our export's own decode worker log and our row's client
tokens. With `HARNESS_INFERENCEX_APP` naming an InferenceX-app checkout, the ETL is also run live on the fixtures.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "inferencex-app-etl"
CSV_PRECISION = 0.5e-4   # the CSV's four decimals


def _point(kind: str) -> tuple[dict[str, Any], dict[str, Any], Path]:
    export = FIX / kind / "export"
    (row_dir,) = export.glob("bmk_agentic_*")
    row = json.loads(next(row_dir.glob("*.json")).read_text())
    (derived,) = json.loads((FIX / kind / "etl_output.json").read_text()).values()
    return row, derived, export


def _shared_checks(row: dict[str, Any], got: dict[str, Any]) -> None:
    cache, kv = row["server_metrics"]["cache"], row["server_metrics"]["kv_cache"]
    assert got["server_gpu_cache_hit_rate"] == pytest.approx(cache["gpu_cache_hit_rate"], abs=1e-5)
    assert got["server_cpu_cache_hit_rate"] == pytest.approx(cache["cpu_cache_hit_rate"], abs=1e-5)
    assert got["server_external_cache_hit_rate"] == pytest.approx(cache["external_cache_hit_rate"], abs=1e-5)
    assert got["gpu_kv_cache_usage_pct"] == pytest.approx(kv["gpu_usage_pct"], abs=CSV_PRECISION)


def test_a_single_node_points_server_metrics_are_recomputed_equal_to_our_row() -> None:
    row, derived, _ = _point("single")
    got = derived["metrics"]
    assert derived["kvPoolReason"] is None
    assert all(got[k] is not None for k in got if k not in ("kv_cache_pool_prefill_tokens",
                                                            "kv_cache_pool_decode_tokens"))
    assert got["kv_cache_pool_tokens"] == row["kv_cache_pool_tokens"]
    _shared_checks(row, got)
    tokens = row["server_metrics"]["tokens"]
    assert (got["total_prompt_tokens"], got["total_generation_tokens"]) == (tokens["prompt_total"],
                                                                            tokens["generation_total"])


def test_a_prefill_decode_points_server_metrics_are_all_recomputed_from_our_export() -> None:
    row, derived, export = _point("pd")
    got = derived["metrics"]
    assert derived["kvPoolReason"] is None and None not in got.values()   # every worker log found by role
    (logs,) = export.glob("server_logs_*")
    assert sorted(p.name for p in logs.iterdir()) == ["node0_decode_w0.out", "node0_prefill_w0.out", "router.log"]
    pool = {role: int(re.search(r"max_total_num_tokens=(\d+)", (logs / f"node0_{role}_w0.out").read_text())[1])
            for role in ("prefill", "decode")}
    assert (got["kv_cache_pool_prefill_tokens"], got["kv_cache_pool_decode_tokens"]) == (pool["prefill"],
                                                                                         pool["decode"])
    assert got["kv_cache_pool_tokens"] == pool["decode"]
    assert row["kv_cache_pool_tokens"] == pool["prefill"] + pool["decode"]   # InferenceX's aggregator sums them
    _shared_checks(row, got)
    client = row["request_metrics"]["tokens"]
    completed = row["num_requests_successful"]
    assert got["total_prompt_tokens"] == round(client["input"]["mean"] * completed)
    assert got["total_generation_tokens"] == round(client["output_actual"]["mean"] * completed)


@pytest.mark.parametrize("kind", ["single", "pd"])
def test_the_app_etl_live_on_the_export(kind: str) -> None:
    app = os.environ.get("HARNESS_INFERENCEX_APP")
    if not app:
        pytest.skip("HARNESS_INFERENCEX_APP names no InferenceX-app checkout (its code is not part of this "
                    "repository); the recorded output is checked above")
    if shutil.which("npm") is None:
        pytest.skip("npm not installed")
    done = subprocess.run(["bash", str(ROOT / "tools" / "inferencex-app-etl.sh"), str(FIX / kind / "export")],
                          env={**os.environ, "INFERENCEX_APP": app}, capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == json.loads((FIX / kind / "etl_output.json").read_text())
