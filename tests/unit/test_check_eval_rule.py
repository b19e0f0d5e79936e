"""The `accuracy-eval` rule of `harness check --results` and the report's eval gates."""

import json
from pathlib import Path

import pytest

from harness.check import RULES, check_recipe
from harness.check.rules_eval import WAIVER_FILE, AccuracyEval
from harness.cli import main as cli_main
from harness.report.results.evals import eval_line, newest_evals

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "recipes" / "quickstart-sim.yaml"


def write_eval(runs: Path, conc: int, ended_ns: int, *, score: float | None, passed: bool | None,
               state: str = "completed", key: str = "quickstart-sim", limit: int | None = None) -> Path:
    d = runs / key / f"eval-conc{conc}"
    d.mkdir(parents=True)
    result = {"config_key": key, "conc": conc, "task": "gsm8k", "state": state,
              "state_reason": None if state == "completed" else "server_exited: status 1 during the run",
              "score": score, "score_name": None if score is None else "em_strict", "score_se": 0.01,
              "n_eff": 1319, "min_score": 0.9, "threshold_source": "default", "passed": passed, "simulated": True,
              "limit": limit, "partial": limit is not None and limit < 1319}
    (d / "eval_result.json").write_text(json.dumps(result))
    (d / "status.json").write_text(json.dumps({"state": state, "ended_ns": ended_ns}))
    return d


def accuracy(runs: Path, waiver: str | None = None):
    report = check_recipe(QUICKSTART, (*RULES, AccuracyEval([runs], waiver)))
    return report.results[-1]


def test_missing_eval_fails(tmp_path):
    r = accuracy(tmp_path)
    assert r.status == "FAIL" and "MISSING" in r.findings[0].evidence


def test_newest_eval_decides(tmp_path):
    write_eval(tmp_path, 4, 100, score=0.95, passed=True)
    write_eval(tmp_path, 8, 200, score=0.80, passed=False)
    assert newest_evals([tmp_path])["quickstart-sim"].conc == 8
    r = accuracy(tmp_path)
    assert r.status == "FAIL" and "FAIL at c8 gsm8k em_strict 0.8000" in r.findings[0].evidence


def test_passing_eval_passes(tmp_path):
    write_eval(tmp_path, 8, 100, score=0.80, passed=False)
    write_eval(tmp_path, 4, 200, score=0.9788, passed=True)
    r = accuracy(tmp_path)
    assert r.status == "PASS"
    assert r.findings[0].evidence.startswith("PASS at c4 gsm8k em_strict 0.9788 ± 0.0100, n=1319; threshold 0.90")


def test_failed_eval_fails_and_a_waiver_is_a_recorded_warning(tmp_path):
    write_eval(tmp_path, 8, 100, score=None, passed=None, state="failed")
    assert accuracy(tmp_path).status == "FAIL"
    r = accuracy(tmp_path, "known flaky node, rerun scheduled")
    assert r.status == "WARN" and "waived (--waive-eval: known flaky node, rerun scheduled): FAILED" in \
        r.findings[0].evidence
    waiver = json.loads((tmp_path / "quickstart-sim" / WAIVER_FILE).read_text())
    assert waiver["reason"] == "known flaky node, rerun scheduled" and waiver["config_key"] == "quickstart-sim"
    assert waiver["eval_result"].endswith("eval-conc8/eval_result.json")


def test_eval_line_without_eval():
    assert eval_line(None).startswith("accuracy eval: MISSING")


def test_cli(tmp_path, capsys):
    write_eval(tmp_path, 8, 100, score=0.5, passed=False)
    assert cli_main(["check", str(QUICKSTART), "--results", str(tmp_path)]) == 1
    assert "FAIL accuracy-eval" in capsys.readouterr().out
    assert cli_main(["check", str(QUICKSTART), "--results", str(tmp_path), "--waive-eval", "demo"]) == 0
    assert cli_main(["check", str(QUICKSTART), "--waive-eval", "demo"]) == 2
    assert cli_main(["check", str(QUICKSTART), "--results", str(tmp_path / "nope")]) == 2
    capsys.readouterr()
    assert cli_main(["check", str(QUICKSTART)]) == 0          # without --results the rule does not run
    assert "accuracy-eval" not in capsys.readouterr().out


@pytest.mark.parametrize("passed,gate", [(True, "PASS"), (False, "FAIL"), (None, "FAILED")])
def test_gate_words(tmp_path, passed, gate):
    write_eval(tmp_path, 8, 1, score=None if passed is None else 0.5, passed=passed,
               state="completed" if passed is not None else "failed")
    assert newest_evals([tmp_path])["quickstart-sim"].gate == gate


def test_a_partial_eval_is_shown_as_such_and_does_not_accept_a_curve(tmp_path):
    write_eval(tmp_path, 8, 1, score=1.0, passed=True, limit=10)
    assert newest_evals([tmp_path])["quickstart-sim"].gate == "PARTIAL"  # the report judges as check does
    line = eval_line(newest_evals([tmp_path])["quickstart-sim"])
    assert "[partial: --limit 10]" in line
    r = accuracy(tmp_path)
    assert r.status == "FAIL" and r.findings[0].evidence.startswith(
        "not accepted: a partial eval (PARTIAL at c8 gsm8k em_strict 1.0000")
    assert accuracy(tmp_path, "smoke run only on this branch").status == "WARN"


def test_an_older_result_without_partial_is_judged_from_its_limit(tmp_path):
    d = write_eval(tmp_path, 8, 1, score=1.0, passed=True, limit=10)
    result = json.loads((d / "eval_result.json").read_text())
    del result["partial"]
    (d / "eval_result.json").write_text(json.dumps(result))
    assert newest_evals([tmp_path])["quickstart-sim"].partial is True and accuracy(tmp_path).status == "FAIL"


def test_a_limit_beyond_the_split_is_the_whole_split(tmp_path):
    write_eval(tmp_path, 8, 1, score=1.0, passed=True, limit=5000)
    assert "partial" not in eval_line(newest_evals([tmp_path])["quickstart-sim"])
    assert accuracy(tmp_path).status == "PASS"
