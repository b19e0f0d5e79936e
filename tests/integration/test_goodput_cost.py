"""Goodput, SLO attainment and cost end to end on the simulator, as docs/reports.md gives them: `harness run ... --point
c4 --slo 'ttft<=0.5,e2el<=10' --gpu-hour-price 3.0` (a short window), its record's `slo_attainment` and `cost` held to
a hand computation from its own per-request records (read here with plain json, not the harness's reader), the run's
and `report`'s tables and `compare`'s lines showing them, `report --slo` judging the past run at a new SLO, and
`search` answering at `attainment>=...` on the completed point (reused: no second run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHORT = ["--duration", "20", "--set", "client.warmup_requests_per_lane=1", "--set", "client.burst_phase_starts=true"]
SLO = "ttft<=0.5,e2el<=10"

pytestmark = pytest.mark.slow


def harness(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HARNESS_PROGRESS": "plain", "HARNESS_DB": "off"}
    return subprocess.run([sys.executable, "-m", "harness", *argv], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600, check=False)


def hand(records_path: Path, cancelled: int, ttft_max: float, e2el_max: float) -> dict[str, Any]:
    """Attainment and goodput counted by hand from AIPerf's per-request lines."""
    good = n = 0
    starts, ends, good_tokens = [], [], 0
    for line in records_path.read_text().splitlines():
        r = json.loads(line)
        if r["metadata"].get("benchmark_phase", "profiling") != "profiling":
            continue
        n += 1
        m = r.get("metrics") or {}
        if r.get("error") or "request_latency" not in m:
            continue
        starts.append(r["metadata"]["request_start_ns"])
        ends.append(r["metadata"]["request_end_ns"])
        if m["time_to_first_token"]["value"] / 1e3 <= ttft_max and m["request_latency"]["value"] / 1e3 <= e2el_max:
            good += 1
            good_tokens += m["input_sequence_length"]["value"] + m["output_sequence_length"]["value"]
    window = (max(ends) - min(starts)) / 1e9
    return {"requests": n + cancelled, "good": good, "rps": good / window, "tps": good_tokens / window}


def test_run_report_compare_and_search_show_attainment_goodput_and_cost(tmp_path: Path) -> None:
    r = harness("run", "recipes/quickstart-sim.yaml", "--point", "c4", "--slo", SLO, "--gpu-hour-price", "3.0",
                *SHORT, "--out", str(tmp_path))
    assert r.returncode in (0, 3), r.stdout[-3000:] + r.stderr[-3000:]
    assert "attainment (95% CI)" in r.stdout and "cost at 3 USD/GPU-hour" in r.stdout
    [pdir] = list(tmp_path.glob("quickstart-sim/variants/*/conc4"))
    record = json.loads((pdir / "point_result.json").read_text())
    block, cost = record["slo_attainment"], record["cost"]
    counted = hand(pdir / "aiperf" / "profile_export.jsonl", record["request_accounting"]["cancelled_at_cutoff"] or 0,
                   0.5, 10.0)
    assert (block["requests"], block["good"]) == (counted["requests"], counted["good"])
    assert block["attainment"] == pytest.approx(counted["good"] / counted["requests"])
    assert block["request_goodput_rps"] == pytest.approx(counted["rps"])
    assert block["token_goodput"]["total_tps_per_gpu"] == pytest.approx(counted["tps"] / record["num_gpus"])
    total_tps = record["request_metrics"]["throughput"]["total"]["tokens_per_second"]
    assert cost["per_million_total_tokens"] == pytest.approx(3.0 * record["num_gpus"] / (total_tps * 3600) * 1e6)
    assert cost["per_agent_hour"] == pytest.approx(3.0 * record["num_gpus"] / record["achieved_concurrency"]["sessions"])
    assert not any(k in json.loads((pdir / record["row"]).read_text()) for k in ("slo_attainment", "cost"))

    rep = harness("report", str(tmp_path), "--out", str(tmp_path / "rep"), "--slo", "ttft<=0.2", "--json")
    assert rep.returncode == 0, rep.stderr[-2000:]
    [point] = json.loads(rep.stdout)["curves"][0]["points"]
    assert point["slo_attainment"]["slo"] == "ttft<=0.2"
    assert point["cost"]["gpu_hour_price"] == 3.0   # the record's price, its per good request at the new SLO

    cmp = harness("compare", str(tmp_path), str(tmp_path), "--gpu-hour-price", "3.0")
    assert cmp.returncode == 0, cmp.stderr[-2000:]
    assert f"at {SLO}; intervals overlap" in cmp.stdout and "USD/Mtok" in cmp.stdout

    s = harness("search", "recipes/quickstart-sim.yaml", "--slo", SLO, "--slo", "attainment>=0.01", "--min-conc",
                "4", "--max-conc", "4", "--max-points", "1", *SHORT, "--gpu-hour-price", "3.0", "--out", str(tmp_path))
    assert s.returncode == 0, s.stdout[-3000:] + s.stderr[-3000:]
    [found] = list(tmp_path.glob("quickstart-sim/variants/*/searches/*/search.json"))
    doc = json.loads(found.read_text())
    assert doc["request_slo"] == SLO and doc["slo"] == ["attainment>=0.01"]
    assert doc["points"][0]["metrics"]["attainment"] == pytest.approx(block["attainment"])
    if doc["boundary_conc"] == 4:
        assert doc["agents_per_currency_hour"] == pytest.approx(4 / (3.0 * record["num_gpus"]))
