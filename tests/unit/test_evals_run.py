"""The eval runner's pure parts: meta_env.json, the gate and the exit status."""

import json
import signal
from pathlib import Path

import pytest

from harness.evals.plan import eval_overrides, eval_task
from harness.evals.row import build_eval_row, extract_metrics
from harness.evals.run import EXIT_BELOW, EXIT_FAILED, EXIT_PASSED, _exit_status, gate, meta_env
from harness.evals.thresholds import Threshold
from harness.recipe.load import load_recipe
from harness.recipe.points import load_plans

ROOT = Path(__file__).resolve().parents[2]
H200 = ROOT / "recipes" / "musespark-fp4-h200-sglang-agentic-dflash.yaml"
FIX = ROOT / "tests" / "fixtures" / "evals"
T90 = Threshold(task="gsm8k", min_score=0.9, source="default")


def _row(score: float | None):
    results = json.loads((FIX / "lm_eval_results_gsm8k.json").read_text())
    meta = json.loads((FIX / "meta_env.json").read_text())
    if score is None:
        return build_eval_row(meta, extract_metrics(results, "gsm8k", "x", {"type": "t", "message": "m"}))
    results["results"]["gsm8k"]["exact_match,strict-match"] = score
    return build_eval_row(meta, extract_metrics(results, "gsm8k", "x"))


@pytest.mark.parametrize("score,passed", [(0.9, True), (0.8999, False), (1.0, True), (0.0, False), (None, None)])
def test_gate(score, passed):
    v = gate(_row(score), T90)
    assert v["passed"] is passed and v["min_score"] == 0.9 and v["threshold_source"] == "default"
    assert v["score"] == score


@pytest.mark.parametrize("state,passed,signum,code", [
    ("completed", True, None, EXIT_PASSED), ("completed", False, None, EXIT_BELOW),
    ("completed", None, None, EXIT_FAILED), ("failed", None, None, EXIT_FAILED),
    ("cancelled", None, signal.SIGTERM, 143), ("cancelled", None, signal.SIGINT, 130),
    ("cancelled", None, None, EXIT_FAILED)])
def test_exit_status(state, passed, signum, code):
    assert _exit_status(state, passed, signum) == code


def test_eval_plan_of_a_speculative_recipe_has_no_synthetic_acceptance():
    task = eval_task(H200, None, "gsm8k", 5, None, ["engine=sim"])
    plan = task.plan
    _, perf = load_plans(H200, None, ["engine=sim"])
    assert plan.conc == max(p.conc for p in perf) == 48          # the highest concurrency
    assert any(k.startswith("SGLANG_SIMULATE_ACC") for k in perf[-1].server.env)
    assert not any(k.startswith("SGLANG_SIMULATE_ACC") for k in plan.server.env)
    assert "--speculative-algorithm" in plan.server.argv and "--sim-eval-answers" in plan.server.argv
    assert task.threshold.min_score == 0.9 and task.overrides[0] == "speculative.mode=eval"
    meta = meta_env(plan, "gsm8k", 5)
    assert (meta["tp"], meta["ep"], meta["conc"], meta["infmax_model_prefix"]) == (8, 8, plan.conc, "musespark")
    assert meta["simulated"] is True and meta["spec_decoding"] == "dflash" and meta["isl"] == 0
    assert meta["hw"] == "sim"                           # a simulated eval's row never claims the H200s
    real = eval_task(H200, None, "gsm8k", 5, None, []).plan
    assert meta_env(real, "gsm8k", 5)["hw"] == "h200" and meta_env(real, "gsm8k", 5)["simulated"] is False


def test_real_engine_gets_no_simulator_answers():
    recipe = load_recipe(H200)
    assert eval_overrides(recipe, "gsm8k", []) == ["speculative.mode=eval"]


def test_eval_options_take_the_server_options_of_the_sweep_and_the_task_of_the_eval(tmp_path):
    from harness.evals.run import options_for, stall_timeout_s
    from harness.point.run import PointOptions

    task = eval_task(H200, None, "gsm8k", 5, None, ["engine=sim"])
    sweep = PointOptions(out_dir=tmp_path, launcher="docker", ready_timeout_s=99.0, mounts=("/a:/b",),
                         gpus=("2", "3"), image_path="/img.sqsh", overrides=("client.duration_s=60",),
                         stall_timeout_s=42.0, tag="t")
    opts = options_for(task, sweep)
    assert (opts.out_dir, opts.launcher, opts.ready_timeout_s, opts.mounts, opts.gpus, opts.image_path) == \
        (tmp_path, "docker", 99.0, ("/a:/b",), ("2", "3"), "/img.sqsh")
    assert opts.overrides == tuple(task.overrides) and "engine=sim" in opts.overrides
    assert (opts.task, opts.limit, opts.threshold) == ("gsm8k", 5, task.threshold)
    assert stall_timeout_s(opts) == 42.0
    unset = options_for(task.model_copy(update={"eval_timeout_s": 1200.0}), PointOptions(out_dir=tmp_path))
    assert stall_timeout_s(unset) == 120.0   # a tenth of the eval's budget (60 to 300 s)


def test_partial_is_a_limit_below_the_test_split(tmp_path):
    from harness.evals.run import EvalOptions, partial

    def opts(limit: int | None) -> EvalOptions:
        return EvalOptions(out_dir=tmp_path, threshold=T90, limit=limit)

    assert [partial(opts(n)) for n in (None, 1, 1318, 1319, 5000)] == [False, True, True, False, False]


def test_a_min_score_the_thresholds_file_overrules_is_named(capsys):
    task = eval_task(H200, None, "gsm8k", 5, 0.95, ["engine=sim"])
    assert (task.threshold.min_score, task.threshold.source) == (0.9, "default")
    assert capsys.readouterr().err == ("note: --min-score 0.95 is not used: default.gsm8k in thresholds.yaml sets "
                                       "0.9 (resolution: the model's entry, then default, then --min-score)\n")


def test_a_deployment_recipe_is_refused_by_eval_and_with_eval_in_one_line(tmp_path, capsys):
    """The eval starts one server; a deployment's workers and router are not one: refused before anything starts
    (`harness eval`, and `sweep`/`submit --with-eval`, which plan their eval through `eval_task`)."""
    from harness.cli import main as cli
    from harness.errors import UserError

    recipe = ROOT / "tests" / "fixtures" / "recipes" / "pd-local-sim.yaml"
    with pytest.raises(UserError, match="deployment: the accuracy eval runs against one server it starts"):
        eval_task(recipe, None, "gsm8k", 2, None, [])
    for argv in (["eval", str(recipe), "--limit", "2", "--out", str(tmp_path)],
                 ["sweep", str(recipe), "--with-eval", "--limit", "2", "--out", str(tmp_path)]):
        assert cli(argv) == 2
        err = capsys.readouterr().err
        assert "deployment: the accuracy eval runs against one server" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "pd-local-sim").exists()
