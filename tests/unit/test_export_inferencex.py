"""`harness export --inferencex`: InferenceX's artifact layout, and the round trip record → row → report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.artifacts import write_foreign_json, write_json
from harness.cli import main
from harness.point import aiperf, inferencex_row, result_fields
from harness.report.arms import Arm
from harness.report.compare import compare_points
from harness.report.load import load_results
from harness.report.table import curve_notes

AIPERF = Path(__file__).parent.parent / "fixtures" / "results" / "sim-run" / "quickstart-sim" / "conc4" / "aiperf"
IDENTITY = {"hw": "sim", "conc": 4, "image": "lmsysorg/sglang:v0.5.23-cu130", "recipe_fingerprint": "b" * 64,
            "model": "demo/agentic-coder-8b", "infmax_model_prefix": "agentic-coder-8b", "framework": "sglang",
            "precision": "bf16", "spec_decoding": "none", "tp": 1, "ep": 1, "pp": 1, "dcp_size": 1, "pcp_size": 1,
            "dp_attention": True, "kv_offloading": "dram", "kv_offload_backend": {"name": "hicache", "version": "0.5.23"},
            "allocated_cpu_dram_gb": 4}


def _point(root: Path) -> Path:
    """A point directory as the runner leaves it: AIPerf's files, our record and the published row."""
    pdir = root / "k" / "conc4"
    shutil.copytree(AIPERF, pdir / "aiperf")
    (pdir / "aiperf" / "inputs.json").write_text("{}")
    (pdir / "server.log").write_text("max_total_num_tokens=4096, max_running_requests=32\n")
    raw = aiperf.read_records(pdir / "aiperf")
    records = [result_fields.parse_record(r) for r in raw]
    record = {"config_key": "k", "engine": "sim", "simulated": True, "conc": 4, "image": IDENTITY["image"],
              "hw": "sim", "tp": 1, "ep": 1, "num_gpus": 1, "row": "bmk_agentic_k_conc4.json",
              "recipe_fingerprint": IDENTITY["recipe_fingerprint"], "spec_decoding": "none", "kv_offloading": "dram",
              "dp_attention": True,
              "request_metrics": result_fields.request_metrics(records, 1),
              "num_requests_successful": sum(r.ok and r.phase == "profiling" for r in records),
              "validity": {"valid": True, "reasons": []}}
    write_json(pdir / "point_result.json", record)
    row = inferencex_row.build_row(identity=IDENTITY, raw_records=raw, summary=None,
                                   server_log=(pdir / "server.log").read_text(), counters=None, power=None)
    write_foreign_json(pdir / record["row"], row)
    return pdir


def test_layout_and_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _point(tmp_path / "run")
    assert main(["export", "--inferencex", str(tmp_path / "run"), str(tmp_path / "out")]) == 0
    out = tmp_path / "out"
    assert (out / "bmk_agentic_k_conc4" / "bmk_agentic_k_conc4.json").is_file()
    assert (out / "agentic_k_conc4" / "aiperf_artifacts" / "profile_export.jsonl").is_file()
    assert not (out / "agentic_k_conc4" / "aiperf_artifacts" / "inputs.json").exists()
    assert (out / "server_logs_k_conc4" / "server.log").is_file()
    row = json.loads((out / "bmk_agentic_k_conc4" / "bmk_agentic_k_conc4.json").read_text())
    assert "schema_version" not in row and row["result_schema_version"] == 1

    (ours,) = load_results([tmp_path / "run"])
    (back,) = load_results([out])
    assert back.simulated and back.conc == ours.conc == 4
    for name in ("total_tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu"):
        assert getattr(back, name) == round(getattr(ours, name), 5)   # InferenceX rounds rows to 5 places
    compared = 0
    assert set(back.latency) >= set(ours.latency) >= {"ttft", "e2el", "e2e_norm_intvty"}
    for metric in ours.latency:  # these AIPerf records carry no inter-token latency
        for stat in ("mean", "p50", "p75", "p90", "p95", "std"):
            assert back.stat(metric, stat) == round(ours.stat(metric, stat), 5), (metric, stat)
            compared += 1
    assert compared == 6 * len(ours.latency) and back.num_requests_successful == ours.num_requests_successful
    # the arm survives the trip: the published row names the same arm as the record
    assert back.arm == ours.arm == Arm("none", "dram", "true", "agg", "b" * 64)
    (c,), only_a, only_b = compare_points([ours], [back])  # our curve and its InferenceX reading pair, unmixed
    assert (c.mixed, only_a, only_b, [d.conc for d in c.changed]) == ((), [], [], [4])
    assert c.new.key == "agentic-coder-8b-bf16-sim-sglang-tp1-ep1 {kv dram, dp-attention, recipe bbbbbbbb}"
    assert (c.old.key, curve_notes(c.old)[:1], curve_notes(c.new)[:1]) == ("k", ["arm: kv dram, dp-attention"], [])


def test_no_points_is_a_user_error(tmp_path: Path) -> None:
    from harness.errors import UserError
    from harness.report.export import export_inferencex

    with pytest.raises(UserError, match="no point directories"):
        export_inferencex(tmp_path, tmp_path / "out")
