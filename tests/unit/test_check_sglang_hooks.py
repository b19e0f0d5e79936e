"""The `sglang-hooks` review rule without SGLang: N/A without the wheel, and its findings from a fake judge (what
`tools/sglang_judge.py --argv-json` would answer) or a fake tool process. SGLang itself judges in tests/sglang/."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.check import PlannedPoint, check_recipe, prepare
from harness.check import rules_sglang as rs
from harness.check.rules_sglang import JudgeFailed, SglangHooks, SGLangReply
from harness.recipe.load import load_recipe

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "tests" / "fixtures" / "check" / "good-dflash.yaml"
QUICKSTART = ROOT / "recipes" / "quickstart-sim.yaml"
REFUSAL = "--prefill-decode-interval must be non-negative."
HOOK = "validation_hook.validate_prefill_decode_interval"


def fake_wheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str = "0.5.23") -> Path:
    """An unpacked-wheel layout that `wheel_of` recognises (nothing in it is imported: the judge is a fake)."""
    root = tmp_path / "wheels" / version
    (root / "sglang" / "srt").mkdir(parents=True)
    (root / "sglang" / "srt" / "server_args.py").write_text("")
    monkeypatch.setenv("HARNESS_SGLANG_WHEELS", str(tmp_path / "wheels"))
    return root


class FakeJudge:
    """Answers like the tool: refuses the labels in `refuse`, stops every point at a model-bound hook."""

    def __init__(self, refuse: tuple[str, ...] = ()) -> None:
        self.refuse = refuse
        self.calls: list[tuple[str, Path, list[tuple[str, list[str]]]]] = []

    def __call__(self, version: str, wheel: Path, items: list[tuple[str, list[str]]]) -> list[SGLangReply]:
        self.calls.append((version, wheel, items))
        return [SGLangReply(label, REFUSAL if label in self.refuse else None, HOOK if label in self.refuse else None,
                        None if label in self.refuse else "parallel_hook.handle_context_parallelism")
                for label, _ in items]


def hooks_result(path: Path, rule: SglangHooks) -> tuple[str, list[tuple[str | None, str]]]:
    (result,) = check_recipe(path, (rule,)).results
    return result.status, [(f.point, f.evidence) for f in result.findings]


def test_without_the_wheel_it_is_not_applicable_and_says_how_to_enable_it(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_SGLANG_WHEELS", str(tmp_path))
    judge = FakeJudge()
    status, found = hooks_result(GOOD, SglangHooks(judge))
    assert status == "N/A" and judge.calls == []
    ((point, text),) = found
    assert point is None and "no unpacked SGLang 0.5.23 wheel" in text and "bash tools/sglang-cpu-setup.sh" in text


def test_without_the_tool_it_is_not_applicable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_wheel(tmp_path, monkeypatch)
    monkeypatch.setattr(rs, "TOOL", tmp_path / "absent" / "sglang_judge.py")
    status, ((_, text),) = hooks_result(GOOD, SglangHooks(FakeJudge()))
    assert status == "N/A" and "a harness installed without its repository" in text


def test_the_wheels_are_found_under_the_tier_home_unless_pointed_elsewhere(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_SGLANG_WHEELS")
    monkeypatch.setenv("HARNESS_SGLANG_HOME", str(tmp_path / "home"))
    assert rs.wheels_dir() == tmp_path / "home" / "wheels"
    monkeypatch.setenv("HARNESS_SGLANG_WHEELS", str(tmp_path / "elsewhere"))
    assert rs.wheels_dir() == tmp_path / "elsewhere" and rs.wheel_of("0.5.23") is None
    assert fake_wheel(tmp_path, monkeypatch) == rs.wheel_of("0.5.23")


def test_all_points_go_to_sglang_in_one_call_and_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = fake_wheel(tmp_path, monkeypatch)
    judge = FakeJudge()
    status, found = hooks_result(GOOD, SglangHooks(judge))
    assert status == "PASS"
    assert found == [(None, "SGLang 0.5.23 accepts all 5 points (5 stopped at a hook that reads the model's "
                            "config; the server judges the rest at start-up)")]
    ((version, given_wheel, items),) = judge.calls
    assert (version, given_wheel) == ("0.5.23", wheel)
    assert [label for label, _ in items] == ["c1", "c5", "c10", "c24", "c28"]
    argv = items[0][1]
    assert argv[:2] == ["--model-path", "RadixArk/Muse-Spark-Open-NVFP4"] and "python3" not in argv


def test_each_refused_point_fails_naming_the_point_and_sglangs_rule(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    fake_wheel(tmp_path, monkeypatch)
    status, found = hooks_result(GOOD, SglangHooks(FakeJudge(refuse=("c24", "c28"))))
    assert status == "FAIL"
    assert found == [(p, f"{p}: SGLang 0.5.23 refuses: {REFUSAL} ({HOOK})") for p in ("c24", "c28")]


def test_points_that_do_not_plan_are_left_to_plannable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_wheel(tmp_path, monkeypatch)
    checked, plans = prepare(load_recipe(GOOD), str(GOOD))
    plans[1] = PlannedPoint(point=plans[1].point, args=plans[1].args, error="does not plan")
    judge = FakeJudge()
    rule = SglangHooks(judge)
    assert [f.evidence for f in rule.check(checked, plans)][0].startswith("SGLang 0.5.23 accepts all 4 points")
    assert [label for label, _ in judge.calls[0][2]] == ["c1", "c10", "c24", "c28"]
    unplanned = [PlannedPoint(point=pp.point, args=pp.args, error="no") for pp in plans]
    assert [(f.status, f.evidence) for f in rule.check(checked, unplanned)] == \
        [("N/A", "no point plans (see plannable)")]


def test_a_simulator_recipe_is_judged_on_its_sglang_flags_only(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    fake_wheel(tmp_path, monkeypatch)
    judge = FakeJudge()
    assert hooks_result(QUICKSTART, SglangHooks(judge))[0] == "PASS"
    for _, argv in judge.calls[0][2]:
        assert argv[0] == "--model-path" and "--sim-profile" not in argv and argv[-2:][0] == "--port"


def test_a_judge_that_does_not_answer_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_wheel(tmp_path, monkeypatch)

    def broken(version: str, wheel: Path, items: list[tuple[str, list[str]]]) -> list[SGLangReply]:
        raise JudgeFailed("sglang_judge.py failed (exit 1): ImportError: no module named sglang.srt.foo")

    status, found = hooks_result(GOOD, SglangHooks(broken))
    assert status == "WARN"
    assert found == [(None, "not judged by SGLang: sglang_judge.py failed (exit 1): ImportError: no module named "
                            "sglang.srt.foo")]


def fake_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    tool = tmp_path / "fake_sglang_judge.py"
    tool.write_text(f"import json, sys, time\n{body}\n")
    monkeypatch.setattr(rs, "TOOL", tool)


def test_the_tool_runs_under_the_harness_interpreter_and_its_lines_are_read(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    fake_tool(tmp_path, monkeypatch, f"assert sys.executable == {sys.executable!r}, sys.executable" + """
assert sys.argv[1:] == ["0.5.23", "--wheel-dir", "W", "--argv-json", "-"], sys.argv
for item in json.load(sys.stdin):
    print(json.dumps({"label": item["label"], "sglang": "no" if "--bad" in item["argv"] else None,
                      "sglang_rule": "argparse" if "--bad" in item["argv"] else None, "needs_model": None}))
""")
    got = rs.run_judge("0.5.23", Path("W"), [("c1", ["--tp-size", "4"]), ("c2", ["--bad"])])
    assert got == [SGLangReply("c1", None, None, None), SGLangReply("c2", "no", "argparse", None)]


@pytest.mark.parametrize(("body", "words"), [
    ("print('stand-ins: torch', file=sys.stderr); raise SystemExit('ModuleNotFoundError: sglang.srt.x')",
     "fake_sglang_judge.py failed (exit 1): ModuleNotFoundError: sglang.srt.x"),
    ("print('{not json')", "fake_sglang_judge.py gave unreadable output"),
    ("print(json.dumps({'label': 'c1', 'sglang': None, 'sglang_rule': None, 'needs_model': None}))",
     "fake_sglang_judge.py judged 1 of 2 points"),
])
def test_a_crashed_tool_names_its_last_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str,
                                             words: str) -> None:
    fake_tool(tmp_path, monkeypatch, body)
    with pytest.raises(JudgeFailed) as err:
        rs.run_judge("0.5.23", tmp_path, [("c1", []), ("c2", [])])
    assert str(err.value).startswith(words)


def test_a_tool_that_hangs_is_given_up_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_tool(tmp_path, monkeypatch, "time.sleep(30)")
    monkeypatch.setattr(rs, "TIMEOUT_S", 0.5)
    with pytest.raises(JudgeFailed, match=r"did not answer within 0.5 s"):
        rs.run_judge("0.5.23", tmp_path, [("c1", [])])


def test_a_deployment_is_judged_role_by_role_not_on_its_router(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    fake_wheel(tmp_path, monkeypatch)
    judge = FakeJudge(refuse=("c16.decode",))
    status, found = hooks_result(ROOT / "recipes" / "examples" / "disagg-gb300-1p1d-tp4-tp4-sim.yaml",
                                 SglangHooks(judge))
    items = judge.calls[0][2]
    assert [label for label, _ in items] == ["c4.prefill", "c4.decode", "c16.prefill", "c16.decode"]
    prefill, decode = items[0][1], items[1][1]
    assert prefill[:2] == ["--model-path", "demo/agentic-coder-8b"] and "sglang_router" not in " ".join(prefill)
    assert prefill[prefill.index("--disaggregation-mode") + 1] == "prefill"
    assert decode[decode.index("--disaggregation-mode") + 1] == "decode" and "--sim-profile" not in decode
    assert (status, found) == ("FAIL", [("c16.decode", f"c16.decode: SGLang 0.5.23 refuses: {REFUSAL} ({HOOK})")])
