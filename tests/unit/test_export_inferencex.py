"""`harness export --inferencex`: InferenceX's artifact layout, and the round trip record → row → report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.artifacts import write_foreign_json, write_json
from harness.cli import main
from harness.point.record import inferencex_row, result_fields
from harness.point.replay import aiperf
from harness.report.analysis.compare import compare_points
from harness.report.results.arms import Arm
from harness.report.results.points import load_results

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
    assert "left out 1 point(s) that are not publishable" in capsys.readouterr().out   # simulated, no AIPerf check
    assert not (tmp_path / "out" / "bmk_agentic_k_conc4").exists()
    assert main(["export", "--inferencex", "--include-unofficial", str(tmp_path / "run"), str(tmp_path / "out")]) == 0
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
    assert (c.old.key, c.old.arm.label()) == ("k", "kv dram, dp-attention")   # our config is named by its key


def test_no_points_is_a_user_error(tmp_path: Path) -> None:
    from harness.errors import UserError
    from harness.report.results.export import export_inferencex

    with pytest.raises(UserError, match="no point directories"):
        export_inferencex(tmp_path, tmp_path / "out")


EVALS = Path(__file__).parent.parent / "fixtures" / "evals"
LM_EVAL_RESULTS = "lm_eval/agentic-coder/results_2026-12-01T03-25-04.123456.json"


def _eval_dir(run: Path) -> Path:
    """An eval directory as the eval runner leaves it, from a real lm-eval results file and its meta_env.json."""
    edir = run / "quickstart-sim" / "eval-conc8"
    (edir / LM_EVAL_RESULTS).parent.mkdir(parents=True)
    shutil.copy(EVALS / "lm_eval_results_gsm8k.json", edir / LM_EVAL_RESULTS)
    shutil.copy(EVALS / "meta_env.json", edir / "meta_env.json")
    write_json(edir / "eval_result.json", {"config_key": "quickstart-sim", "conc": 8, "task": "gsm8k",
                                            "state": "completed", "row": None, "lm_eval_results": LM_EVAL_RESULTS,
                                            "lm_eval_samples": None})
    return edir


def test_an_eval_exports_as_inferencex_collects_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """InferenceX's `collect_eval_results.py` (and the app's eval ingest) read `meta_env.json` beside lm-eval's
    `results_*.json` in one `eval_*` artifact; the recorded output of their collector on this export names
    exactly the file the export writes, with the score lm-eval wrote."""
    _point(tmp_path / "run")
    _eval_dir(tmp_path / "run")
    assert main(["export", "--inferencex", "--include-unofficial", str(tmp_path / "run"), str(tmp_path / "out")]) == 0
    assert "1 InferenceX row(s), 1 eval(s)" in capsys.readouterr().out
    artifact = tmp_path / "out" / "eval_quickstart-sim_conc8"
    results = artifact / Path(LM_EVAL_RESULTS).name
    assert results.read_bytes() == (EVALS / "lm_eval_results_gsm8k.json").read_bytes()
    assert (artifact / "meta_env.json").read_bytes() == (EVALS / "meta_env.json").read_bytes()
    (collected,) = json.loads((EVALS / "inferencex_collect_eval_results" / "agg_eval_all.json").read_text())
    assert collected["source"] == f"eval_results/{artifact.name}/{results.name}"
    lm_eval = json.loads(results.read_text())
    assert collected["score"] == lm_eval["results"]["gsm8k"]["exact_match,strict-match"]
    assert (collected["conc"], collected["hw"], collected["task"]) == (8, "SIM", "gsm8k")


def test_a_variant_and_the_recipes_own_point_export_under_two_names(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _point(tmp_path / "run")
    variant = tmp_path / "run" / "k" / "variants" / "tuned" / "conc4"
    shutil.copytree(base, variant)
    record = json.loads((variant / "point_result.json").read_text())
    write_json(variant / "point_result.json", {**record, "variant": "tuned", "tag": "tuned"})
    row = json.loads((variant / record["row"]).read_text())
    row["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"] = 954.0
    write_foreign_json(variant / record["row"], row)

    assert main(["export", "--inferencex", "--include-unofficial", str(tmp_path / "run"), str(tmp_path / "out")]) == 0
    assert "2 InferenceX row(s)" in capsys.readouterr().out
    rows = sorted((tmp_path / "out").glob("bmk_agentic_*/*.json"))
    assert [p.name for p in rows] == ["bmk_agentic_k_conc4.json", "bmk_agentic_k_tuned_conc4.json"]
    tputs = [json.loads(p.read_text())["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"] for p in rows]
    assert tputs[1] == 954 and tputs[0] != 954


def _floats(value: object) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [f for v in value.values() for f in _floats(v)]
    if isinstance(value, list):
        return [f for v in value for f in _floats(v)]
    return []


def test_an_older_unrounded_row_is_exported_rounded_as_inferencex_rounds(tmp_path: Path) -> None:
    pdir = _point(tmp_path / "run")
    row = json.loads((pdir / "bmk_agentic_k_conc4.json").read_text())
    row["request_metrics"]["latency"]["ttft"]["p50"] = 0.0123456789
    row["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"] = 947.999999999
    write_foreign_json(pdir / "bmk_agentic_k_conc4.json", row)
    assert main(["export", "--inferencex", "--include-unofficial", str(tmp_path / "run"), str(tmp_path / "out")]) == 0
    out = json.loads((tmp_path / "out" / "bmk_agentic_k_conc4" / "bmk_agentic_k_conc4.json").read_text())
    assert out["request_metrics"]["latency"]["ttft"]["p50"] == 0.01235
    assert out["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"] == 948   # an int, as InferenceX writes
    assert all(round(f, 5) == f for f in _floats(out))


def test_gpu_metrics_recorded_in_local_time_are_exported_in_utc(tmp_path: Path) -> None:
    pdir = _point(tmp_path / "run")
    (pdir / "gpu_metrics.csv").write_text("timestamp, index, power.draw [W]\n2026/12/01 04:25:04.385, 0, 79.99 W\n"
                                          "2026/12/01 04:25:05.000, 0, 80.01 W\n")
    (pdir / "agentic_power_timezone_offset.txt").write_text("-08:00\n")   # written in America/Los_Angeles
    assert main(["export", "--inferencex", "--include-unofficial", str(tmp_path / "run"), str(tmp_path / "out")]) == 0
    out = tmp_path / "out" / "gpu_metrics_k_conc4"
    assert (out / "gpu_metrics.csv").read_text() == ("timestamp, index, power.draw [W]\n"
                                                     "2026/12/01 12:25:04.385, 0, 79.99 W\n"
                                                     "2026/12/01 12:25:05.000, 0, 80.01 W\n")
    assert json.loads((out / "gpu_metrics_context.json").read_text()) == {"timestamp_timezone": "UTC"}
    # the host's offset goes beside AIPerf's files, whose naive local window times it places
    assert (tmp_path / "out" / "agentic_k_conc4" / "agentic_power_timezone_offset.txt").read_text() == "-08:00\n"
    assert not (out / "agentic_power_timezone_offset.txt").exists()


@pytest.mark.parametrize("row", ["/etc/passwd", "../../../../etc/passwd", "bmk_agentic_k_conc4.json/../x.json"])
def test_a_row_outside_the_results_tree_is_refused_and_nothing_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], row: str) -> None:
    pdir = _point(tmp_path / "run")
    record = json.loads((pdir / "point_result.json").read_text())
    write_json(pdir / "point_result.json", {**record, "row": row})
    assert main(["export", "--inferencex", str(tmp_path / "run"), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "expected the name of the row file beside the record" in err[0]
    assert not (tmp_path / "out").exists()


def test_a_row_symlinked_out_of_the_tree_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pdir = _point(tmp_path / "run")
    secret = tmp_path / "secret.json"
    secret.write_text((pdir / "bmk_agentic_k_conc4.json").read_text())
    (pdir / "bmk_agentic_k_conc4.json").unlink()
    (pdir / "bmk_agentic_k_conc4.json").symlink_to(secret)
    assert main(["export", "--inferencex", str(tmp_path / "run"), str(tmp_path / "out")]) == 2
    assert "no published row bmk_agentic_k_conc4.json beside it inside" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("body", "message"), [
    ("{\"conc\": 4", "not readable as JSON"),
    ("[1, 2]", "expected a published AgentX row (a JSON object), got a list"),
    ("{\"conc\": 4, \"hw\": \"h200\"}", "not an AgentX row"),
    ("{\"conc\": \"4\", \"hw\": \"h200\", \"scenario_type\": \"agentic-coding\", \"request_metrics\": {}}",
     "not an AgentX row"),
])
def test_a_corrupt_or_foreign_row_is_refused_with_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, message: str) -> None:
    pdir = _point(tmp_path / "run")
    (pdir / "bmk_agentic_k_conc4.json").write_text(body)
    assert main(["export", "--inferencex", str(tmp_path / "run"), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and "bmk_agentic_k_conc4.json" in err[0]


def test_earlier_attempts_are_not_exported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pdir = _point(tmp_path / "run")
    shutil.copytree(pdir, tmp_path / "earlier")
    shutil.move(tmp_path / "earlier", pdir / "attempts" / "20261130T100000Z-aaaaaa")
    write_json(pdir / "status.json", {"config_key": "k", "conc": 4, "state": "completed"})
    assert main(["export", "--inferencex", "--include-unofficial", str(tmp_path / "run"), str(tmp_path / "out")]) == 0
    assert "1 InferenceX row(s)" in capsys.readouterr().out


def test_deployment_logs_are_exported_under_srt_slurm_names_the_apps_ingest_reads() -> None:
    from harness.report.results.export import exported_log_name

    assert exported_log_name("server_prefill_w0.log") == "node0_prefill_w0.out"
    assert exported_log_name("server_decode_w2_n1.log") == "node1_decode_w2.out"
    assert exported_log_name("server_aggregated_w1.log") == "node0_agg_w1.out"
    assert exported_log_name("server.log") == "server.log" and exported_log_name("router.log") == "router.log"


def test_a_failed_point_is_never_an_exported_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A crashed point's record and row stay in the run; no export writes its row, not even an unofficial one."""
    _point(tmp_path / "run")
    failed = _point(tmp_path / "run" / "other")
    record = json.loads((failed / "point_result.json").read_text())
    write_json(failed / "point_result.json", {**record, "state": "failed", "state_reason": "server_crashed: exit 139"})
    assert main(["export", "--inferencex", "--include-unofficial", str(tmp_path / "run"), str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "1 InferenceX row(s)" in out
    assert "left out 1 failed point(s), never exported" in out and "failed: server_crashed: exit 139" in out
    assert [p.name for p in (tmp_path / "out").glob("bmk_agentic_*")] == ["bmk_agentic_k_conc4"]


def test_a_run_whose_points_all_failed_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    crashed = _point(run)
    record = json.loads((crashed / "point_result.json").read_text())
    write_json(crashed / "point_result.json", {**record, "state": "failed", "state_reason": "server_crashed"})
    write_json(run / "k" / "conc8" / "status.json", {"state": "failed", "reason": "server_start_failed: port"})
    write_json(run / "k" / "eval-conc8" / "status.json", {"kind": "eval", "state": "failed", "reason": "lm_eval"})
    assert main(["export", "--inferencex", "--include-unofficial", str(run), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "all 2 points failed:" in err and "server_start_failed: port" in err and "server_crashed" in err
    assert "lm_eval" not in err   # a failed eval is not a point
    assert not (tmp_path / "out").exists()


def test_a_used_or_symlinked_output_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _point(tmp_path / "run")
    args = ["export", "--inferencex", "--include-unofficial", str(tmp_path / "run")]
    assert main([*args, str(tmp_path / "out")]) == 0
    assert main([*args, str(tmp_path / "out")]) == 2   # the earlier export is not mixed with this one
    assert "exists and is not an empty directory" in capsys.readouterr().err
    (tmp_path / "target").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "target")
    assert main([*args, str(tmp_path / "link")]) == 2
    assert "a symlink" in capsys.readouterr().err and not any((tmp_path / "target").iterdir())


def test_no_file_is_written_through_a_symlinked_directory_inside_the_output(tmp_path: Path) -> None:
    from harness.errors import UserError
    from harness.report.results.export import _prepare

    out, target = tmp_path / "out", tmp_path / "target"
    target.mkdir()
    out.mkdir()
    (out / "bmk_agentic_k_conc4").symlink_to(target)
    with pytest.raises(UserError, match="a symlink; export never writes through a symlink"):
        _prepare(out, out / "bmk_agentic_k_conc4" / "bmk_agentic_k_conc4.json")
    (out / "f.json").symlink_to(target / "f.json")
    with pytest.raises(UserError, match="a symlink"):
        _prepare(out, out / "f.json")
    assert not any(target.iterdir())
