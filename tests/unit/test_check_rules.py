"""Review rules: each rule on a passing fixture and on a failing variant of it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.check import RULES, RuleResult, check_recipe

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "check"
GOOD = FIXTURES / "good-dflash.yaml"
ALL_POINTS = ["c1", "c5", "c10", "c24", "c28"]


def results(path: Path) -> dict[str, RuleResult]:
    return {r.rule.id: r for r in check_recipe(path).results}


def variant(tmp_path: Path, change: Callable[[dict[str, Any]], None], base: Path = GOOD) -> dict[str, RuleResult]:
    raw = yaml.safe_load(base.read_text())
    change(raw)
    path = tmp_path / "variant.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return results(path)


def evidence(result: RuleResult) -> str:
    return "; ".join(f.evidence for f in result.findings)


def test_every_rule_passes_on_the_good_fixture() -> None:
    got = results(GOOD)
    assert list(got) == [rule.id for rule in RULES]
    # SGLang's own hooks are not here in the unit tier (tests/unit/conftest.py): tests/sglang/ runs them
    # a DFLASH curve: the DSpark rule does not apply
    not_applicable = {"sglang-hooks", "dspark-verify-mode"}
    assert {rid: r.status for rid, r in got.items()} == {rule.id: "N/A" if rule.id in not_applicable else "PASS"
                                                         for rule in RULES}


def test_rules_have_ids_and_one_line_rationales() -> None:
    ids = [rule.id for rule in RULES]
    assert len(set(ids)) == len(ids)
    for rule in RULES:
        assert rule.rationale and "\n" not in rule.rationale


# ----------------------------------------------------------------------------------- upstream image


@pytest.mark.parametrize("image", ["lmsysorg/sglang:v0.5.23-cu130", "docker.io/lmsysorg/sglang:v0.5.23",
                                   "lmsysorg/sglang@sha256:" + "a" * 64])
def test_upstream_image_passes(tmp_path: Path, image: str) -> None:
    assert variant(tmp_path, lambda r: r.update(image=image))["upstream-image"].status == "PASS"


@pytest.mark.parametrize(("image", "words"), [
    ("rocm/sgl-dev:v0.5.23", "not the upstream"),
    ("myregistry.example/lmsysorg/sglang:v0.5.23", "not the upstream"),
    ("lmsysorg/sglang:latest", "not pinned"),
    ("lmsysorg/sglang", "not pinned"),
])
def test_upstream_image_fails(tmp_path: Path, image: str, words: str) -> None:
    got = variant(tmp_path, lambda r: r.update(image=image))["upstream-image"]
    assert got.status == "FAIL" and words in evidence(got) and image in evidence(got)


def test_upstream_image_is_not_applicable_on_the_simulator() -> None:
    quickstart = Path(__file__).resolve().parents[2] / "recipes" / "quickstart-sim.yaml"
    assert results(quickstart)["upstream-image"].status == "N/A"


def test_upstream_image_is_not_applicable_to_a_cpu_smoke_recipe(tmp_path: Path) -> None:
    """A real-SGLang CPU recipe (`hardware.gpu: cpu`) installs SGLang from PyPI; its results are never GPU numbers."""
    got = variant(tmp_path, lambda r: r.update(engine="sglang", image="pypi:sglang==0.5.23",
                                               hardware={**r["hardware"], "gpu": "cpu"}))["upstream-image"]
    assert got.status == "N/A" and "cpu" in evidence(got)
    gpu = variant(tmp_path, lambda r: r.update(engine="sglang", image="pypi:sglang==0.5.23"))["upstream-image"]
    assert gpu.status == "FAIL"


# ------------------------------------------------------------------------------------- forbidden env


def test_forbidden_env_in_base_names_every_point_with_its_inheritance() -> None:
    got = results(FIXTURES / "nvfp4-nextn-moe-in-base.yaml")["forbidden-env"]
    assert got.status == "FAIL"
    assert [f.point for f in got.findings] == ALL_POINTS
    assert [f.evidence for f in got.findings][-1] == \
        "c28 (inherits from c24 ← base): SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1"
    assert got.findings[0].evidence == "c1 (inherits from base): SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1"


def test_forbidden_env_in_one_point_reaches_the_points_extending_it(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: r["points"]["c24"].update(env={"SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE": "0"}))
    finding = got["forbidden-env"]
    assert finding.status == "FAIL"
    assert [f.evidence for f in finding.findings] == [
        "c24: SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0",
        "c28 (inherits from c24): SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=0",
    ]


def test_forbidden_env_written_in_base_and_removed_everywhere_still_fails(tmp_path: Path) -> None:
    def change(raw: dict[str, Any]) -> None:
        raw["server"]["env"]["SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"] = "1"
        for name in ("c1", "c5", "c10", "c24"):
            raw["points"][name] = {**(raw["points"][name] or {}), "env": {"SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE": None}}

    got = variant(tmp_path, change)["forbidden-env"]
    assert got.status == "FAIL"
    assert [f.point for f in got.findings] == [None]
    assert got.findings[0].evidence.startswith("base: SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1 (written in the recipe")


# ------------------------------------------------------------------------------------ forbidden args


def test_forbidden_arg_in_one_point(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: r["points"].update(
        c5={"args": {"json-model-override-args": '{"num_hidden_layers": 40}'}}))
    finding = got["forbidden-args"]
    assert finding.status == "FAIL"
    assert [f.evidence for f in finding.findings] == ['c5: --json-model-override-args={"num_hidden_layers": 40}']


def test_a_flag_the_pinned_sglang_deprecates_is_a_warning(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: r["server"]["args"].update({"disable-cuda-graph": True}))["sglang-flags"]
    assert got.status == "WARN"
    assert evidence(got) == ("c1, c5, c10, c24, c28: --disable-cuda-graph: deprecated in SGLang 0.5.23 (its parser "
                             "warns at startup; a later release removes it)")


def test_forbidden_arg_unknown_to_sglang_fails_instead_of_crashing(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: r["server"]["args"].update({"hf-overrides": '{"a": 1}'}))
    assert got["forbidden-args"].status == "FAIL"
    assert "hf-overrides" in evidence(got["forbidden-args"])
    assert got["sglang-flags"].status == "FAIL"
    assert got["plannable"].status == "FAIL"
    assert got["chat-template"].status == "N/A"


# ------------------------------------------------------------------------------------- draft shipped


def test_draft_quantization_fails_on_every_point(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: r["server"]["args"].update({"speculative-draft-model-quantization": "fp8"}))
    finding = got["draft-as-shipped"]
    assert finding.status == "FAIL"
    assert [f.point for f in finding.findings] == ALL_POINTS
    assert finding.findings[0].evidence == \
        "c1 (inherits from base): --speculative-draft-model-quantization=fp8 (quantizes the draft)"


def test_draft_revision_override_in_a_point_fails(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: r["points"].update(c5={"args": {"speculative-draft-model-revision": "main"}}))
    finding = got["draft-as-shipped"]
    assert finding.status == "FAIL"
    assert "speculative.draft_revision" in evidence(finding)


def test_unpinned_draft_revision_warns(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: r["speculative"].pop("draft_revision"))
    assert got["draft-as-shipped"].status == "WARN"


# ------------------------------------------------------------------------------- golden acceptance


def test_golden_acceptance_reports_the_injected_value() -> None:
    finding = results(GOOD)["golden-acceptance"]
    assert evidence(finding) == ("c1, c5, c10, c24, c28: SGLANG_SIMULATE_ACC_LEN=4.05 "
                                 "(musespark_dflash / muse-spark-open-816b-a42b-nvfp4 / thinking_on / k=7)")


def test_recipe_acceptance_env_fails_with_the_loader_message(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: r["points"]["c10"].update(env={"SGLANG_SIMULATE_ACC_LEN": "5.0"}))
    assert got["golden-acceptance"].status == "FAIL"
    assert "SGLANG_SIMULATE_ACC_LEN" in evidence(got["golden-acceptance"])


def test_speculative_benchmark_without_golden_curve_fails(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: r["speculative"].pop("golden"))
    assert got["golden-acceptance"].status == "FAIL"
    assert "speculative.golden" in evidence(got["golden-acceptance"])


def test_draft_length_missing_from_golden_curve_fails(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: r["speculative"].update(num_draft_tokens=4))
    assert got["golden-acceptance"].status == "FAIL"
    assert got["plannable"].status == "FAIL"
    assert [f.point for f in got["plannable"].findings] == ALL_POINTS


def test_eval_mode_injects_nothing_and_passes(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: r["speculative"].update(mode="eval"))
    assert got["golden-acceptance"].status == "PASS"
    assert "eval" in evidence(got["golden-acceptance"])


# ---------------------------------------------------------------------- chat template, batch limits


def test_speculative_without_chat_template_fails(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: r["model"].pop("chat_template"))
    assert got["chat-template"].status == "FAIL"
    assert evidence(got["chat-template"]).startswith("c1, c5, c10, c24, c28: speculative decoding without")


def test_speculative_without_max_running_requests_fails_on_points_lacking_it(tmp_path: Path) -> None:
    def change(raw: dict[str, Any]) -> None:
        del raw["server"]["args"]["max-running-requests"]
        del raw["server"]["args"]["cuda-graph-max-bs-decode"]

    got = variant(tmp_path, change)["max-running-requests"]
    assert got.status == "FAIL"
    assert evidence(got) == "c5, c24, c28: no --max-running-requests"


def test_max_running_requests_below_the_concurrency_warns_naming_its_origin(tmp_path: Path) -> None:
    def change(raw: dict[str, Any]) -> None:
        raw["points"]["c24"]["args"] = {"max-running-requests": 24, "cuda-graph-max-bs-decode": 24}

    got = variant(tmp_path, change)["max-running-requests"]
    assert got.status == "WARN"
    assert evidence(got) == ("c28 (inherits from c24): --max-running-requests 24 < concurrency 28: sessions beyond "
                             "24 wait in the server's queue")


def test_cuda_graph_batch_above_max_running_requests_fails(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: r["points"]["c10"]["args"].update({"cuda-graph-max-bs-decode": 12}))
    finding = got["cuda-graph-bs"]
    assert finding.status == "FAIL"
    assert evidence(finding) == "c10: --cuda-graph-max-bs-decode 12 > --max-running-requests 10"


def test_cuda_graph_batch_inherited_from_base_names_its_origin(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: r["server"]["args"].update({"cuda-graph-max-bs-decode": 64}))
    finding = got["cuda-graph-bs"]
    assert [f.point for f in finding.findings] == ["c5", "c24", "c28"]
    assert finding.findings[-1].evidence == ("c28 (inherits from c24 ← base): --cuda-graph-max-bs-decode 64 > "
                                             "--max-running-requests 32")


def test_cuda_graph_batch_from_a_zip_names_the_zip(tmp_path: Path) -> None:
    def change(raw: dict[str, Any]) -> None:
        raw["zip"] = {"conc": [2, 3], "args": {"cuda-graph-max-bs-decode": [2, 40]}}
        raw["points"] = {**raw["points"], "c40": {"extends": "c24", "args": {"max-running-requests": 4}}}

    finding = variant(tmp_path, change)["cuda-graph-bs"]
    assert [f.evidence for f in finding.findings] == [
        "c3 (from zip): --cuda-graph-max-bs-decode 40 > --max-running-requests 32 (--max-running-requests from base)",
        ("c40 (inherits from c24 ← base): --cuda-graph-max-bs-decode 32 > --max-running-requests 4 "
        "(--max-running-requests from c40)"),
    ]


# ------------------------------------------------------------------------------ flags, plans, points


def test_unknown_flag_fails_the_flag_rule(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: r["points"].update(c5={"args": {"cuda-graph-max-bs": 8}}))
    assert got["sglang-flags"].status == "FAIL"
    assert "ambiguous" in evidence(got["sglang-flags"])


def test_fewer_than_five_points_warns(tmp_path: Path) -> None:
    got = variant(tmp_path, lambda r: [r["points"].pop(n) for n in ("c1", "c5")])
    assert got["min-points"].status == "WARN"
    assert evidence(got["min-points"]) == ("3 planned points (c10, c24, c28): a pre-run estimate of Check 14, which "
                                           "counts measured frontier points (harness check --results); at least 5 "
                                           "recommended")


def _dp_attention(ranks: int) -> Callable[[dict[str, Any]], None]:
    def change(raw: dict[str, Any]) -> None:
        raw["parallelism"]["dp_attention"] = ranks
        raw["server"]["args"]["enable-dp-lm-head"] = True   # SGLang 0.5.23 needs it for DFLASH with DP attention
        raw["points"] = {"c1": raw["points"]["c1"], "c10": raw["points"]["c10"]}
    return change


def test_cuda_graph_batch_is_held_to_the_max_running_requests_of_one_attention_dp_rank(tmp_path: Path) -> None:
    # SGLang gives each attention-DP rank max(1, max-running-requests // ranks); each rank captures its own graphs
    finding = variant(tmp_path, _dp_attention(2))["cuda-graph-bs"]
    assert finding.status == "FAIL"
    assert evidence(finding) == (
        "c1: --cuda-graph-max-bs-decode 2 > 1 requests on each of 2 attention-DP ranks (the --max-running-requests "
        "2 divided); c10: --cuda-graph-max-bs-decode 10 > 5 requests on each of 2 attention-DP ranks (the "
        "--max-running-requests 10 divided)")


def test_max_running_requests_below_the_concurrency_counts_whole_ranks(tmp_path: Path) -> None:
    def change(raw: dict[str, Any]) -> None:
        _dp_attention(4)(raw)
        raw["points"]["c10"]["args"] = {"max-running-requests": 10, "cuda-graph-max-bs-decode": 2}

    got = variant(tmp_path, change)["max-running-requests"]
    assert got.status == "WARN"
    assert evidence(got) == ("c10: --max-running-requests 10 (2 on each of 4 attention-DP ranks) < concurrency 10: "
                             "sessions beyond 8 wait in the server's queue")
